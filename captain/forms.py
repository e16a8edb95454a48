"""The admin forms of captain. They show what a builder may write; the rules themselves (template sandbox,
tool allowlist, scenario keys, endpoint/model choices) belong to the write services in `captain.services`, which
these forms call in `clean()` to show the same messages the API answers with.
"""

from __future__ import annotations
