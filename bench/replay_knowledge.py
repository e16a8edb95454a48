"""`python -m bench.replay_knowledge --json F`: a saved knowledge benchmark run's replies through today's grounding
check, without a model (bench/knowledge/replay.py; `--help` for the options).

Django is set up first, as manage.py does it, so every model import comes after it."""

from bench.cli import setup_django

if __name__ == "__main__":
    setup_django()
    from bench.knowledge.replay import main

    raise SystemExit(main())
