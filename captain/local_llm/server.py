"""Run llama.cpp's OpenAI-compatible server (via xllamacpp) on a bundled, verified model.

Two ways to run it:

* ``LocalLLMServer`` — in-process. ``xllamacpp.Server(params)`` loads the model, starts the
  HTTP server and returns once it listens; dropping the last reference stops it (measured:
  ~50 ms, port closed afterwards). Used by ``python -m captain.local_llm serve``.
* ``start_local_llm()`` — the same thing in a child process (by default), so a test or a
  benchmark can stop it by PID even if llama.cpp misbehaves, and a native crash cannot take the
  caller (e.g. a Django test run) down with it.

Only loopback hosts are allowed: this server has no API key and CORS allows all origins.

Measured limits of this llama.cpp build with the 0.5B model (callers should plan around them):
* ``tool_choice`` as an object (a named function) is rejected with a warning and treated as
  "auto". To force one tool, offer only that tool with ``tool_choice="required"``.
* ``tool_choice="required"`` forbids ending without a call but still lets free text precede it,
  so the model sometimes rambles to ``max_tokens`` with no call (6/10 calls on a mixed set).
* ``response_format`` json_schema is enforced by grammar: enum answers are always in the enum.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO, Self

from captain.local_llm.assemble import DEFAULT_MODEL, ensure_model, get_spec

__all__ = [
    "CHAT_TEMPLATE_PATH",
    "LocalLLMHandle",
    "LocalLLMServer",
    "ServerConfig",
    "build_params",
    "config_for_model",
    "start_local_llm",
    "wait_until_ready",
]

CHAT_TEMPLATE_PATH = Path(__file__).with_name("qwen2_5_tools.jinja")
_REPO_ROOT = Path(__file__).resolve().parents[2]
# The child prints exactly one line with this prefix on stdout once it is listening.
READY_PREFIX = "CAPTAIN_LOCAL_LLM_READY "
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _default_threads() -> int:
    # llama.cpp generation is memory-bound; more threads than cores only adds contention.
    return max(1, min(os.cpu_count() or 2, 4))


@dataclass
class ServerConfig:
    """Everything needed to build ``xllamacpp.CommonParams``."""

    model_path: Path
    alias: str
    port: int = 8081  # 0 = let the OS pick; read the real one from ``base_url``.
    host: str = "127.0.0.1"
    # Total context, split evenly between the n_parallel slots (8192 / 2 = 4096 tokens each).
    n_ctx: int = 8192
    # Two slots: concurrent requests are batched instead of queued. Decoding on CPU is
    # memory-bound, so a batch of 2 costs little more than 1.
    n_parallel: int = 2
    n_threads: int = field(default_factory=_default_threads)
    # Default cap on generated tokens when a request sets no max_tokens: a 0.5B model can loop.
    n_predict: int = 1024
    # llama.cpp's prompt cache defaults to 8 GiB of RAM; a helpdesk box has other work to do.
    cache_ram_mib: int = 1024
    chat_template: str | None = None  # None = the bundled tool-calling template.
    verbosity: int = 1  # 3 is llama.cpp's chatty default; 1 keeps warnings and errors.

    def __post_init__(self) -> None:
        if self.host not in _LOOPBACK:
            raise ValueError(f"refusing to bind {self.host!r}: the local LLM server has no auth")


def config_for_model(
    model: str = DEFAULT_MODEL, *, model_dir: Path | None = None, **overrides: Any
) -> ServerConfig:
    """Assemble/verify ``model`` (``"0.5b"`` or ``"1.5b"``) and return a config serving it."""
    spec = get_spec(model)
    path = ensure_model(spec, model_dir=model_dir)
    return ServerConfig(model_path=path, alias=spec.alias, **overrides)


def build_params(config: ServerConfig) -> Any:
    """Translate a ServerConfig into ``xllamacpp.CommonParams`` (imported lazily: heavy .so)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(config.model_path)
    params.port = config.port
    params.hostnames = [config.host]
    params.n_ctx = config.n_ctx
    params.n_parallel = config.n_parallel
    params.n_predict = config.n_predict
    params.cpuparams.n_threads = config.n_threads
    params.cpuparams_batch.n_threads = config.n_threads
    params.use_jinja = True  # required for the template's tool section and tool-call parsing
    params.offline = True  # never try to reach a model hub
    params.model_alias = {config.alias}  # a set in this xllamacpp version
    params.chat_template = (
        config.chat_template if config.chat_template is not None else CHAT_TEMPLATE_PATH.read_text()
    )
    params.cache_ram_mib = config.cache_ram_mib
    params.ui = False  # no web UI on a headless helper
    params.verbosity = config.verbosity
    return params


class LocalLLMServer:
    """In-process llama.cpp server. ``start()`` blocks until the model is loaded and listening."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self._server: Any = None
        self._lock = threading.Lock()

    def start(self) -> Self:
        import xllamacpp

        with self._lock:
            if self._server is None:
                self._server = xllamacpp.Server(build_params(self.config))
        return self

    @property
    def address(self) -> str:
        """``http://127.0.0.1:PORT`` (real port, also when configured with port 0)."""
        if self._server is None:
            raise RuntimeError("server not started")
        return str(self._server.listening_address)

    @property
    def base_url(self) -> str:
        """OpenAI SDK base URL (``.../v1``)."""
        return self.address + "/v1"

    def stop(self) -> None:
        # xllamacpp stops the HTTP loop and frees the model in the Server destructor, so
        # dropping our (only) reference is the stop call.
        with self._lock:
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def watch_parent(pipe: BinaryIO, stop: threading.Event) -> threading.Thread:
    """Set `stop` once `pipe` (the parent's end of our stdin, never written to) reaches end of file: the parent
    exited, however it died. A parent killed without stopping its server would otherwise leave a model server
    holding two cores and gigabytes of memory."""

    def wait() -> None:
        while pipe.read(4096):
            pass
        stop.set()

    thread = threading.Thread(target=wait, name="local-llm-parent-watch", daemon=True)
    thread.start()
    return thread


def wait_until_ready(address: str, *, timeout: float = 120.0) -> None:
    """Poll ``GET {address}/v1/models`` until it answers 200 (or raise TimeoutError)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(address + "/v1/models", timeout=5) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError) as exc:  # not listening yet / still loading (503)
            last = exc
        time.sleep(0.1)
    raise TimeoutError(f"local LLM at {address} not ready after {timeout}s: {last}")


class LocalLLMHandle:
    """A running local LLM: ``base_url`` for the OpenAI SDK, ``model`` for the request, ``stop()``."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        process: subprocess.Popen[str] | None = None,
        server: LocalLLMServer | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.log_path = log_path
        self._process = process
        self._server = server

    @property
    def pid(self) -> int | None:
        """PID of the child process, or None when running in-process."""
        return self._process.pid if self._process is not None else None

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the server; idempotent. SIGTERM by PID, then SIGKILL if it does not exit in time."""
        if self._server is not None:
            self._server.stop()
            self._server = None
        proc, self._process = self._process, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()  # its parent watch sees end of file too
        if proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalLLMHandle(base_url={self.base_url!r}, model={self.model!r}, pid={self.pid})"


def _read_ready_line(proc: subprocess.Popen[str], stdout: IO[str], timeout: float) -> str:
    """Wait for the child's READY line on stdout, in a thread so the timeout also covers a hang."""
    found: list[str] = []

    def reader() -> None:
        for line in stdout:
            if line.startswith(READY_PREFIX):
                found.append(line[len(READY_PREFIX) :].strip())
                return

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    thread.join(timeout)
    if not found:
        raise RuntimeError(
            "local LLM server did not come up "
            + (f"(exit code {proc.returncode})" if proc.poll() is not None else f"within {timeout}s")
        )
    return found[0]


def start_local_llm(
    port: int = 0,
    *,
    model: str = DEFAULT_MODEL,
    model_dir: Path | None = None,
    n_ctx: int = 8192,
    n_parallel: int = 2,
    n_threads: int | None = None,
    in_process: bool = False,
    timeout: float = 180.0,
    log_path: Path | None = None,
) -> LocalLLMHandle:
    """Assemble (if needed) and start the local LLM; return once ``/v1/models`` answers.

    ``port=0`` picks a free loopback port. By default the server runs in a child process
    (``python -m captain.local_llm serve``) whose stderr (llama.cpp's log) goes to ``log_path``
    (a temp file if None). ``in_process=True`` runs it inside this process instead.
    Raises ModelIntegrityError / ModelPackagesMissingError before starting anything.
    """
    spec = get_spec(model)
    # Assemble here, not in the child, so integrity/package errors surface as exceptions.
    ensure_model(spec, model_dir=model_dir)
    threads = n_threads if n_threads is not None else _default_threads()

    if in_process:
        config = config_for_model(
            model, model_dir=model_dir, port=port, n_ctx=n_ctx, n_parallel=n_parallel, n_threads=threads
        )
        server = LocalLLMServer(config).start()
        wait_until_ready(server.address, timeout=timeout)
        return LocalLLMHandle(base_url=server.base_url, model=spec.alias, server=server)

    if log_path is None:
        fd, name = tempfile.mkstemp(prefix="captain-local-llm-", suffix=".log")
        os.close(fd)
        log_path = Path(name)
    cmd = [
        sys.executable,
        "-m",
        "captain.local_llm",
        "serve",
        "--port",
        str(port),
        "--model",
        model,
        "--n-ctx",
        str(n_ctx),
        "--n-parallel",
        str(n_parallel),
        "--threads",
        str(threads),
        # Our end of its stdin closes when this process exits, however it dies: the server stops with it.
        "--exit-with-parent",
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    if model_dir is not None:
        env["CAPTAIN_MODEL_DIR"] = str(model_dir)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=_REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    handle = LocalLLMHandle(base_url="", model=spec.alias, process=proc, log_path=log_path)
    try:
        assert proc.stdout is not None
        address = _read_ready_line(proc, proc.stdout, timeout)
        wait_until_ready(address, timeout=timeout)
    except BaseException:
        handle.stop()
        raise
    handle.base_url = address + "/v1"
    return handle
