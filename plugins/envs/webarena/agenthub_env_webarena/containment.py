"""Where a session's pages may go: the task's sites and nothing else, enforced by the browser.

An agent drives a real browser, so every URL it can make the browser load is a way out of its task:
``file:`` (the server's files), ``chrome:`` (the browser's command line), another port on loopback (the
env server itself, the shop's session API, anything else listening), ``javascript:`` (script in the
page). :class:`SitePolicy` says which URLs are the task's: the configured sites, each by its origin
(scheme, host, port), and the built-in shop's session site by its origin *and* its ``/s/<token>``
path, so a page cannot reach the shop's other sessions or its session API. Origins are compared after
the URL standard's host parsing (``127.1``, ``0x7f000001`` and ``2130706433`` are ``127.0.0.1``;
``localhost``, ``[::1]`` and ``127.0.0.2`` are other hosts), never as strings.

:func:`contain` puts the policy into a browser context: every request Chromium makes for any page,
frame or worker of the context (navigations, redirects, subresources, fetch/XHR, ``file:`` loads)
passes :meth:`BrowserContext.route`, which aborts what the policy refuses before it is sent;
WebSockets pass ``route_web_socket``; service workers are blocked when the context is made (they could
otherwise answer requests without routing). Schemes that never reach routing (``chrome:``,
``data:``, ``javascript:``, ``view-source:``) are refused by :meth:`SitePolicy.refusal` before the env
navigates, and Chromium itself refuses a web page's own navigations to them (a web page cannot open
``chrome:``, ``file:``, ``view-source:`` or a top-level ``data:`` URL); a document that commits with a
refused URL anyway is replaced by a blank page before it is observed (:func:`escaped`).
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

BLANK = "about:blank"
"""The one non-network page allowed: a new tab, and what a refused page is replaced by."""

_WEB = {"http": 80, "https": 443}
_WS = {"ws": "http", "wss": "https"}
_NUMBER = re.compile(r"^(0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$")
_TOKEN = re.compile(r"(/s/|/_sessions/)[^/\s?#'\"]+")


def redact(text: str) -> str:
    """``text`` with every built-in shop session token (the key to a session's pages) replaced by ``…``."""
    return _TOKEN.sub(r"\1…", text)


@dataclass(frozen=True)
class Site:
    """One place pages may load from: an origin, and optionally the path the site lives under."""

    scheme: str
    host: str
    port: int
    prefix: str = ""
    """``""``: the whole origin; ``/s/<token>``: that path and everything under it."""

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = _WEB[self.scheme] == self.port
        return f"{self.scheme}://{host}{'' if default else f':{self.port}'}"

    def __str__(self) -> str:
        return self.origin + self.prefix

    def holds(self, scheme: str, host: str, port: int, path: str) -> bool:
        if (scheme, host, port) != (self.scheme, self.host, self.port):
            return False
        return not self.prefix or path == self.prefix or path.startswith(self.prefix + "/")


def _ipv4_number(part: str) -> int | None:
    if not _NUMBER.match(part):
        return None
    if part[:2].lower() == "0x":
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part[0] == "0":
        return int(part, 8)
    return int(part)


def canonical_host(host: str) -> str | None:
    """The host as the URL standard parses it (IPv4 in any notation, IPv6 compressed, names lowercased,
    IDNA-encoded); None when it is not a valid host."""
    host = urllib.parse.unquote(host).strip().lower()
    if host.startswith("[") and host.endswith("]"):
        try:
            return ipaddress.IPv6Address(host[1:-1]).compressed
        except ValueError:
            return None
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host).compressed
        except ValueError:
            return None
    host = host.rstrip(".") if host.endswith(".") and host != "." else host
    if not host:
        return None
    parts = host.split(".")
    if _NUMBER.match(parts[-1]) or parts[-1].isdigit():  # "ends in a number": an IPv4 address or invalid
        numbers = [_ipv4_number(p) for p in parts]
        if len(parts) > 4 or any(n is None for n in numbers):
            return None
        values = [n for n in numbers if n is not None]
        if any(v > 255 for v in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
            return None
        address = 0
        for i, value in enumerate(values[:-1]):
            address += value << (8 * (3 - i))
        return str(ipaddress.IPv4Address(address + values[-1]))
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def _without_dot_segments(path: str) -> str:
    out: list[str] = []
    for segment in path.split("/"):
        decoded = segment.lower().replace("%2e", ".")
        if decoded == "..":
            if len(out) > 1:
                out.pop()
        elif decoded != ".":
            out.append(segment)
    if path.split("/")[-1].lower().replace("%2e", ".") in (".", ".."):
        out.append("")
    return "/".join(out) or "/"


def parse_web_url(url: str) -> tuple[str, str, int, str] | None:
    """``(scheme, host, port, path)`` of an http(s) or ws(s) URL, ws mapped to http; None otherwise."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        scheme = _WS.get(parts.scheme.lower(), parts.scheme.lower())
        if scheme not in _WEB or parts.hostname is None:
            return None
        netloc_host = parts.netloc.rpartition("@")[2]
        bracketed = netloc_host.startswith("[")
        raw_host = netloc_host.split("]")[0] + "]" if bracketed else netloc_host.rsplit(":", 1)[0]
        port = parts.port or _WEB[scheme]
    except ValueError:
        return None
    host = canonical_host(raw_host)
    if host is None:
        return None
    return scheme, host, port, _without_dot_segments(parts.path or "/")


def site_of(url: str, *, whole_origin: bool = True) -> Site:
    """The :class:`Site` a configured URL names: its origin, or (``whole_origin=False``) its origin and path."""
    parsed = parse_web_url(url)
    if parsed is None:
        raise ValueError(f"{url!r} is not an http(s) URL with a valid host; a site must be http://HOST[:PORT][/PATH]")
    scheme, host, port, path = parsed
    return Site(scheme, host, port, "" if whole_origin else path.rstrip("/"))


class SitePolicy:
    """The sites a session's pages may load from; everything else is refused, with the reason."""

    def __init__(self, sites: Iterable[Site]) -> None:
        self.sites = tuple(dict.fromkeys(sites))

    def describe(self) -> str:
        return ", ".join(str(s) for s in self.sites) or "none"

    def refusal(self, url: str) -> str | None:
        """None when ``url`` may be loaded; else why not, in words for the model."""
        text = url.strip()
        if text == BLANK:
            return None
        parsed = parse_web_url(text)
        if parsed is not None and any(site.holds(*parsed) for site in self.sites):
            return None
        scheme = text.split(":", 1)[0].lower() if ":" in text else ""
        if parsed is None and scheme and scheme not in _WEB and scheme not in _WS:
            what = f"{scheme}: URLs are not web pages"
        else:
            what = "it is not one of the task's sites"
        return f"{what}; only the task's sites ({self.describe()}) may be visited"

    def allows(self, url: str) -> bool:
        return self.refusal(url) is None


Refused = Callable[[str, str, bool], None]
"""Called with (url, reason, is_main_frame_navigation) for each request the browser refused."""


async def contain(context: Any, policy: SitePolicy, on_refused: Refused) -> None:
    """Route every request and WebSocket of ``context`` through ``policy`` (before any page is opened)."""

    async def request(route: Any) -> None:
        req = route.request
        reason = policy.refusal(req.url)
        if reason is None:
            await route.fallback()
            return
        main = bool(req.is_navigation_request()) and _is_main(req)
        on_refused(req.url, reason, main)
        await route.abort("blockedbyclient")

    async def websocket(ws: Any) -> None:
        reason = policy.refusal(ws.url)
        if reason is None:
            ws.connect_to_server()
            return
        on_refused(ws.url, reason, False)
        await ws.close(code=1008, reason="refused: not one of the task's sites")

    await context.route("**/*", request)
    if hasattr(context, "route_web_socket"):  # Playwright >= 1.48
        await context.route_web_socket(re.compile(".*"), websocket)


async def contained_context(host: Any, policy: SitePolicy, on_refused: Refused, **options: Any) -> tuple[Any, Any]:
    """A new context of ``host``'s browser held to ``policy``: ``(context, proxy)``; close both when done.

    Both layers: its only network path is a :class:`~.proxy.PolicyProxy` of its own (redirect hops,
    WebSockets, workers, preconnects), and routing refuses early what the proxy would (with the frame it
    came from, for the observation) plus ``file:`` loads, which never reach a proxy. Service workers are
    blocked: they could answer a page's requests from a cache without either.
    """
    from agenthub_env_webarena.proxy import PolicyProxy

    proxy = PolicyProxy(policy, on_refused)
    server = await proxy.start()
    try:
        context = await host.new_context(**options, proxy={"server": server}, service_workers="block")
        await contain(context, policy, on_refused)
    except BaseException:
        await proxy.close()
        raise
    return context, proxy


def _is_main(request: Any) -> bool:
    try:
        frame = request.frame
        return frame.parent_frame is None
    except Exception:  # a service worker's request has no frame
        return False


def escaped(url: str, policy: SitePolicy) -> str | None:
    """Why a page showing ``url`` must not be observed (None: it may be): a document the routing never saw."""
    if url in (BLANK, "", "about:srcdoc"):
        return None
    return policy.refusal(url)
