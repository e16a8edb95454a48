import pytest
from django.db import connection


@pytest.fixture(autouse=True)
def _postgres_only(request):
    if request.node.get_closest_marker("postgres") and connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: scripts/test runs these with a throwaway PostgreSQL server")
