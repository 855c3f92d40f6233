"""The report's spend paragraph: what the run counted against the ceiling, and why; and the
package recordings judged, by hash.

The ceiling holds calibration included, so the paragraph names every part of the total: the
run's own spend, the earlier calibration runs counted when it started (by id), the declared
``budget.prior_spend_usd``, the sessions charged their declared worst case because the engine
reported no cost, and every overshoot (a session that cost more than its declared worst case,
which raised the reservation of every later session to the largest cost seen).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view._doc import Block, Table


def recording_blocks(part: Mapping[str, Any]) -> list[Block]:
    """The package recordings judged, by hash: the same bytes for every run under the lock."""
    recordings = part.get("recordings") or {}
    if not recordings:
        return []
    return [
        "Package recordings judged (recorded once per trial under the lock, reused by every "
        "arm and run under it):",
        Table(
            ["Package session", "Recording SHA-256"],
            [[k, recordings[k]] for k in sorted(recordings)],
        ),
    ]


def spend_blocks(part: Mapping[str, Any]) -> list[Block]:
    account = part.get("spend")
    if not account:
        return recording_blocks(part)
    own = account["this_run"]
    ceiling = account["ceiling_usd"]
    of = f" of the ${ceiling:.2f} ceiling" if ceiling is not None else " (no ceiling declared)"
    counted = account["counted"]
    blocks: list[Block] = [
        f"Spend against the ceiling: ${account['total_usd']:.4f}{of}: this run "
        f"${own['usd']:.4f} over {own['sessions']} session(s); calibration runs counted "
        f"before it ${account['counted_usd']:.4f} ("
        + ("; ".join(counted) if counted else "none found beside it")
        + f"); declared budget.prior_spend_usd ${account['declared_prior_usd']:.4f}."
    ]
    if own["charged"]:
        blocks.append(
            f"{own['charged']} session(s) charged their declared worst case "
            "(cost_per_trial_usd): the engine declares a model but reported no cost, so its "
            "spend is unknown, not $0."
        )
    if own["overshoots"]:
        blocks.append(
            f"Overshoots ({len(own['overshoots'])}): sessions that cost more than their "
            "declared worst case; each raised the reservation of every later session to "
            "the largest cost seen."
        )
        blocks.append(
            Table(
                ["Task", "Trial", "Attempt", "Cost", "Declared worst case"],
                [
                    [
                        o["task"],
                        str(o["trial"]),
                        str(o["attempt"]),
                        f"${o['cost_usd']:.4f}",
                        f"${o['declared_usd']:.4f}",
                    ]
                    for o in own["overshoots"]
                ],
            )
        )
    return [*blocks, *recording_blocks(part)]
