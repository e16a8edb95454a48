"""Actions benchmark: multi-step shop tasks (lookups, confirmed changes, impossible requests) played through the
real run path against a fake shop API, to compare the plain tool loop with planning mode (native tool calls and
the text tool protocol). `python -m bench.actions` (`cli`)."""
