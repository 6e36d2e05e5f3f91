"""Start the shop on loopback and open, reset and close its sessions; helpers for ``program_html``."""

from __future__ import annotations

import atexit
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import httpx
import uvicorn
from agenthub import popen

from agenthub_env_webarena.evaluators import Helper
from agenthub_env_webarena.shop.app import Shop, create_app

READY = "SHOP_URL "


class ShopError(RuntimeError):
    """The shop could not be started or a session call failed; the message says what to do."""


def start_shop(*, host: str = "127.0.0.1", port: int = 0, process: bool = False) -> tuple[str, Callable[[], None]]:
    """Serve the shop on ``host:port`` (0: a free port): ``(base_url, stop)``.

    In a thread of this process by default; ``process=True`` runs it in a child process that dies
    with this one (so a busy env server does not share its GIL with the site).
    """
    if process:
        return _start_process(host, port)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    config = uvicorn.Config(create_app(Shop()), log_level="warning", access_log=False, lifespan="off")
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

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

    return url, stop


def _start_process(host: str, port: int) -> tuple[str, Callable[[], None]]:
    cmd = [sys.executable, "-m", "agenthub_env_webarena.shop", "--host", host, "--port", str(port)]
    child = popen(cmd, stdout=subprocess.PIPE)
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


def new_session_site(shop_url: str, *, client: httpx.Client | None = None) -> str:
    """Open a session with fresh state: its base URL (the ``shopping`` site for that session's tasks)."""
    response = _call("POST", f"{shop_url.rstrip('/')}/_sessions", client)
    return str(response.json()["base_url"])


def _split(session_url: str) -> tuple[str, str]:
    root, sep, token = session_url.rstrip("/").rpartition("/s/")
    if not sep or not token:
        raise ShopError(f"{session_url!r} is not a shop session URL (http://HOST:PORT/s/TOKEN from new_session_site)")
    return root, token


def reset_session_site(session_url: str, *, client: httpx.Client | None = None) -> None:
    """Put the session back to the template state (empty cart, the seeded orders, the default account)."""
    root, token = _split(session_url)
    _call("POST", f"{root}/_sessions/{token}/reset", client)


def close_session_site(session_url: str, *, client: httpx.Client | None = None) -> None:
    root, token = _split(session_url)
    _call("DELETE", f"{root}/_sessions/{token}", client)


_client: httpx.Client | None = None


def _default_client() -> httpx.Client:
    # One pooled client: a fresh one per call costs ~10 ms of TLS setup even for plain HTTP. Loopback
    # never goes through a proxy from the environment.
    global _client
    if _client is None:
        _client = httpx.Client(timeout=30, trust_env=False)
        atexit.register(_client.close)
    return _client


def _call(method: str, url: str, client: httpx.Client | None) -> httpx.Response:
    try:
        response = (client or _default_client()).request(method, url)
    except httpx.HTTPError as exc:
        raise ShopError(f"{method} {url} failed ({exc}); is the shop running (start_shop)?") from exc
    if response.status_code >= 400:
        raise ShopError(f"{method} {url}: HTTP {response.status_code}: {response.text[:200]}")
    return response


def shop_helpers(session_url: str) -> dict[str, Helper]:
    """The site's ``func:`` helpers for ``evaluators.evaluate(helpers=...)``, bound to one session.

    ``shopping_get_latest_order_url()`` is WebArena's name (there it asks Magento's admin API); here it
    asks the session's ``/api/latest-order``. ``shopping_get_cart_contents()`` is this site's own: one
    line per cart item, ``name | Size: M | Color: Blue | Qty: 2``.
    """
    base = session_url.rstrip("/")

    def latest_order_url() -> str:
        return str(_call("GET", f"{base}/api/latest-order", None).json()["url"])

    def cart_contents() -> str:
        lines = []
        for item in _call("GET", f"{base}/api/cart", None).json():
            parts = [item["name"], *(f"{k}: {v}" for k, v in item["options"].items()), f"Qty: {item['qty']}"]
            lines.append(" | ".join(parts))
        return "\n".join(lines)

    return {"shopping_get_latest_order_url": latest_order_url, "shopping_get_cart_contents": cart_contents}
