"""The ``openai`` engine against the Chat Completions double and a tiny site of the test's own.

The double proves plumbing, not judgment: calls reach it with ``seed``, tool results reach
the next call, usage in the report is the sum of what the double answered, and failures
are sorted (``auth:`` / ``quota:`` before any success; parse; model).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from helpers.common import skip_outside_ci
from pairbench.fixtures._webmcp import chromium_problem
from pairbench.studies.attribution_reliability import _openai_engine
from pairbench.studies.attribution_reliability._double import (
    AGENT_MARK,
    CHECK_MARK,
    NOTHING_FOUND,
    REPORT_MARK,
)
from pairbench.studies.attribution_reliability._openai_engine import OpenAIEngine
from pairbench.studies.attribution_reliability._openai_engine_browser import Browser
from pairbench.studies.attribution_reliability._openai_engine_model import ModelFailure
from pairbench.studies.attribution_reliability._openai_engine_prompts import (
    ENDING_CHECK_PROMPT,
    REPORT_PROMPT,
    SYSTEM_PROMPT,
    SYSTEM_PROMPT_SHA256,
)
from pairbench.studies.attribution_reliability._openai_engine_report import (
    CHECK_HEADER,
    parse_report,
)
from pairbench.studies.attribution_reliability._openai_engine_settings import (
    OpenAIEngineSettings,
)
from pairbench.studies.attribution_reliability.engines._models import (
    Budget,
    EngineReport,
    EngineRequest,
    Persona,
    RecordedSession,
    RecordedStep,
)
from pairbench.studies.attribution_reliability.engines._protocol import AttributionEngine
from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext, page
from pairbench.studies.attribution_reliability.site._server import RunningSite, serve_site
from pairbench.testing.chat_double import ChatDouble, decide, start_chat_double

pytestmark = pytest.mark.browser

GOAL = "You want to download your invoice for March."
ERROR_TEXT = "Something went wrong. Please try again later."
READY_TEXT = "Your March statement is ready."


def _builder(fails: bool) -> Any:
    def build(ctx: SiteContext) -> CaseSite:
        script = f"""<script>
        document.getElementById('get').addEventListener('click', async () => {{
          const r = await fetch('{ctx.url("/download")}', {{method: 'POST'}});
          const out = document.getElementById('out');
          out.className = r.ok ? 'ok' : 'oops';
          out.textContent = r.ok ? {json.dumps(READY_TEXT)} : {json.dumps(ERROR_TEXT)};
        }});</script>"""
        body = (
            "<h1>Your account</h1><button id='get'>Download invoice</button>"
            "<div id='out' role='status'></div>"
            "<label>Email for receipts <input type='email'></label>"
            "<label>Reference code <input type='text'></label>"
            f"<a href='{ctx.other_origin}{ctx.url()}'>Partner portal</a>{script}"
        )
        style = "<style>.oops{color:#b00;border:1px solid #b00;padding:8px}</style>"

        async def start(request: Request) -> Response:
            return HTMLResponse(page("Account", body, head=style))

        async def download(request: Request) -> Response:
            return JSONResponse({"ok": not fails}, status_code=500 if fails else 200)

        return CaseSite(routes={"": start, "POST /download": download})

    return build


@pytest.fixture
def browser_ready() -> None:
    problem = chromium_problem()
    if problem is not None:
        skip_outside_ci(f"openai engine browser tests: {problem}")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PB_TEST_KEY", "not-needed")


@pytest.fixture
def double() -> Iterator[ChatDouble]:
    with start_chat_double() as running:
        yield running


def _engine(double: ChatDouble, **more: Any) -> OpenAIEngine:
    settings = {"base_url": f"{double.url}/v1", "api_key_env": "PB_TEST_KEY", "model": "dm-1"}
    return OpenAIEngine({**settings, **more})


def _scan(double: ChatDouble, fails: bool, actions: int = 10, **more: Any) -> EngineReport:
    with serve_site(_builder(fails), seed=11) as site:
        request = EngineRequest(
            mode="scan", start_url=site.start_url, model_seed=4242,
            personas=[Persona(user="u1", goal=GOAL)], budget=Budget(actions_per_user=actions),
        )  # fmt: skip
        return _engine(double, **more).scan(request)


def _logged_usage(double: ChatDouble) -> tuple[int, int]:
    return (
        sum(u["prompt_tokens"] for u in double.usages),
        sum(u["completion_tokens"] for u in double.usages),
    )


@pytest.mark.browser
def test_scan_blames_the_failing_site_and_every_call_reaches_the_double(
    browser_ready: None, double: ChatDouble
) -> None:
    report = _scan(double, fails=True)
    assert report.status == "completed", report.errors
    [finding] = report.findings
    assert finding.claim_scope == "product_behavior" and finding.evidence.users == ["u1"]
    assert "went wrong" in finding.evidence.text
    bodies = double.requests
    # goto, snapshot, click, snapshot, answer; the report; one ending check
    assert len(bodies) == 7 and all(e.status == 200 for e in double.exchanges)
    assert all(b["seed"] == 4242 and b["model"] == "dm-1" for b in bodies)
    assert [b["messages"][0]["content"] for b in bodies] == [SYSTEM_PROMPT] * 5 + [
        REPORT_PROMPT,
        ENDING_CHECK_PROMPT,
    ]
    assert bodies[5]["response_format"]["json_schema"]["name"] == "attribution_report"
    # the browser's snapshot reached the model: the click names a ref it showed
    tools = [m for m in bodies[4]["messages"] if m["role"] == "tool"]
    assert 'button "Download invoice"' in tools[1]["content"] and ERROR_TEXT in tools[2]["content"]
    assert [(q.user, q.status) for q in report.quote_pool] == [("u1", "kept")]
    clicked = [o for o in report.observations if o.target == 'button "Download invoice"']
    assert clicked and ERROR_TEXT in clicked[0].outcome_text
    assert clicked[0].page_url.startswith("http://127.0.0.1:")
    assert [(u.user, u.scripted) for u in report.users] == [("u1", False)]
    [usage] = report.usage
    assert (usage.input_tokens, usage.output_tokens) == _logged_usage(double)
    assert usage.model == "dm-1" and usage.provenance == "measured" and usage.cost_usd is None


@pytest.mark.browser
def test_scan_of_the_working_site_blames_nothing_and_prices_give_an_estimate(
    browser_ready: None, double: ChatDouble
) -> None:
    prices = {"input_per_mtok": 0.25, "output_per_mtok": 2.0}
    report = _scan(double, fails=False, prices=prices)
    assert report.status == "completed", report.errors
    assert report.findings == []
    assert [s.reason for s in report.set_aside] == ["insufficient_evidence"]
    assert any(READY_TEXT in o.outcome_text for o in report.observations)
    [usage] = report.usage
    tokens_in, tokens_out = _logged_usage(double)
    assert (usage.input_tokens, usage.output_tokens) == (tokens_in, tokens_out) != (0, 0)
    assert usage.provenance == "estimated"
    assert usage.cost_usd == pytest.approx((tokens_in * 0.25 + tokens_out * 2.0) / 1e6)


@pytest.mark.browser
def test_the_action_budget_is_enforced_outside_the_model(
    browser_ready: None, double: ChatDouble
) -> None:
    report = _scan(double, fails=True, actions=1)
    tool_texts = [m["content"] for m in double.requests[3]["messages"] if m["role"] == "tool"]
    assert tool_texts[-1].startswith("Refused: the action budget is spent")
    assert [o.target for o in report.observations] == [report.observations[0].page_url]
    assert report.findings == []  # it never clicked, so nothing showed an error


@pytest.mark.browser
def test_hands_keep_the_safety_rules(browser_ready: None) -> None:
    with (
        serve_site(_builder(False), seed=3) as site,
        Browser(2.0) as browser,
        browser.user(site.start_url) as hands,
    ):
        hands.call("goto", {"url": site.start_url})
        shot = hands.call("snapshot", {}).text
        refs = {name: ref for ref, name in hands.refs.items()}
        email = hands.call("type", {"ref": refs['textbox "Email for receipts"'], "text": "a@b.c"})
        assert email.text.startswith("Refused by the safety rules")
        code = hands.call("type", {"ref": refs['textbox "Reference code"'], "text": "R-1"})
        assert code.text.startswith("Typed into") and code.observation is not None
        away = hands.call("goto", {"url": f"{site.other_origin}/v/{site.slug}"})
        assert away.text.startswith("Refused") and "localhost" in away.text
        link = hands.call("click", {"ref": refs['link "Partner portal"']})
        assert "Blocked, another origin: http://localhost:" in link.text
        assert hands.page.url.startswith(site.start_url)
        assert "Partner portal" in shot
    assert _other_origin_hits(site) == 0


def _other_origin_hits(site: RunningSite) -> int:
    return sum(hit.origin == "other" for hit in site.audit)


# -- without a browser ------------------------------------------------------------------------
def _judge_request(snapshot: str, said: str) -> EngineRequest:
    step = RecordedStep(
        step=0, action="click", target='button "Download invoice"', hand="ok",
        url="http://127.0.0.1:1/v/x", status=200, snapshot=snapshot, t_ms=10.0,
        sentences=[said],
    )  # fmt: skip
    session = RecordedSession(user="u1", goal=GOAL, steps=[step])
    return EngineRequest(
        mode="judge", start_url="http://127.0.0.1:1/v/x", model_seed=9,
        personas=[Persona(user="u1", goal=GOAL)], sessions=[session],
    )  # fmt: skip


_ERROR_SNAPSHOT = f'- button "Download invoice" [ref=e2]\n- status [ref=e3]: {ERROR_TEXT}'


def test_judge_reports_over_the_recorded_sessions(double: ChatDouble) -> None:
    report = _engine(double).judge(_judge_request(_ERROR_SNAPSHOT, "The invoice was sent."))
    assert report.status == "completed" and len(report.findings) == 1
    sessions = json.loads(double.requests[0]["messages"][1]["content"].partition("\n")[2])
    assert sessions["sessions"][0]["said"] == ["The invoice was sent."]
    assert [(u.user, u.scripted) for u in report.users] == [("u1", True)]
    assert report.observations[0].outcome_text.startswith('button "Download invoice"')
    assert [q.status for q in report.quote_pool] == ["kept"]
    assert all(b["seed"] == 9 for b in double.requests)


def test_auth_rejection_before_any_success_is_marked_auth() -> None:
    # judge mode reaches the same first model call as scan, without a browser to start
    with start_chat_double({"fail_auth": True}) as double:
        report = _engine(double).judge(_judge_request(_ERROR_SNAPSHOT, "x"))
    assert report.status == "failed" and report.findings == []
    [error] = report.errors
    assert error.kind == "model" and error.message.startswith("auth:")
    assert [e.status for e in double.exchanges] == [401]


def test_quota_before_any_success_is_marked_quota() -> None:
    with start_chat_double({"quota_on": [1]}) as double:
        report = _engine(double, max_retries=0).judge(_judge_request(_ERROR_SNAPSHOT, "x"))
    assert report.status == "failed" and report.errors[0].message.startswith("quota:")


def test_a_refusal_after_a_success_is_the_engines_failure_and_keeps_what_it_had() -> None:
    with start_chat_double({"quota_on": [2]}) as double:
        report = _engine(double, max_retries=0).judge(_judge_request(_ERROR_SNAPSHOT, "x"))
    [error] = report.errors
    assert report.status == "failed" and error.kind == "model"
    assert not error.message.startswith(("auth:", "quota:"))
    assert len(report.findings) == 1 and report.quote_pool == []
    assert report.usage[0].input_tokens == double.usages[0]["prompt_tokens"]


def test_an_unparseable_report_is_a_parse_failure_with_no_findings(
    double: ChatDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    # without its marker the double does not know the prompt and answers in prose
    monkeypatch.setattr(_openai_engine, "REPORT_PROMPT", "Write the report.")
    report = _engine(double).judge(_judge_request(_ERROR_SNAPSHOT, "x"))
    assert report.status == "failed" and report.errors[0].kind == "parse"
    assert report.findings == [] and report.set_aside == []
    with pytest.raises(ModelFailure, match="schema"):
        parse_report('{"findings": [{"headline": "x"}]}', {"u1"})


def test_findings_citing_no_user_of_the_request_are_dropped() -> None:
    finding = {
        "headline": "h", "what_happened": "w", "why_it_matters": "y", "confidence_note": "c",
        "expectation": "e", "evidence_text": "t", "claim_scope": "usability",
    }  # fmt: skip
    raw = json.dumps(
        {"findings": [{**finding, "users": ["u9"]}, {**finding, "users": ["u1", "u9"]}],
         "set_aside": [], "takeaways": [{"user": "u9", "text": "t"}]}
    )  # fmt: skip
    parsed = parse_report(raw, {"u1"})
    assert [(f.id, f.evidence.users) for f in parsed.findings] == [("f1", ["u1"])]
    assert parsed.takeaways == []


def test_a_missing_key_is_an_auth_failure(
    double: ChatDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PB_TEST_KEY")
    report = _engine(double).judge(_judge_request(_ERROR_SNAPSHOT, "x"))
    assert report.errors[0].message.startswith("auth:") and double.requests == []


def test_a_browser_that_cannot_start_is_marked_chromium(
    double: ChatDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAIRBENCH_CHROMIUM", "/nonexistent/chromium")
    request = EngineRequest(
        mode="scan", start_url="http://127.0.0.1:1/v/x", model_seed=1,
        personas=[Persona(user="u1", goal=GOAL)],
    )  # fmt: skip
    report = _engine(double).scan(request)
    [error] = report.errors
    assert report.status == "failed" and error.kind == "internal"
    assert error.message.startswith("chromium:") and double.requests == []


def test_settings_are_validated_with_clear_errors() -> None:
    good = {"base_url": "http://127.0.0.1:1/v1/", "model": "m", "max_turns": 20}
    settings = OpenAIEngineSettings.parse(good)
    assert isinstance(OpenAIEngine(good), AttributionEngine)
    assert settings.base_url == "http://127.0.0.1:1/v1" and settings.turns_for(10) == 13
    assert settings.turns_for(30) == 20 and settings.cost(10, 10) is None
    for bad, word in [
        ({**good, "modle": "x"}, "modle"),
        ({**good, "base_url": "127.0.0.1"}, "base_url"),
        ({**good, "safety_prompt": "v0"}, "safety_prompt"),
        ({**good, "prices": {"input_per_mtok": -1, "output_per_mtok": 1}}, "input_per_mtok"),
    ]:
        with pytest.raises(ValueError, match=word):
            OpenAIEngineSettings.parse(bad)


def test_the_prompts_are_hashed_and_carry_the_doubles_markers() -> None:
    assert hashlib.sha256(SYSTEM_PROMPT.encode()).hexdigest() == SYSTEM_PROMPT_SHA256
    # pinned: a changed word in a prompt, tool or schema is a new engine, edited on purpose
    identity = OpenAIEngine({"base_url": "http://127.0.0.1:1/v1", "model": "m"}).identity()
    assert identity["prompts_sha256"] == (
        "eda4adc834bb4f013d63a148be007624fe1afef401235afaf123f05e9ec2b62d"
    )
    assert identity["system_prompt_sha256"] == SYSTEM_PROMPT_SHA256
    assert "not-needed" not in json.dumps(identity)
    assert AGENT_MARK in SYSTEM_PROMPT and REPORT_MARK in REPORT_PROMPT
    assert CHECK_MARK in ENDING_CHECK_PROMPT
    assert "email" in SYSTEM_PROMPT and "origin" in SYSTEM_PROMPT


def _check(sentence: str, shown: list[str]) -> bool:
    payload = {"user": "u1", "sentence": sentence, "browser_showed": shown}
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": ENDING_CHECK_PROMPT},
            {"role": "user", "content": f"{CHECK_HEADER}\n{json.dumps(payload)}"},
        ],
    }
    content, calls = decide(body)
    assert calls == []
    return bool(json.loads(content or "{}")["supported"])


def test_the_doubles_ending_check_keeps_only_what_the_browser_showed() -> None:
    shown = [_ERROR_SNAPSHOT]
    assert _check(f"Download invoice showed {ERROR_TEXT}", shown)
    assert not _check("The invoice was sent to my inbox.", shown)
    assert not _check("", shown)


def test_the_double_answers_other_prompts_as_before() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "Hello there"}]}
    assert decide(body) == ("I do not know how to answer that.", [])


def test_the_doubles_report_blames_only_error_text_and_its_agent_clicks_only_goal_words() -> None:
    def report(final: str) -> Any:
        sessions = {"sessions": [{"user": "u1", "steps": [], "final_snapshot": final}]}
        user = {"role": "user", "content": f"x\n{json.dumps(sessions)}"}
        content, _ = decide({"messages": [{"role": "system", "content": REPORT_PROMPT}, user]})
        return json.loads(content or "{}")

    assert len(report(_ERROR_SNAPSHOT)["findings"]) == 1
    quiet = report(f"- status [ref=e3]: {READY_TEXT}")
    assert quiet["findings"] == [] and quiet["set_aside"][0]["reason"] == "insufficient_evidence"
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"Start URL: http://127.0.0.1:1/v/x\nYour goal: {GOAL}"},
        {"role": "assistant", "tool_calls": [
            {"id": "a", "function": {"name": "goto", "arguments": "{}"}},
            {"id": "b", "function": {"name": "snapshot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "Opened."},
        {"role": "tool", "tool_call_id": "b", "content": '- link "Opening hours" [ref=e4]'},
    ]  # fmt: skip
    tools = [{"type": "function", "function": {"name": n}} for n in ("goto", "snapshot", "click")]
    assert decide({"messages": messages, "tools": tools}) == (NOTHING_FOUND, [])
    messages[-1] = {"role": "tool", "tool_call_id": "b", "content": _ERROR_SNAPSHOT}
    _, [call] = decide({"messages": messages, "tools": tools})
    assert call["function"] == {"name": "click", "arguments": '{"ref": "e2"}'}


# -- the published JSON Schemas ---------------------------------------------------------------
def _schema_errors(kind: str, instance: Any) -> list[str]:
    import jsonschema

    from pairbench.studies.attribution_reliability.engines._schema_files import published

    validator = jsonschema.Draft202012Validator(published(kind))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


@pytest.mark.browser
def test_the_scan_request_and_report_validate_against_the_published_schemas(
    browser_ready: None, double: ChatDouble
) -> None:
    # What this built-in engine was sent and answered, read by jsonschema (not the models).
    with serve_site(_builder(True), seed=11) as site:
        request = EngineRequest(
            mode="scan", start_url=site.start_url, model_seed=4242,
            personas=[Persona(user="u1", goal=GOAL)],
        )  # fmt: skip
        report = _engine(double).scan(request)
    assert report.status == "completed" and report.findings and report.observations
    assert _schema_errors("request", request.wire()) == []
    assert _schema_errors("report", report.wire()) == []


def test_the_judge_and_failure_reports_validate_against_the_published_schemas(
    double: ChatDouble,
) -> None:
    request = _judge_request(_ERROR_SNAPSHOT, "The invoice was sent.")
    judged = _engine(double).judge(request)
    assert judged.status == "completed" and judged.findings
    with start_chat_double({"fail_auth": True}) as refusing:
        failed = _engine(refusing).judge(request)
    assert failed.status == "failed" and failed.errors
    assert _schema_errors("request", request.wire()) == []
    for report in (judged, failed):
        assert _schema_errors("report", report.wire()) == []
    # The check can fail: a report the schema refuses is named.
    wrong = {**judged.wire(), "status": "done"}
    assert _schema_errors("report", wrong) != []
