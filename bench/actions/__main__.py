"""`python -m bench.actions [options]`: the actions benchmark (bench/actions/cli.py; `--help` for the options).

Django is set up first, as manage.py does it, so every model import of the harness comes after it."""

from bench.cli import setup_django

if __name__ == "__main__":
    setup_django()
    from bench.actions.cli import main

    raise SystemExit(main())
