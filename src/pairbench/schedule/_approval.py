"""A confirmation plan on disk: written once, approved once by hash, checked before a run.

The plan file is the pre-registration of a confirmation run. ``write_plan`` never
replaces a file, ``approve`` records who approved which hash (the only rewrite a plan
file gets, atomic), and ``require_approved`` is the gate a run passes: the plan must be
approved, and unchanged since.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from pairbench._atomic import sha256_file, write_atomic
from pairbench._errors import PairbenchError, RunRefused
from pairbench.schedule._confirmation import (
    Approval,
    ConfirmationPlan,
    plan_problems,
    plan_sha256,
)

NEW_PLAN_FIX = "write a new plan to a new file (a plan is never edited by hand) and approve that"


class PlanError(PairbenchError):
    """A confirmation plan file cannot be written, read or approved as asked."""


def _plan_bytes(plan: ConfirmationPlan) -> bytes:
    # Indented for review by eye; the hash is of the canonical form, not of these bytes.
    return (plan.model_dump_json(indent=2) + "\n").encode("utf-8")


def _check(path: Path, plan: ConfirmationPlan) -> None:
    problems = plan_problems(plan)
    if problems:
        raise PlanError(f"{path} is not a consistent plan: {'; '.join(problems)}; {NEW_PLAN_FIX}")


def write_plan(path: Path, plan: ConfirmationPlan) -> str:
    """Write ``plan`` to a new file ``path`` (atomically) and return its ``plan_sha256``.

    **Usage**::

        write_plan(Path("plan.json"), plan)   # '9c1e...'; then `pairbench approve plan.json`

    Raises:
        PlanError: ``path`` exists (a stored plan, perhaps approved, is never replaced),
            or the plan is inconsistent (``plan_problems``).
    """
    _check(path, plan)
    try:
        write_atomic(path, _plan_bytes(plan), overwrite=False)
    except FileExistsError:
        raise PlanError(
            f"{path} already exists: pairbench never replaces a stored plan (it may be "
            "approved); write the new plan to another file"
        ) from None
    return plan_sha256(plan)


def read_plan(path: Path) -> ConfirmationPlan:
    """The confirmation plan stored in ``path``.

    **Usage**::

        plan = read_plan(Path("plan.json"))
        plan.n_pairs, plan.order[0]   # (6, ['candidate', 'baseline'])

    Raises:
        PlanError: the file cannot be read, is not JSON, or a field is missing or
            invalid; the message names the file and the first such field.
    """
    return _load(path)[1]


def _load(path: Path) -> tuple[bytes, ConfirmationPlan]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PlanError(f"{path}: cannot read the plan ({exc.strerror or exc})") from None
    try:
        return raw, ConfirmationPlan.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        where = ".".join(str(part) for part in first["loc"])
        what = str(first["msg"]).removeprefix("Input ")
        reason = f"field {where}: {what}" if where else what
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise PlanError(
            f"{path} is not a valid confirmation plan: {reason}{more}; {NEW_PLAN_FIX}"
        ) from None


def _describe(approval: Approval) -> str:
    return f"by {approval.by} at {approval.at.isoformat()}"


def approve(path: Path, by: str, *, at: datetime | None = None) -> ConfirmationPlan:
    """Record ``by``'s approval of the plan in ``path``, with the plan's hash; return it.

    The file is replaced atomically with the same plan plus ``approval``; ``at``
    defaults to now (UTC).

    **Usage**::

        approved = approve(Path("plan.json"), by="Ada")
        approved.approval.plan_sha256 == plan_sha256(approved)   # True

    Raises:
        PlanError: the plan is unreadable or inconsistent, already approved (naming
            who approved it), ``by`` is blank, or the file changed while approving.
    """
    raw, plan = _load(path)
    if plan.approval is not None:
        raise PlanError(
            f"{path} is already approved {_describe(plan.approval)} (plan sha256 "
            f"{plan.approval.plan_sha256}); an approval is recorded once"
        )
    _check(path, plan)
    if not by.strip():
        raise PlanError("approve needs the approver's name: --by NAME")
    approval = Approval(by=by.strip(), at=at or datetime.now(UTC), plan_sha256=plan_sha256(plan))
    approved = plan.model_copy(update={"approval": approval})
    # Replace only the bytes that were approved: an edit made meanwhile is not overwritten.
    if sha256_file(path) != hashlib.sha256(raw).hexdigest():
        raise PlanError(f"{path} changed while it was being approved; review it and approve again")
    write_atomic(path, _plan_bytes(approved))
    return approved


def require_approved(path: Path) -> ConfirmationPlan:
    """The plan in ``path`` if it is approved and unchanged since; else refuse the run.

    **Usage**::

        plan = require_approved(Path("plan.json"))   # before the first attempt

    Raises:
        PlanError: the plan is unreadable or inconsistent.
        RunRefused: the plan is not approved, or its ``plan_sha256`` differs from the
            approved one (it changed after approval).
    """
    plan = read_plan(path)
    if plan.approval is None:
        raise RunRefused(
            f"{path} is not approved: review it, then run `pairbench approve {path} --by NAME`"
        )
    current = plan_sha256(plan)
    if current != plan.approval.plan_sha256:
        raise RunRefused(
            f"{path} changed after approval ({_describe(plan.approval)}): its sha256 is now "
            f"{current}, approved {plan.approval.plan_sha256}; a new plan is needed: "
            f"{NEW_PLAN_FIX}"
        )
    _check(path, plan)
    return plan
