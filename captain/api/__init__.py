"""The REST API's wiring: the URL table of every captain domain's API (`urls`) and the mapping of domain
errors to 400 responses (`errors`). Each domain keeps its views and serializers in its own `api`."""
