"""The frozen PDF: byte-stable, committed with its hash, readable, and free of actions."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

from pairbench.studies.webmcp_vs_pdf import (
    METHODS_PATH,
    PDF_PATH,
    PDF_SHA256,
    PDF_WRITER_VERSION,
    build_pdf,
    load_dataset,
)

_PINNED = f"reportlab {version('reportlab')} is installed; the committed PDF needs " + (
    f"{PDF_WRITER_VERSION}"
)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_writer_version_is_the_pinned_one() -> None:
    assert version("reportlab") == PDF_WRITER_VERSION, _PINNED


def test_committed_pdf_has_the_recorded_hash() -> None:
    assert _sha(PDF_PATH) == PDF_SHA256


def test_fresh_build_elsewhere_reproduces_the_committed_bytes(tmp_path: Path) -> None:
    # Another time zone, locale, working directory and an inherited SOURCE_DATE_EPOCH
    # must not reach the bytes.
    env = {
        **os.environ,
        "TZ": "Pacific/Kiritimati",
        "LC_ALL": "C",
        "LANG": "C",
        "SOURCE_DATE_EPOCH": "86400",
        "PYTHONHASHSEED": "12345",
    }
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "pairbench.studies.webmcp_vs_pdf._pdf", "rebuilt.pdf"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stderr == ""
    assert done.stdout.strip() == PDF_SHA256 == _sha(cwd / "rebuilt.pdf"), _PINNED


def test_in_process_build_matches_and_restores_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "7")
    assert build_pdf(tmp_path / "a.pdf") == PDF_SHA256
    assert os.environ["SOURCE_DATE_EPOCH"] == "7"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert build_pdf(tmp_path / "b.pdf") == PDF_SHA256
    assert "SOURCE_DATE_EPOCH" not in os.environ


def test_cli_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pairbench.studies.webmcp_vs_pdf._pdf"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "usage" in done.stderr


def _text() -> str:
    return "\n".join(page.extract_text() for page in PdfReader(PDF_PATH).pages)


def test_pdf_carries_every_record_with_yi_and_vi_in_order() -> None:
    lines = [line.strip() for line in _text().splitlines()]
    records = load_dataset()
    assert len(records) == 19
    for r in records:
        start = lines.index(r.record)
        row = lines[start : start + 10]
        assert row[1] == r.author and row[-2:] == [r.yi_text, r.vi_text], row


def _methods_blocks() -> list[str]:
    """methods.md as paragraphs, headings and bullets, markup removed, whitespace normalized."""
    blocks: list[str] = []
    for chunk in METHODS_PATH.read_text(encoding="utf-8").split("\n\n"):
        for i, item in enumerate(chunk.strip().split("\n- ")):
            text = item.removeprefix("- ") if i == 0 else item
            blocks.append(" ".join(text.replace("`", "").lstrip("# ").split()))
    return [block for block in blocks if block]


def test_pdf_carries_the_methods_text() -> None:
    text = " ".join(_text().split())
    blocks = _methods_blocks()
    assert len(blocks) > 15
    for block in blocks:
        assert block in text, block
    assert "registered variant: classic" in text


_FORBIDDEN = {
    "/JS",
    "/JavaScript",
    "/OpenAction",
    "/AA",
    "/Launch",
    "/URI",
    "/SubmitForm",
    "/EmbeddedFile",
    "/EmbeddedFiles",
    "/AcroForm",
    "/Annots",
    "/RichMedia",
}


def _walk(obj: Any, seen: set[int], found: set[str]) -> None:
    if isinstance(obj, IndirectObject):
        if obj.idnum in seen:
            return
        seen.add(obj.idnum)
        obj = obj.get_object()
    if isinstance(obj, DictionaryObject):
        found.update(key for key in obj if key in _FORBIDDEN)
        for value in obj.values():
            _walk(value, seen, found)
    elif isinstance(obj, ArrayObject):
        for value in obj:
            _walk(value, seen, found)


def test_pdf_has_no_javascript_actions_or_embedded_fonts() -> None:
    reader = PdfReader(PDF_PATH)
    found: set[str] = set()
    _walk(reader.trailer, set(), found)
    assert found == set()
    raw = PDF_PATH.read_bytes()
    assert b"/JavaScript" not in raw and b"/FontFile" not in raw and b"/Filter" not in raw
    fonts: set[str] = set()
    for page in reader.pages:
        resources = page["/Resources"].get_object()
        assert isinstance(resources, DictionaryObject)
        font_dict = resources["/Font"].get_object()
        assert isinstance(font_dict, DictionaryObject)
        fonts.update(str(font.get_object()["/BaseFont"]) for font in font_dict.values())
    assert fonts <= {"/Helvetica", "/Helvetica-Bold", "/Courier"}
    assert reader.metadata is not None
    assert str(reader.metadata["/CreationDate"]) == "D:20260904000000+00'00'"
    assert str(reader.metadata["/ModDate"]) == "D:20260904000000+00'00'"
