"""`python -m bench.routing [options]`: the routing benchmark (bench/routing/cli.py; `--help` for the options).

Django is set up first, as manage.py does it, so every model import of the harness comes after it."""

from bench.cli import setup_django

if __name__ == "__main__":
    setup_django()
    from bench.routing.cli import main

    raise SystemExit(main())
