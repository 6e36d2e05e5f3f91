"""Start the shop on loopback and open, reset and close its sessions; helpers for ``program_html``.

The session API needs the shop's secret (:data:`~.app.SECRET_HEADER`): :func:`start_shop` makes a random
one per shop and remembers it for that shop's URL, so the calls here find it; a shop started elsewhere
(``python -m agenthub_env_webarena.shop`` with ``AGENTHUB_SHOP_SECRET``) is named with ``secret=``.
Session tokens are the keys to their sessions' pages: they are logged only at DEBUG and never
appear in an error's text (:func:`redact`). Calls use the standard library's HTTP client, which logs
nothing (httpx logs every request's URL at INFO).
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import uvicorn
from agenthub import popen

from agenthub_env_webarena.containment import redact
from agenthub_env_webarena.evaluators import Helper
from agenthub_env_webarena.shop.app import SECRET_HEADER, Shop, create_app

READY = "SHOP_URL "
SECRET_ENV_VAR = "AGENTHUB_SHOP_SECRET"
"""How ``start_shop(process=True)`` hands the secret to the child (not its command line: ``ps`` shows that)."""

log = logging.getLogger(__name__)
_secrets: dict[str, str] = {}
_secrets_lock = threading.Lock()


def remember_secret(shop_url: str, secret: str) -> None:
    """Make ``secret`` the one used for the shop at ``shop_url`` (done by :func:`start_shop`)."""
    with _secrets_lock:
        _secrets[shop_url.rstrip("/")] = secret


class ShopError(RuntimeError):
    """The shop could not be started or a session call failed; the message says what to do."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The shop's HTTP status when it answered (404: no such session), None when it did not answer."""


def start_shop(*, host: str = "127.0.0.1", port: int = 0, process: bool = False) -> tuple[str, Callable[[], None]]:
    """Serve the shop on ``host:port`` (0: a free port): ``(base_url, stop)``.

    In a thread of this process by default; ``process=True`` runs it in a child process that dies
    with this one (so a busy env server does not share its GIL with the site).
    """
    secret = secrets.token_urlsafe(32)
    if process:
        started = _start_process(host, port, secret)
        remember_secret(started[0], secret)
        return started
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    config = uvicorn.Config(create_app(Shop(), secret), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="agenthub-shop", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise ShopError(f"the shop did not start on {host}:{port}; see the log above for uvicorn's reason")
        time.sleep(0.01)
    url = f"http://{host}:{sock.getsockname()[1]}"
    remember_secret(url, secret)

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

    return url, stop


def _start_process(host: str, port: int, secret: str) -> tuple[str, Callable[[], None]]:
    cmd = [sys.executable, "-m", "agenthub_env_webarena.shop", "--host", host, "--port", str(port)]
    child = popen(cmd, stdout=subprocess.PIPE, env={**os.environ, SECRET_ENV_VAR: secret})
    assert child.stdout is not None
    line = child.stdout.readline().decode()
    if not line.startswith(READY):
        child.kill()
        child.wait()
        raise ShopError(f"the shop process exited before serving (exit {child.poll()}); run {' '.join(cmd)} to see why")

    def stop() -> None:
        child.terminate()
        try:
            child.wait(timeout=10)
        except Exception:
            child.kill()
            child.wait()
        if child.stdout:
            child.stdout.close()

    return line[len(READY) :].strip(), stop


def new_session_site(shop_url: str, *, secret: str | None = None) -> str:
    """Open a session with fresh state: its base URL (the ``shopping`` site for that session's tasks)."""
    root = shop_url.rstrip("/")
    return str(_call("POST", f"{root}/_sessions", _secret_for(root, secret))["base_url"])


def _split(session_url: str) -> tuple[str, str]:
    root, sep, token = session_url.rstrip("/").rpartition("/s/")
    if not sep or not token:
        raise ShopError(
            f"{redact(session_url)!r} is not a shop session URL (http://HOST:PORT/s/TOKEN from new_session_site)"
        )
    return root, token


def reset_session_site(session_url: str, *, secret: str | None = None) -> None:
    """Put the session back to the template state (empty cart, the seeded orders, the default account)."""
    root, token = _split(session_url)
    _call("POST", f"{root}/_sessions/{token}/reset", _secret_for(root, secret))


def close_session_site(session_url: str, *, secret: str | None = None) -> None:
    root, token = _split(session_url)
    _call("DELETE", f"{root}/_sessions/{token}", _secret_for(root, secret))


def _secret_for(root: str, secret: str | None) -> str:
    if secret:
        return secret
    with _secrets_lock:
        known = _secrets.get(root)
    if known is None:
        raise ShopError(
            f"no secret for the shop at {root}: it was not started by start_shop in this process; pass secret= "
            f"(the {SECRET_ENV_VAR} it was started with)"
        )
    return known


def _call(method: str, url: str, secret: str | None) -> Any:
    """One request, its JSON answer; a failure is a :class:`ShopError` whose text holds no session token."""
    parts = urllib.parse.urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    headers = {SECRET_HEADER: secret} if secret else {}
    log.debug("shop %s %s", method, redact(url))
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=30)
    try:
        connection.request(method, target, headers=headers)
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException) as exc:
        raise ShopError(f"{method} {redact(url)} failed ({exc}); is the shop running (start_shop)?") from exc
    finally:
        connection.close()
    if response.status >= 400:
        raise ShopError(f"{method} {redact(url)}: HTTP {response.status}: {redact(body[:200])}", status=response.status)
    try:
        return json.loads(body)
    except ValueError as exc:
        raise ShopError(f"{method} {redact(url)} answered no JSON: {redact(body[:200])}") from exc


def shop_helpers(session_url: str) -> dict[str, Helper]:
    """The site's ``func:`` helpers for ``evaluators.evaluate(helpers=...)``, bound to one session.

    ``shopping_get_latest_order_url()`` is WebArena's name (there it asks Magento's admin API); here it
    asks the session's ``/api/latest-order``. ``shopping_get_cart_contents()`` is this site's own: one
    line per cart item, ``name | Size: M | Color: Blue | Qty: 2``.
    """
    base = session_url.rstrip("/")

    def latest_order_url() -> str:
        return str(_call("GET", f"{base}/api/latest-order", None)["url"])

    def cart_contents() -> str:
        lines = []
        for item in _call("GET", f"{base}/api/cart", None):
            parts = [item["name"], *(f"{k}: {v}" for k, v in item["options"].items()), f"Qty: {item['qty']}"]
            lines.append(" | ".join(parts))
        return "\n".join(lines)

    return {"shopping_get_latest_order_url": latest_order_url, "shopping_get_cart_contents": cart_contents}
