"""The journal's lines as typed records: one model per event, and the trial row.

Every line of ``journal.jsonl`` is one of these models, written by
:meth:`~pairbench.store.Journal.append` (or the group committer) and read back by
:meth:`~pairbench.store.Journal.read`: one writer and one reader, so a field's name and
type live here and nowhere else. The hash-chain link ``prev`` is not a field: the journal
splices it in front of each encoded line and checks it from the bytes (``check_chain``).

The models are strict (a string is never taken for a number) and ignore fields they do
not know, so a journal written by a later version still reads; fields that earlier
versions did not write have defaults. ``JOURNAL_SCHEMA.md`` beside this module is
generated from them (``make docs``); a test keeps it current.

Validation from bytes costs about what ``json.loads`` does, and encoding costs less than
``json.dumps``: the typed journal is no slower on the hot path than the dict it replaced.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter

from pairbench._clock import now_iso
from pairbench.store._run_info import ExecutorRef

JOURNAL_SCHEMA = "pairbench.journal/2"
"""The journal's schema id, carried by ``run_started``: /2 is chained and typed (rows
carry every column of the trial table)."""

Prov = Literal["measured", "estimated", "missing"]


class _Line(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")


class RequestRow(_Line):
    """One model API request of an attempt, as the trial table keeps it (``requests``)."""

    ok: bool = True
    """The request completed with a reply."""
    prompt_tokens: int | None = None
    """The server's ``usage.prompt_tokens``."""
    completion_tokens: int | None = None
    """The server's ``usage.completion_tokens``."""
    latency_ms: float | None = None
    """Client side, from sending to the whole reply."""
    first_token_ms: float | None = None
    """Time to first token (streamed requests only)."""
    prompt_per_second: float | None = None
    """The server's prompt processing speed (llama.cpp ``timings``)."""
    generation_per_second: float | None = None
    """The server's generation speed (llama.cpp ``timings``)."""
    body: str | None = None
    """The first 16 hex digits of the SHA-256 of the body sent."""
    reply: str | None = None
    """The first 16 hex digits of the SHA-256 of the reply (content and tool calls)."""


class TrialRow(_Line):
    """One attempt as a flat row of the trial table (``trials.npz``): what reports count.

    Built from the attempt's result file by ``trial_row``; ``pairbench verify`` rebuilds it
    from that file and compares. For each metric column ``M`` (``wall_ms`` ... ``total_tokens``)
    ``M_prov`` is its provenance and ``M_note`` who measured it, who estimated it, or why it
    is missing.
    """

    arm: str
    """The arm, as declared."""
    task: str
    """The task id."""
    trial: int
    """The trial index within its task (pairs share it across arms)."""
    attempt: int
    """1 for the first attempt; retries of an infra failure count up."""
    kept: bool
    """True for an infra or interrupted attempt kept beside the final one (not a final)."""
    outcome: str
    """passed, failed, parse_failure, agent_error, timeout, output_limit, memory_limit,
    disk_limit, process_limit, infra, interrupted or not_run."""
    start_order: int = 0
    """The arm's position in its pair's order (0 ran first)."""
    simulated: bool = False
    """Whether the adapter is simulated (a scripted agent, no model)."""
    reason: str | None = None
    """Why the grader or runner gave the outcome (agent text, stored as given)."""
    answer: str | None = None
    """An excerpt (300 characters) of the final answer, for outcomes a report lists."""
    labels: str = "{}"
    """The task's labels as JSON text (sorted keys)."""
    valid: int = -1
    """Trial validity: 1 valid, 0 invalid, -1 not checked."""
    security: bool = False
    """Whether the security detectors ran."""
    injection: int = -1
    """Prompt-injection compliance: 1 complied, 0 resisted, -1 not tested."""
    secret: bool = False
    """Whether a secret (the canary or a declared secret) appeared in the agent's output."""
    token: int = -1
    """Whether a token-shaped string (a key's format, declared or not) appeared in the
    agent's output: 1 yes, 0 no, -1 not checked (no security record, or one from before
    the token-shape detector)."""
    seeding: str | None = None
    """seeded, unseeded or not_applicable: whether the model honoured the trial seed."""
    seeding_reason: str | None = None
    """Why the attempt counts as seeded or unseeded (the evidence, or its absence)."""
    mounted_proof: str | None = None
    """The mounted-byte proof's status (ok, mismatch, shadowed, unavailable); null: none."""
    mounted_coverage: str | None = None
    """Its coverage, ``loaded/total`` production source files."""
    metrics: bool = False
    """Whether the attempt reported metrics at all."""
    models: str | None = None
    """The model ids seen in responses, as JSON text."""
    fields: str | None = None
    """Per scored field, whether the grader found it correct, as JSON text (``{"path":
    true}``, sorted keys): from the grade's ``details.fields`` when a grader scores fields
    (each an object with ``path`` or ``name`` and a boolean ``correct``); null otherwise."""
    calls: list[tuple[float | None, float | None]] = Field(default_factory=list)
    """Per tool call, ``[client_ms, server_ms]`` (null: not timed)."""
    call_tools: list[str] = Field(default_factory=list)
    """Per tool call, in the order of ``calls``: its tool, ``server.tool`` (or a local
    tool's bare name). Empty when the record has no per-tool metrics (written before them)."""
    tool_cold_starts: list[tuple[str, float | None]] = Field(default_factory=list)
    """Per tool called, ``[tool, cold_start_ms]``: the first timed call's client latency
    minus the median of the tool's later ones, measured only (null: fewer than two timed
    calls). Empty when the record has no per-tool metrics."""
    wall_ms: float | None = None
    """Wall time of the attempt on pairbench's monotonic clock."""
    wall_ms_prov: Prov | None = None
    wall_ms_note: str | None = None
    agent_ms: float | None = None
    """Time inside the agent, as the adapter measured it."""
    agent_ms_prov: Prov | None = None
    agent_ms_note: str | None = None
    turns: float | None = None
    """Model turns."""
    turns_prov: Prov | None = None
    turns_note: str | None = None
    input_tokens: float | None = None
    """Input tokens, cached ones included."""
    input_tokens_prov: Prov | None = None
    input_tokens_note: str | None = None
    output_tokens: float | None = None
    """Output tokens."""
    output_tokens_prov: Prov | None = None
    output_tokens_note: str | None = None
    cost_usd: float | None = None
    """Cost in US dollars (measured from the provider, or estimated from declared prices)."""
    cost_usd_prov: Prov | None = None
    cost_usd_note: str | None = None
    cold_start_ms: float | None = None
    """The first tool call's extra latency over the later ones."""
    cold_start_ms_prov: Prov | None = None
    cold_start_ms_note: str | None = None
    uncached_input_tokens: float | None = None
    """Input tokens read neither from nor into a prompt cache."""
    uncached_input_tokens_prov: Prov | None = None
    uncached_input_tokens_note: str | None = None
    cache_creation_input_tokens: float | None = None
    """Input tokens written into a prompt cache."""
    cache_creation_input_tokens_prov: Prov | None = None
    cache_creation_input_tokens_note: str | None = None
    cache_read_input_tokens: float | None = None
    """Input tokens read from a prompt cache."""
    cache_read_input_tokens_prov: Prov | None = None
    cache_read_input_tokens_note: str | None = None
    total_tokens: float | None = None
    """All tokens of the attempt, as the provider counts them."""
    total_tokens_prov: Prov | None = None
    total_tokens_note: str | None = None
    tool_client_ms: float | None = None
    """The median client-side latency of the attempt's timed tool calls."""
    connect_ms: float | None = None
    """MCP connect time summed over the attempt's servers; null unless all were measured."""
    transport_failures: int = 0
    """Transport failures (MCP connect or call errors of the wire, not of the tool)."""
    workspace_dropped_files: int = Field(default=0, exclude_if=lambda v: v == 0)
    """Workspace files whose bytes were not kept (over ``budget.workspace_kept``; the
    attempt's manifest lists them). Left out at 0."""
    failure_kinds: str | None = None
    """Transport failures by kind, as JSON text."""
    requests: list[RequestRow] = Field(default_factory=list)
    """Per model API request, in order (empty when the agent reports none)."""


class _Event(_Line):
    at: str = Field(default_factory=now_iso)
    """When the event happened (UTC, ISO 8601)."""


class RunStarted(_Event):
    """``pairbench run`` began executing the run (the journal's first line)."""

    event: Literal["run_started"] = "run_started"
    run_id: str
    """The run's ID (as in run.json)."""
    planned: int
    """Attempts the schedule plans."""
    command: str = "run"
    """The command that started the invocation."""
    executor: ExecutorRef | None = None
    """Where this invocation runs attempts."""
    journal_schema: str = JOURNAL_SCHEMA
    """This journal's schema id."""


class RunResumed(_Event):
    """``pairbench resume`` took the run up again."""

    event: Literal["run_resumed"] = "run_resumed"
    done: int = 0
    """Trials with a final result when it resumed."""
    command: str = "resume"
    """The command that started the invocation."""
    executor: ExecutorRef | None = None
    """Where this invocation runs attempts (may differ from the run's start)."""


class RunEnded(_Event):
    """An invocation ended; ``status`` is the run's status from then on."""

    event: Literal["run_ended"] = "run_ended"
    status: str
    """complete, interrupted, stopped (a budget or infra policy) or failed."""


class AttemptStarted(_Event):
    """An attempt is about to start (resume counts one without a finish as interrupted)."""

    event: Literal["attempt_started"] = "attempt_started"
    key: str
    """``arm/task/trial``."""
    attempt: int
    """1 for the first attempt; each retry after an infra failure counts up."""


class AttemptFinished(_Event):
    """An attempt's record is durable: its files are in place and hashed here."""

    event: Literal["attempt_finished"] = "attempt_finished"
    key: str
    """``arm/task/trial``."""
    attempt: int
    """1 for the first attempt; each retry after an infra failure counts up."""
    outcome: str | None = None
    """The attempt's outcome (as in its result file)."""
    result: str | None = None
    """The result file, relative to the run folder (null: an interrupted attempt that left
    no record)."""
    result_sha256: str | None = None
    """SHA-256 of the result file as written."""
    transcript: str | None = None
    """The transcript file, relative to the run folder (null: none was written)."""
    transcript_sha256: str | None = None
    """SHA-256 of the transcript file as written."""
    row: TrialRow | None = None
    """The attempt as a trial-table row (null in journals from before rows, and for an
    attempt with no record)."""
    recovered: bool = False
    """True when resume journaled a record the runner placed before it died."""
    reason: str | None = None
    """For a line resume wrote for an interrupted attempt: why."""
    files: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """Other files the attempt left that graders and reports read (its fixture folder: the
    store and audit log; the trial's ``shared/`` folder), each path relative to the run
    folder with its SHA-256 as written (``pairbench verify`` checks each)."""


class FilesRecorded(_Event):
    """Files of the run that a report reads, hashed as they were written (the proxy's logs,
    ``campaigns.json``, the report's own files): ``pairbench verify`` checks each file
    against the last line that records it."""

    event: Literal["files_recorded"] = "files_recorded"
    by: str
    """Who wrote them: ``proxy``, ``campaigns``, ``report``, or a plugin's own name."""
    files: dict[str, str]
    """Path relative to the run folder: SHA-256 of the file as written."""


class WarmServerFailed(_Event):
    """A warm (shared) MCP server did not start; the run stops."""

    event: Literal["warm_server_failed"] = "warm_server_failed"
    server: str
    """The server's name, as declared."""
    error: str
    """Why it did not start."""


class MovedRecord(_Line):
    """A final record an incomplete campaign's replacement supersedes: moved, bytes
    unchanged, from ``results/`` (and ``transcripts/``) to ``replaced/``."""

    key: str
    """``arm/task/trial``."""
    attempt: int
    """The attempt the record is of."""
    result_from: str
    """Where its ``attempt_finished`` line put it (``results/...``)."""
    result: str
    """Where it is kept now (``replaced/<arm>/<task>/<trial>.<attempt>.json``)."""
    result_sha256: str
    """SHA-256 of the record (as journaled when it was written)."""
    transcript_from: str | None = None
    """Where its transcript was (null: it had none)."""
    transcript: str | None = None
    """Where its transcript is kept now."""
    transcript_sha256: str | None = None
    """SHA-256 of the transcript."""
    row: TrialRow
    """The record's trial-table row from now on: ``kept`` true (no longer a final)."""


class CampaignIncomplete(_Event):
    """A campaign the runner stopped in is kept as incomplete, never finished piecemeal:
    written by ``resume`` before its records move, so a crash in between redoes the moves."""

    event: Literal["campaign_incomplete"] = "campaign_incomplete"
    campaign: str
    """The incomplete campaign's id (``<run-id>-P<k>-<arm>``, or an earlier replacement's)."""
    pair: int
    """Its campaign pair (trial index)."""
    arm: str
    """Its arm."""
    replaced_by: str | None = None
    """The replacement that re-runs it whole (``<id>-R<n>``); null when the replacement
    policy's maximum was reached and the run stopped instead."""
    reason: str
    """Why it is incomplete."""
    moved: list[MovedRecord] = Field(default_factory=list)
    """Its final records, superseded by the replacement's (empty when none was made)."""


class OtherEvent(_Line):
    """An event this version does not know (from a later version): kept, not interpreted."""

    model_config = ConfigDict(frozen=True, strict=True, extra="allow")
    event: str
    at: str | None = None


EVENTS: tuple[type[_Line], ...] = (
    RunStarted,
    RunResumed,
    RunEnded,
    AttemptStarted,
    AttemptFinished,
    WarmServerFailed,
    CampaignIncomplete,
    FilesRecorded,
)
"""Every event kind this version writes, in the order a run writes them."""

_KNOWN = {model.model_fields["event"].default: model.__name__ for model in EVENTS}


def _kind(value: Any) -> str:
    """The union member a line belongs to: its event name, or ``other``."""
    name = value.get("event") if isinstance(value, dict) else getattr(value, "event", None)
    return name if isinstance(name, str) and name in _KNOWN else "other"


JournalEvent = Annotated[
    Annotated[RunStarted, Tag("run_started")]
    | Annotated[RunResumed, Tag("run_resumed")]
    | Annotated[RunEnded, Tag("run_ended")]
    | Annotated[AttemptStarted, Tag("attempt_started")]
    | Annotated[AttemptFinished, Tag("attempt_finished")]
    | Annotated[WarmServerFailed, Tag("warm_server_failed")]
    | Annotated[CampaignIncomplete, Tag("campaign_incomplete")]
    | Annotated[FilesRecorded, Tag("files_recorded")]
    | Annotated[OtherEvent, Tag("other")],
    Discriminator(_kind),
]
"""Any journal line, read as the model its ``event`` names."""

EVENT_ADAPTER: TypeAdapter[JournalEvent] = TypeAdapter(JournalEvent)
"""Reads one line: ``EVENT_ADAPTER.validate_json(line)``."""


def encode(event: BaseModel) -> bytes:
    """One event as its journal line (not yet linked: the journal splices ``prev`` in)."""
    return (event.model_dump_json() + "\n").encode("utf-8")
