"""Whose fault an error is: the agent's (a counted failure) or the env's (``env_error``, not counted).

An episode that ends in ``env_error`` is left out of ``agenthub eval``'s score, dropped by trainers and
retried, so an error the agent caused must never be reported as one: an agent that could turn its own
failure into an env error would be rewarded for it. The env's own faults stay env errors: the browser
died, the shop is down, a site timed out, a task config is broken.
"""

from __future__ import annotations

import http.client
import urllib.parse

from agenthub_env_webarena.browser import BrowserCrashed

_SITE_DOWN = (
    "ERR_CONNECTION",
    "ERR_NAME_NOT_RESOLVED",
    "ERR_ADDRESS_UNREACHABLE",
    "ERR_EMPTY_RESPONSE",
    "ERR_TIMED_OUT",
    "ERR_INTERNET_DISCONNECTED",
)
"""Chromium's errors for a site that does not answer: the deployment's fault, whatever the agent did."""


class AgentCausedError(RuntimeError):
    """The state the agent left made a check fail to run; the episode is a counted failure (reward 0)."""


def agent_fault(exc: BaseException, shop_site: str | None) -> str | None:
    """Why ``exc``, raised while scoring the agent's final state, is the agent's doing; None if it is the env's."""
    from agenthub_env_webarena.shop import ShopError

    if isinstance(exc, AgentCausedError):
        return str(exc)
    if isinstance(exc, BrowserCrashed | TimeoutError):
        return None
    if isinstance(exc, ShopError):
        # The shop answered that this session is gone while the shop itself is up: nothing but the agent's
        # actions could have closed it (the env closes its site only when the session ends).
        if exc.status == 404 and shop_site and _shop_up(shop_site):
            return "the task's shop session was gone when the episode was scored"
        return None
    if type(exc).__module__.startswith("playwright"):
        name = type(exc).__name__
        if name == "TimeoutError" or any(code in str(exc) for code in _SITE_DOWN):  # the site's fault
            return None
        first = str(exc).strip().splitlines()
        return f"the page the agent left could not be checked ({first[0] if first else name})"
    return None


def _shop_up(session_url: str) -> bool:
    parts = urllib.parse.urlsplit(session_url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=5)
    try:
        connection.request("GET", "/_health")
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()
