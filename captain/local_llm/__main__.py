"""CLI: ``python -m captain.local_llm serve [--port 8081] [--model 0.5b|1.5b]`` or ``... assemble``.

``serve`` assembles the model if needed, then serves until SIGTERM/SIGINT. It prints one
machine-readable line (``CAPTAIN_LOCAL_LLM_READY http://127.0.0.1:PORT``, read by
``start_local_llm``) and a human-readable base URL; llama.cpp logs go to stderr.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path

from captain.local_llm.assemble import (
    DEFAULT_MODEL,
    MODELS,
    ModelIntegrityError,
    ModelPackagesMissingError,
    ensure_model,
)
from captain.local_llm.server import READY_PREFIX, LocalLLMServer, config_for_model, watch_parent


def _progress(done: int, total: int) -> None:
    # Print roughly every 10% so a first-time assembly (a few seconds) is not silent.
    step = max(total // 10, 1)
    if done == total or done // step != (done - 8 * 1024 * 1024) // step:
        print(f"assembling: {done * 100 // total}%", file=sys.stderr, flush=True)


def _cmd_assemble(args: argparse.Namespace) -> int:
    start = time.monotonic()
    path = ensure_model(args.model, model_dir=args.model_dir, force=args.force, progress=_progress)
    print(f"{path} verified ({time.monotonic() - start:.1f}s)")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    overrides: dict[str, int] = {"port": args.port, "n_ctx": args.n_ctx, "n_parallel": args.n_parallel}
    if args.threads:
        overrides["n_threads"] = args.threads
    config = config_for_model(args.model, model_dir=args.model_dir, **overrides)

    stop = threading.Event()
    # Handlers only set a flag; the main thread does the teardown outside signal context.
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.exit_with_parent:
        watch_parent(sys.stdin.buffer, stop)

    server = LocalLLMServer(config).start()
    print(f"{READY_PREFIX}{server.address}", flush=True)
    print(f"serving {config.alias} at base_url={server.base_url} (model={config.alias!r})", flush=True)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        server.stop()
        print("stopped", file=sys.stderr, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m captain.local_llm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def add_common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL)
        p.add_argument(
            "--model-dir",
            type=Path,
            default=None,
            help="cache dir (default $CAPTAIN_MODEL_DIR or var/models)",
        )

    p_asm = sub.add_parser("assemble", help="assemble and verify the GGUF only")
    add_common(p_asm)
    p_asm.add_argument("--force", action="store_true", help="re-assemble and re-hash even if verified")
    p_asm.set_defaults(func=_cmd_assemble)

    p_srv = sub.add_parser("serve", help="serve the OpenAI-compatible API until SIGTERM/SIGINT")
    add_common(p_srv)
    p_srv.add_argument("--port", type=int, default=8081, help="0 = pick a free port")
    p_srv.add_argument("--n-ctx", type=int, default=8192)
    p_srv.add_argument("--n-parallel", type=int, default=2)
    p_srv.add_argument("--threads", type=int, default=0, help="0 = min(cpu count, 4)")
    p_srv.add_argument(
        "--exit-with-parent",
        action="store_true",
        help="stop when stdin reaches end of file (the process that started us and holds its other end exited)",
    )
    p_srv.set_defaults(func=_cmd_serve)

    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ModelIntegrityError, ModelPackagesMissingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
