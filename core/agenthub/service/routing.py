"""Sticky sessions behind a load balancer: where a session lives, said at create, used by the client.

A session lives in the memory of the server process that created it. Behind one address that spreads
requests over replicas (a Kubernetes Service, any round-robin proxy), a step sent to another replica
would be a 404. So a server that knows its own reachable address (``advertise_url``, e.g. its pod IP)
names the session's URL in the ``Location`` header of the 201 answer (RFC 9110 §10.2.2), and
:class:`agenthub.service.client.EnvClient` sends every later call of that session there.
"""

from __future__ import annotations

import orjson

SESSIONS_PATH = "/v1/sessions/"


def session_location(advertise_url: str | None, answer: bytes) -> dict[str, str] | None:
    """The ``Location`` header of a create answer, or None where the server advertises no address."""
    if advertise_url is None:
        return None
    session_id = orjson.loads(answer)["session_id"]  # creates are rare next to steps: parsing is cheap enough
    return {"Location": f"{advertise_url.rstrip('/')}{SESSIONS_PATH}{session_id}"}


def session_base_url(location: str | None, session_id: str) -> str | None:
    """The server base URL a ``Location`` header names for ``session_id``; None if it names none we follow.

    Only an absolute http(s) URL ending in ``/v1/sessions/<session_id>`` is followed, so a header from
    anything else (a proxy, an older server) leaves the session on the address it was created through.
    """
    if not location or not location.startswith(("http://", "https://")):
        return None
    suffix = SESSIONS_PATH + session_id
    if not location.endswith(suffix):
        return None
    base = location[: -len(suffix)].rstrip("/")
    return base if "://" in base and base.split("://", 1)[1] else None
