"""The study's fixture sites: one builder per case, served one trial at a time.

``SITES`` maps a case's ``fixture`` name to its builder; each class's builders live in their
own module (``_product``, ``_traps``, ``_environment``, ``_epistemic``, ``_calibration_pt``,
``_calibration_ex``, and ``_packages`` for the evidence packages' sites).
"""

from __future__ import annotations

from pairbench.studies.attribution_reliability.site._binding import SiteBinding
from pairbench.studies.attribution_reliability.site._key import trial_key
from pairbench.studies.attribution_reliability.site._kit import (
    NOINDEX,
    WEBDRIVER_PROBE,
    CaseSite,
    SiteBuilder,
    SiteContext,
    esc,
    page,
)
from pairbench.studies.attribution_reliability.site._server import (
    RunningSite,
    SiteHit,
    serve_case,
    serve_site,
    slug_for,
)

SITES: dict[str, SiteBuilder] = {}


def _collect() -> None:
    import importlib

    for name in (
        "_product",
        "_traps",
        "_environment",
        "_epistemic",
        "_calibration_pt",
        "_calibration_ex",
        "_packages",
    ):
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        SITES.update(module.BUILDERS)


_collect()

__all__ = [
    "NOINDEX",
    "SITES",
    "WEBDRIVER_PROBE",
    "CaseSite",
    "RunningSite",
    "SiteBinding",
    "SiteBuilder",
    "SiteContext",
    "SiteHit",
    "esc",
    "page",
    "serve_case",
    "serve_site",
    "slug_for",
    "trial_key",
]
