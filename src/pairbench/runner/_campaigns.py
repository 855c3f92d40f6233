"""Campaigns a run stopped in: kept as ``incomplete`` and re-run whole, never piecemeal.

A campaign is one arm's complete ordered run of every scenario of one pair. When the
runner stops inside one (SIGKILL, Ctrl-C, a policy stop), finishing only its missing
scenarios later would splice two sittings into one campaign. ``resume`` therefore keeps
what the campaign produced, marks it ``incomplete`` with a ``campaign_incomplete`` journal
line, moves its final records to ``replaced/`` (``store._replaced``) and re-runs every one
of its scenarios, in the locked order, as a replacement campaign ``<id>-R<n>``. Each
replacement counts against ``replacement.max_per_campaign`` (infra retries of the
campaign's scenarios too); the one past it stops the run instead, named.

``campaigns.json`` is a view of the journal written at the end of every invocation: each
campaign (and replacement) with its pair, arm and ``complete``/``incomplete``/``not_started``
status, and what replaced it.
"""

from __future__ import annotations

from pydantic import Field

from pairbench._atomic import sha256_file, write_atomic
from pairbench._model import Frozen
from pairbench.runner._run import RunState
from pairbench.schedule._plan import Campaign, Schedule, TrialKey
from pairbench.spec._policies import ReplacementPolicy
from pairbench.store._events import AttemptStarted, CampaignIncomplete, JournalEvent, MovedRecord
from pairbench.store._records import FINAL_OUTCOMES, TrialResult
from pairbench.store._replaced import REPLACED, apply_moves
from pairbench.store._row import trial_row
from pairbench.store._run_dir import RunDir

CAMPAIGNS_FILE = "campaigns.json"


def replacement_id(campaign_id: str, n: int) -> str:
    """The id of a campaign's ``n``-th whole replacement.

    >>> replacement_id("rra-20261129T150000Z-1a2b3c-P0-baseline", 1)
    'rra-20261129T150000Z-1a2b3c-P0-baseline-R1'
    """
    return f"{campaign_id}-R{n}"


def _history(
    events: list[JournalEvent], campaign: Campaign
) -> list[tuple[int, CampaignIncomplete]]:
    """The campaign's ``campaign_incomplete`` lines, with their journal positions."""
    return [
        (i, e)
        for i, e in enumerate(events)
        if isinstance(e, CampaignIncomplete) and (e.pair, e.arm) == (campaign.pair, campaign.arm)
    ]


def _started_since(events: list[JournalEvent], keys: list[TrialKey], since: int) -> bool:
    labels = {k.label for k in keys}
    return any(isinstance(e, AttemptStarted) and e.key in labels for e in events[since:])


def _moved(run_dir: RunDir, key: TrialKey) -> MovedRecord:
    """The move of ``key``'s final record (and transcript) to ``replaced/``."""
    path = run_dir.result_path(key)
    result = TrialResult.model_validate_json(path.read_bytes())
    kept = run_dir.kept_path(REPLACED, key, result.attempt, "")
    transcript = run_dir.transcript_path(key)
    has = transcript.is_file()
    root = run_dir.path

    def rel(p: object) -> str:
        return str(p).removeprefix(str(root) + "/")

    return MovedRecord(
        key=key.label,
        attempt=result.attempt,
        result_from=rel(path),
        result=rel(kept) + ".json",
        result_sha256=sha256_file(path),
        transcript_from=rel(transcript) if has else None,
        transcript=rel(kept) + ".jsonl" if has else None,
        transcript_sha256=sha256_file(transcript) if has else None,
        row=trial_row(result, kept=True),
    )


def replace_incomplete(
    run_dir: RunDir, schedule: Schedule, state: RunState, policy: ReplacementPolicy
) -> list[CampaignIncomplete]:
    """Mark every campaign the runner stopped in as incomplete and set it up to re-run
    whole (its keys no longer done, its records moved); return the lines written.

    Also redoes the moves of earlier lines (a crash between line and moves), and counts
    each campaign's replacements into ``state.campaign_replacements``. A replacement past
    ``policy.max_per_campaign`` sets ``state.stop_reason`` instead.
    """
    events = run_dir.journal_events()
    for event in events:
        if isinstance(event, CampaignIncomplete):
            apply_moves(run_dir.path, event)
    written: list[CampaignIncomplete] = []
    journal = run_dir.journal()
    try:
        for campaign in schedule.campaigns:
            keys = campaign.trial_keys()
            history = _history(events, campaign)
            replaced = sum(1 for _, e in history if e.replaced_by is not None)
            current = history[-1][1].replaced_by if history else campaign.id
            count = replaced + sum(state.infra[k] for k in keys)
            slot = (campaign.pair, campaign.arm)
            state.campaign_replacements[slot] = count
            if current is None:  # stopped at the policy's maximum before: still stopped
                state.stop_reason = f"campaign {history[-1][1].campaign} is incomplete and " + (
                    "the replacement policy allows no more replacements"
                )
                continue
            since = history[-1][0] + 1 if history else 0
            if all(k in state.done for k in keys) or not _started_since(events, keys, since):
                continue
            reason = (
                f"the runner stopped during campaign {current} after "
                f"{sum(k in state.done for k in keys)} of its {len(keys)} scenarios"
            )
            if count + 1 > policy.max_per_campaign:
                line = CampaignIncomplete(
                    campaign=current, pair=campaign.pair, arm=campaign.arm, reason=reason
                )
                state.stop_reason = (
                    f"campaign {current} is incomplete, and re-running it would be replacement "
                    f"{count + 1} of a campaign allowing {policy.max_per_campaign} "
                    "(replacement.max_per_campaign)"
                )
            else:
                moved = [_moved(run_dir, k) for k in keys if run_dir.has_result(k)]
                line = CampaignIncomplete(
                    campaign=current,
                    pair=campaign.pair,
                    arm=campaign.arm,
                    replaced_by=replacement_id(campaign.id, replaced + 1),
                    reason=reason,
                    moved=moved,
                )
                state.campaign_replacements[slot] = count + 1
            journal.append(line)  # durable before anything moves: a crash redoes the moves
            written.append(line)
            apply_moves(run_dir.path, line)
            if line.replaced_by is not None:
                for key in keys:
                    state.done.discard(key)
                    state.infra[key] = 0  # the replacement's retries are its own
    finally:
        journal.close()
    return written


class CampaignStatus(Frozen):
    """One campaign of a run, as ``campaigns.json`` lists it."""

    id: str
    """``<run-id>-P<k>-<arm>``, or ``...-R<n>`` for a replacement."""
    pair: int
    arm: str
    status: str
    """``complete``, ``incomplete`` (kept, never finished piecemeal) or ``not_started``."""
    replaces: str | None = None
    """The incomplete campaign this one re-runs whole."""
    replaced_by: str | None = None
    """The campaign that re-ran this incomplete one whole."""
    scenarios: list[str] = Field(default_factory=list)


def campaign_statuses(run_dir: RunDir, schedule: Schedule) -> list[CampaignStatus]:
    """Every campaign of the run and every replacement, in execution order."""
    events = run_dir.journal_events()
    out: list[CampaignStatus] = []
    for campaign in schedule.campaigns:
        previous: str | None = None
        since = 0
        for position, line in _history(events, campaign):
            since = position + 1
            out.append(
                CampaignStatus(
                    id=line.campaign, pair=campaign.pair, arm=campaign.arm,
                    status="incomplete", replaces=previous, replaced_by=line.replaced_by,
                    scenarios=campaign.tasks,
                )
            )  # fmt: skip
            previous = line.campaign
            if line.replaced_by is None:
                break
        else:
            keys = campaign.trial_keys()
            current = out[-1].replaced_by if previous is not None else campaign.id
            done = [_final(run_dir, k) for k in keys]
            started = _started_since(events, keys, since)
            status = "complete" if all(done) else "incomplete" if started else "not_started"
            out.append(
                CampaignStatus(
                    id=current or campaign.id, pair=campaign.pair, arm=campaign.arm,
                    status=status, replaces=previous, scenarios=campaign.tasks,
                )
            )  # fmt: skip
    return out


def _final(run_dir: RunDir, key: TrialKey) -> bool:
    if not run_dir.has_result(key):
        return False
    result = TrialResult.model_validate_json(run_dir.result_path(key).read_bytes())
    return result.outcome in FINAL_OUTCOMES


def write_campaigns(run_dir: RunDir, schedule: Schedule) -> None:
    """``campaigns.json``: the journal's view of the run's campaigns (rebuilt each time)."""
    if not schedule.campaigns:
        return
    statuses = campaign_statuses(run_dir, schedule)
    data = "[\n" + ",\n".join(s.model_dump_json() for s in statuses) + "\n]\n"
    write_atomic(run_dir.path / CAMPAIGNS_FILE, data.encode("utf-8"))
