"""``python -m agenthub_env_webarena.shop``: serve the built-in shop (what ``start_shop(process=True)`` runs).

The session API's secret comes from ``$AGENTHUB_SHOP_SECRET``; without it one is made and written to
stderr, for the one who started the shop (pass it as ``new_session_site(url, secret=...)``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import sys

import uvicorn
from agenthub import watch_parent

from agenthub_env_webarena.shop.app import SECRET_HEADER, Shop, create_app
from agenthub_env_webarena.shop.server import READY, SECRET_ENV_VAR


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the built-in WebArena-style shop on loopback.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (printed as 'SHOP_URL http://...')")
    args = parser.parse_args()
    watch_parent(os.getppid())  # the kernel's parent-death signal is not everywhere
    secret = os.environ.pop(SECRET_ENV_VAR, "")
    if not secret:
        secret = secrets.token_urlsafe(32)
        print(f"session API secret (header {SECRET_HEADER}): {secret}", file=sys.stderr, flush=True)
    app = create_app(Shop(), secret)  # the catalogue is loaded before the URL is printed: a printed URL serves
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)  # connections made once the URL is printed wait in the backlog instead of being refused
    print(f"{READY}http://{args.host}:{sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")).run(sockets=[sock])


if __name__ == "__main__":
    main()
