"""The openai agent's attachments (file / text / auto) against the local Chat Completions double.

The arm has no tools, only the study's frozen PDF (or a small file of our own), and the
prompt is the webmcp-vs-pdf common prompt, so the double answers from what it was sent.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pairbench._errors import SpecError
from pairbench.agents._protocol import AgentContext, AgentOutput
from pairbench.agents.openai._agent import OpenAIAgent
from pairbench.agents.openai._attachments import Attachment, Attachments
from pairbench.store._transcript import Transcript
from pairbench.studies.webmcp_vs_pdf import PDF_PATH, PDF_SHA256, STUDY, score_answer
from pairbench.testing.chat_double import ChatDouble, start_chat_double

PROMPT = (STUDY.root / "prompts" / "common.md").read_text(encoding="utf-8")
MODEL_SEED = 987654321


def _ctx(tmp_path: Path, attachments: list[Path], prompt: str = PROMPT) -> AgentContext:
    return AgentContext(
        run_id="r",
        arm="pdf",
        task="common-prompt",
        trial=0,
        seed=1,
        model_seed=MODEL_SEED,
        prompt=prompt,
        content={},
        env={},
        workdir=tmp_path,
        transcript=Transcript(tmp_path / "transcript.jsonl"),
        settings={},
        timeout_s=60,
        has_tools=False,
        attachments=attachments,
    )


def _run(
    tmp_path: Path,
    double: ChatDouble,
    attachments: list[Path],
    mode: str | None = None,
    **more: Any,
) -> tuple[AgentOutput, list[dict[str, Any]]]:
    settings: dict[str, Any] = {"base_url": f"{double.url}/v1", "model": "double", **more}
    if mode is not None:
        settings["attachments"] = mode
    ctx = _ctx(tmp_path, attachments)
    out = asyncio.run(OpenAIAgent(settings).run(ctx))
    return out, list(ctx.transcript.events)


def _events(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def test_file_mode_sends_a_file_part_with_base64_data_and_the_name(tmp_path: Path) -> None:
    with start_chat_double() as double:
        out, events = _run(tmp_path, double, [PDF_PATH], "file")
        (body,) = double.requests
        files = double.files
    assert out.error is None
    content = body["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": PROMPT}
    (part,) = content[1:]
    assert part["type"] == "file" and part["file"]["filename"] == "benchmark-baseline.pdf"
    prefix, _, data = part["file"]["file_data"].partition(",")
    assert prefix == "data:application/pdf;base64"
    assert base64.b64decode(data) == PDF_PATH.read_bytes()
    assert [(f["filename"], f["sha256"], f["accepted"]) for f in files] == [
        ("benchmark-baseline.pdf", PDF_SHA256, True)
    ]
    (event,) = _events(events, "attachment")
    assert event == {
        **event,
        "name": "benchmark-baseline.pdf",
        "sha256": PDF_SHA256,
        "bytes": PDF_PATH.stat().st_size,
        "mode": "file",
        "requested": "file",
    }
    assert "fallback_reason" not in event
    # The double read the PDF it was sent: the 19 records and the 18 without s04.
    answer = json.loads(out.final_answer or "")
    assert (answer["overall"]["k"], answer["exclude_s04"]["k"]) == (19, 18)
    assert 0 < score_answer(out.final_answer or "").correct < 13


def test_text_mode_extracts_the_pdf_into_the_first_user_message(tmp_path: Path) -> None:
    with start_chat_double() as double:
        out, events = _run(tmp_path, double, [PDF_PATH], "text", system="Be exact.")
        (body,) = double.requests
        files = double.files
    assert out.error is None and files == []
    system, user = body["messages"]
    assert system == {"role": "system", "content": "Be exact."}
    text = user["content"]
    assert isinstance(text, str) and text.startswith(PROMPT)
    assert f"attached file: benchmark-baseline.pdf (sha256 {PDF_SHA256})" in text
    assert "Pellegrini & Hicks" in text and "restricted maximum likelihood" in text
    (event,) = _events(events, "attachment")
    assert (event["mode"], event["requested"], event["sha256"]) == ("text", "text", PDF_SHA256)
    answer = json.loads(out.final_answer or "")
    assert (answer["overall"]["k"], answer["exclude_s04"]["k"]) == (19, 18)


def test_text_mode_sends_a_plain_text_file_as_is(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("Use REML.\nRecords: s01 to s19 — see the table.\n", encoding="utf-8")
    digest = hashlib.sha256(notes.read_bytes()).hexdigest()
    with start_chat_double() as double:
        out, events = _run(tmp_path, double, [notes], "text")
        (body,) = double.requests
    text = body["messages"][0]["content"]
    assert f"notes.md (sha256 {digest})" in text
    assert "Use REML.\nRecords: s01 to s19 — see the table.\n--- end of notes.md ---" in text
    assert [e["sha256"] for e in _events(events, "attachment")] == [digest]
    # No table in what it was sent: the double answers in the shape, but cannot be right.
    assert json.loads(out.final_answer or "")["overall"]["k"] is None


def test_auto_sends_files_when_the_endpoint_takes_them(tmp_path: Path) -> None:
    with start_chat_double() as double:
        out, events = _run(tmp_path, double, [PDF_PATH])
        statuses = [e.status for e in double.exchanges]
    assert out.error is None and statuses == [200]
    (event,) = _events(events, "attachment")
    assert (event["mode"], event["requested"]) == ("file", "auto")


def test_auto_falls_back_to_text_when_the_endpoint_rejects_file_parts(tmp_path: Path) -> None:
    with start_chat_double({"reject_file_parts": True}) as double:
        out, events = _run(tmp_path, double, [PDF_PATH])
        exchanges = list(double.exchanges)
        files = double.files
    assert out.error is None and out.final_answer
    assert [e.status for e in exchanges] == [400, 200]
    assert isinstance(exchanges[0].body["messages"][0]["content"], list)
    resent = exchanges[1].body["messages"][0]["content"]
    assert isinstance(resent, str) and f"(sha256 {PDF_SHA256})" in resent
    assert [(f["sha256"], f["accepted"]) for f in files] == [(PDF_SHA256, False)]
    failed, ok = _events(events, "model_request")
    assert (failed["ok"], failed["fallback"], failed["turn"]) == (False, "text", 1)
    assert failed["error"].startswith("provider error (400): Invalid value: 'file'.")
    assert (ok["ok"], ok["turn"]) == (True, 1)
    (event,) = _events(events, "attachment")
    assert (event["mode"], event["requested"]) == ("text", "auto")
    assert event["fallback_reason"] == failed["error"]
    # Both bodies sent carried the seed; one completed response was a turn.
    assert out.seeding is not None and out.seeding.status == "seeded"
    assert out.seeding.requests == 2 and out.turns.value == 1
    assert json.loads(out.final_answer)["overall"]["k"] == 19


def test_file_mode_rejected_is_an_agent_error_not_a_fallback(tmp_path: Path) -> None:
    with start_chat_double({"reject_file_parts": True}) as double:
        out, events = _run(tmp_path, double, [PDF_PATH], "file")
        statuses = [e.status for e in double.exchanges]
    assert statuses == [400]
    assert out.error is not None and out.error.startswith("provider error (400)")
    (event,) = _events(events, "attachment")
    assert (event["mode"], event["requested"]) == ("file", "file")


def test_a_binary_file_cannot_be_sent_as_text(tmp_path: Path) -> None:
    blob = tmp_path / "image.bin"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with start_chat_double() as double:
        out, events = _run(tmp_path, double, [blob], "text")
        requests = double.requests
    assert requests == []
    assert out.error is not None and "neither a PDF nor UTF-8 text" in out.error
    assert [e["mode"] for e in _events(events, "attachment")] == ["text"]


def test_no_attachments_send_the_prompt_as_plain_text(tmp_path: Path) -> None:
    with start_chat_double() as double:
        out, events = _run(tmp_path, double, [], "file")
        (body,) = double.requests
    assert body["messages"] == [{"role": "user", "content": PROMPT}]
    assert _events(events, "attachment") == [] and out.error is None


def test_several_files_keep_their_order_and_each_is_recorded(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello", encoding="utf-8")
    sent = Attachments([PDF_PATH, notes], "file")
    content = sent.user_content("Q")
    assert isinstance(content, list)
    assert [p["type"] for p in content] == ["text", "file", "file"]
    assert [p["file"]["filename"] for p in content[1:]] == ["benchmark-baseline.pdf", "notes.txt"]
    assert content[2]["file"]["file_data"] == "data:text/plain;base64," + base64.b64encode(
        b"hello"
    ).decode("ascii")
    transcript = Transcript(tmp_path / "t.jsonl")
    sent.record(transcript)
    sent.record(transcript)  # once only
    assert [e["name"] for e in transcript.events] == ["benchmark-baseline.pdf", "notes.txt"]
    assert Attachment.read(notes).sha256 == hashlib.sha256(b"hello").hexdigest()


def test_an_unknown_attachments_setting_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match=r"agent\.settings\.attachments"):
        OpenAIAgent({"base_url": "http://127.0.0.1:9/v1", "model": "m", "attachments": "pdf"})
