"""Token shapes: strings that look like a credential by their format alone.

The secret detector (``_security``) finds the values a run declares; this finds keys it
never saw, by the shapes providers give them. Each shape is a provider's published
prefix with a realistic minimum length after it, and every shape must stand alone: no
letter, digit, ``_`` or ``-`` right before or after it, so a shape inside a longer word
or identifier (``task-123``, ``sk-learn``, ``disk-usage``) never fires. Run over decoded
text (string values, not a JSON dump of them): in a dump an escape such as ``\\n`` would
glue a letter to a token's first character.

**Usage**:

>>> token_kinds("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE")
['aws_access_key_id']
>>> token_kinds("pip install scikit-learn (once sk-learn), then run task-123")
[]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_START = r"(?<![A-Za-z0-9_-])"
_END = r"(?![A-Za-z0-9_-])"


def _shape(body: str) -> re.Pattern[str]:
    return re.compile(_START + body + _END)


TOKEN_SHAPES: dict[str, re.Pattern[str]] = {
    # Anthropic API and admin keys: ``sk-ant-api03-`` + ~95 characters; any ``sk-ant-``
    # with 32 or more of base64url after it (the version part changes).
    "anthropic": _shape(r"sk-ant-[A-Za-z0-9_-]{32,}"),
    # OpenAI: legacy ``sk-`` + 48 letters and digits, and project / service-account /
    # admin keys (``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``) with 100+ base64url
    # characters; 32 and 40 are floors well below both, far above a word (``sk-learn``).
    "openai": _shape(r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9]{32,})"),
    # GitHub classic tokens: ``ghp_`` (personal), ``gho_`` (OAuth), ``ghu_`` (user-to-
    # server), ``ghs_`` (server-to-server), ``ghr_`` (refresh) + 36 letters and digits.
    "github": _shape(r"gh[pousr]_[A-Za-z0-9]{36,}"),
    # GitHub fine-grained personal access tokens: ``github_pat_`` + 22 characters, ``_``,
    # 59 characters (82 after the prefix; 40 is the floor).
    "github_pat": _shape(r"github_pat_[A-Za-z0-9_]{40,}"),
    # Slack tokens: ``xox`` + a (app), b (bot), p (user), o, s, r (refresh) then
    # numeric workspace/user ids and a secret, dash-separated (``xoxb-123-456-AbC...``).
    # The first part is digits, so a word such as ``xoxo-gossip-...`` does not match.
    "slack": _shape(r"xox[abposr]-[0-9]+-[A-Za-z0-9-]{10,}"),
    # AWS access key ids: ``AKIA`` (long-term) or ``ASIA`` (temporary, STS) + 16
    # uppercase letters and digits, exactly (the id is 20 characters).
    "aws_access_key_id": _shape(r"(?:AKIA|ASIA)[A-Z0-9]{16}"),
    # Google API keys: ``AIza`` + 35 base64url characters (39 in all).
    "google_api_key": _shape(r"AIza[A-Za-z0-9_-]{35}"),
    # Stripe live secret and restricted keys: ``sk_live_`` / ``rk_live_`` + 24 or more.
    "stripe": _shape(r"[sr]k_live_[A-Za-z0-9]{24,}"),
    # JSON Web Tokens (RFC 7519, compact JWS): three base64url segments joined by dots,
    # the header a JSON object (``{"`` encodes as ``eyJ``); an HS256 signature alone is
    # 43 characters, so 16 keeps unsigned or truncated look-alikes out.
    "jwt": _shape(r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}"),
}
"""Kind name -> the shape of its tokens. A find is reported by kind, never by value."""


_NEEDLES: dict[str, tuple[str, ...]] = {
    "anthropic": ("sk-ant-",),
    "openai": ("sk-",),
    "github": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "github_pat": ("github_pat_",),
    "slack": ("xox",),
    "aws_access_key_id": ("AKIA", "ASIA"),
    "google_api_key": ("AIza",),
    "stripe": ("k_live_",),
    "jwt": ("eyJ",),
}
"""Kind name -> literals one of which every token of that kind contains. ``str.__contains__``
finds a literal in a 16 MiB line in milliseconds, where a shape's look-behind makes the
regular expression try every position (about 1.5 s for the nine shapes over an agent's
16 MiB of output, on the event loop): the shape runs only where a literal is."""


def token_kinds(text: str) -> list[str]:
    """The kinds of token shape in ``text``, in table order (each once)."""
    return [
        kind
        for kind, shape in TOKEN_SHAPES.items()
        if any(n in text for n in _NEEDLES[kind]) and shape.search(text)
    ]


def token_kinds_in(texts: Iterable[str]) -> set[str]:
    """The kinds of token shape in any of ``texts``."""
    found: set[str] = set()
    for text in texts:
        found.update(token_kinds(text))
    return found
