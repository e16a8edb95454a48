"""Environment defaults for the test run, loaded as a pytest plugin (`-p` in pyproject.toml's addopts).

Settings are read from the environment when pytest-django imports them, before any conftest.py runs, so these
must be in `os.environ` by then; being there, they also reach every process a test starts (Celery workers,
`manage.py` subprocesses), which copy `os.environ`.

DEBUG stays off, as in production, so the suite runs on the production settings except HTTPS: the test client
and the live server speak plain HTTP on 127.0.0.1. Any of them already set in the environment wins.
"""

from __future__ import annotations

import os

TEST_ENVIRONMENT = {
    # Test-only, published here on purpose; long and varied enough for config.E001.
    "DJANGO_SECRET_KEY": "test-only-secret-key-7Hq2Lm9Zr4Xv8Nc1Bw6Ty3Pk5Js0Dg-never-in-production",
    "DJANGO_SECURE_SSL_REDIRECT": "0",
    "DJANGO_SECURE_COOKIES": "0",
    "DJANGO_SECURE_HSTS_SECONDS": "0",
    # A starting worker would send its prompt warm-up to the scripted model, taking a step scripted for a reply
    # (tests/captain/answering/test_warmup.py turns it on where it is the subject).
    "CAPTAIN_PROMPT_WARM_ASSISTANTS": "0",
}

for name, value in TEST_ENVIRONMENT.items():
    os.environ.setdefault(name, value)
