"""The study folder: the protocol keeps the common prompt verbatim and records our PDF hash
and the scoring rules; the data file is the shared one; the public names are deliberate."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pairbench.studies.webmcp_vs_pdf as study
from helpers.common import skip_outside_ci
from pairbench.studies.webmcp_vs_pdf import DATASET_PATH, PDF_SHA256, STUDY_ROOT

PROTOCOL = STUDY_ROOT / "protocol.md"
# sha256 of the common prompt in shared/protocols/webmcp-vs-pdf.md (text inside the fence).
PROMPT_SHA256 = "9a2ee75bb6c21dd7f42992b7198bb10ea5241b8fc9fb2a170ef833d195e79c49"
_SHARED = Path(__file__).resolve().parents[4] / "shared"


def _prompt(markdown: str) -> str:
    found = re.search(r"## Common prompt\n.*?```text\n(.*?)\n```", markdown, re.DOTALL)
    assert found, "no common prompt block"
    return found.group(1)


def test_common_prompt_is_verbatim() -> None:
    prompt = _prompt(PROTOCOL.read_text(encoding="utf-8"))
    assert hashlib.sha256(prompt.encode()).hexdigest() == PROMPT_SHA256
    assert 'excluded: ["s04"]' in prompt


def test_common_prompt_equals_the_shared_protocol_when_present() -> None:
    shared = _SHARED / "protocols" / "webmcp-vs-pdf.md"
    if not shared.exists():
        skip_outside_ci(f"no shared protocol at {shared}; the pinned hash still checks the prompt")
    assert _prompt(PROTOCOL.read_text(encoding="utf-8")) == _prompt(shared.read_text("utf-8"))


def test_dataset_is_the_shared_file_when_present() -> None:
    shared = _SHARED / "data" / "raudenbush1985.csv"
    if not shared.exists():
        skip_outside_ci(f"no shared dataset at {shared}")
    assert DATASET_PATH.read_bytes() == shared.read_bytes()


def test_protocol_records_our_pdf_hash_and_the_preregistered_rules() -> None:
    text = PROTOCOL.read_text(encoding="utf-8")
    assert f"PDF SHA-256: `{PDF_SHA256}`" in text
    assert "9ef53847f62ab86adb322876c21a7a0b008baa19f2425f32004819ccfa82eb49" not in text
    flat = " ".join(text.split())
    for rule in (
        "that single fence is stripped before parsing",
        "a non-finite number never equals anything, so that field counts as wrong",
        "is a parse failure, not a zero score",
        "absolute tolerance 0.0005 and the Egger p value 0.000005",
        "the registered variant is the **classic** weighted regression",
    ):
        assert rule in flat, rule


def test_study_files_exist() -> None:
    names = {p.name for p in STUDY_ROOT.iterdir()}
    assert {"protocol.md", "methods.md", "benchmark-baseline.pdf", "data"} <= names


def test_public_names_change_only_deliberately() -> None:
    assert study.__all__ == [
        "BASELINE_VERSION",
        "DATASET_PATH",
        "EGGER_TOLERANCE",
        "EXCLUDED_RECORD",
        "META_TOLERANCE",
        "METHODS_PATH",
        "PDF_PATH",
        "PDF_SHA256",
        "PDF_WRITER_VERSION",
        "STUDY",
        "STUDY_ROOT",
        "TOTAL_FIELDS",
        "EggerTest",
        "EggerVariant",
        "FieldScore",
        "RandomEffectsFit",
        "Record",
        "RuleOutcome",
        "Score",
        "WebMcpVsPdfScriptedAgent",
        "build_page",
        "build_pdf",
        "egger_test",
        "fit_dataset",
        "fit_random_effects",
        "grade_webmcp_answer",
        "load_dataset",
        "parse_answer",
        "reference_answer",
        "rule_outcome",
        "score_answer",
    ]
    assert sorted(study.__all__) == sorted(set(study.__all__))
    for name in study.__all__:
        assert hasattr(study, name), name
