"""Where a case's site listens and the base URLs engines are told to use.

By default both origins bind 127.0.0.1 and are advertised as ``http://127.0.0.1:<port>``
and ``http://localhost:<port2>``: reachable by local engines only. A hosted engine reaches
them through a reverse proxy or a tunnel: bind an address the proxy can reach (``host``)
and advertise the proxy's two public origins (``public_url`` for the main origin,
``other_public_url`` for the second), and fix the two ports (``port``, ``other_port``) so the
proxy forwards to them; it forwards paths unchanged (``/v/<slug>/...``). The slug is an
unguessable per-trial capability (see ``_key``), so a public proxy exposes nothing an
outsider can find.

Each value may be a whole ``${env:NAME}`` reference, read when the site starts, so a tunnel
whose address changes per session needs no edit of the (hashed) experiment.

**Usage**::

    binding = SiteBinding(host="127.0.0.2", public_url="https://fixture.example.org",
                          other_public_url="https://fixture-b.example.org")
    with serve_case("P01", seed=7, binding=binding.resolved(os.environ)) as site:
        site.start_url   # https://fixture.example.org/v/<slug>
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

from pydantic import Field, model_validator

from pairbench._errors import SpecError
from pairbench._model import Frozen
from pairbench.spec._models import env_ref

LOOPBACK = "127.0.0.1"
_WHERE = "agent.settings.sites"


class SiteBinding(Frozen):
    """``agent.settings.sites``: ``{host, public_url, other_public_url}``."""

    host: str = LOOPBACK
    """The address both origins bind (an IP address; ``0.0.0.0`` or ``::`` only with
    public URLs, as there is then no single address to advertise)."""
    public_url: str | None = None
    """The main origin as engines reach it (``https://fixture.example.org``: scheme, host and
    optional port, no path). Requires ``other_public_url``."""
    other_public_url: str | None = None
    """The second origin as engines reach it: another host name than ``public_url``'s, as
    the external-domain cases need a different site."""
    port: int | None = Field(default=None, ge=1, le=65535)
    """A fixed port for the main origin of every site (with ``other_port``): a proxy
    configured once forwards to it, and the sites are told apart by their slug
    (``_hub``). Default: each site gets two free ports of its own."""
    other_port: int | None = Field(default=None, ge=1, le=65535)
    """The second origin's fixed port."""

    @model_validator(mode="after")
    def _coherent(self) -> SiteBinding:
        problems = binding_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def resolved(self, environ: Mapping[str, str]) -> SiteBinding:
        """Each whole ``${env:NAME}`` value replaced by ``environ[NAME]``; ``SpecError``
        names every unset one and the fix."""
        values: dict[str, str | None] = {}
        missing: list[str] = []
        values_as_is = self.model_dump(include={"port", "other_port"})
        for name in ("host", "public_url", "other_public_url"):
            value = getattr(self, name)
            ref = env_ref(value) if value is not None else None
            if ref is not None and ref not in environ:
                missing.append(
                    f"{_WHERE}.{name}: reads the runner's {ref}, which is not set. "
                    f"Fix: export {ref}=... before running"
                )
            values[name] = environ.get(ref, "") if ref is not None else value
        if missing:
            raise SpecError(missing)
        try:
            return SiteBinding.model_validate({**values, **values_as_is})
        except ValueError as exc:
            raise SpecError([f"{_WHERE}: {exc}"]) from None

    def origins(self, main_port: int, other_port: int) -> tuple[str, str]:
        """The two origins advertised to engines (no trailing slash).

        >>> SiteBinding().origins(8001, 8002)
        ('http://127.0.0.1:8001', 'http://localhost:8002')
        >>> SiteBinding(host="127.0.0.2").origins(8001, 8002)
        ('http://127.0.0.2:8001', 'http://127.0.0.2:8002')
        """
        if self.public_url and self.other_public_url:
            return self.public_url.rstrip("/"), self.other_public_url.rstrip("/")
        if self.host == LOOPBACK:
            # Another host name, not just another port: engines that keep to one host see
            # the second origin as the other site it plays.
            return f"http://{LOOPBACK}:{main_port}", f"http://localhost:{other_port}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{main_port}", f"http://{host}:{other_port}"


def binding_problems(binding: SiteBinding) -> list[str]:
    """What is wrong with ``binding`` (``${env:NAME}`` values are checked once resolved)."""
    problems: list[str] = []
    host = binding.host
    if env_ref(host) is None:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            problems.append(
                f"host {host!r} is not an IP address. Fix: host: 127.0.0.1 (or the address "
                "your reverse proxy reaches)"
            )
            address = None
        if address is not None and address.is_unspecified and not binding.public_url:
            problems.append(
                f"host {host!r} binds every interface, so there is no address to give engines. "
                "Fix: add public_url and other_public_url (the proxy's origins)"
            )
    urls = {"public_url": binding.public_url, "other_public_url": binding.other_public_url}
    for name, url in urls.items():
        if url is None or env_ref(url) is not None:
            continue
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            problems.append(f"{name} {url!r} is not an http(s) URL. Fix: https://host[:port]")
        elif parts.path not in ("", "/") or parts.query or parts.fragment:
            problems.append(
                f"{name} {url!r} has a path; pages link to /v/<slug>/... from the origin's root. "
                f"Fix: {parts.scheme}://{parts.netloc} (forward paths unchanged)"
            )
    if (binding.port is None) != (binding.other_port is None) or (
        binding.port is not None and binding.port == binding.other_port
    ):
        problems.append("port and other_port go together and differ. Fix: give two free ports")
    if (binding.public_url is None) != (binding.other_public_url is None):
        problems.append(
            "public_url and other_public_url go together: the second origin must be reachable "
            "too. Fix: give both (two host names on the proxy)"
        )
    elif (
        binding.public_url
        and binding.other_public_url
        and not any(env_ref(u) for u in urls.values() if u)
        and urlsplit(binding.public_url).netloc == urlsplit(binding.other_public_url).netloc
    ):
        problems.append(
            "other_public_url must be another origin than public_url. Fix: a second host name"
        )
    return problems
