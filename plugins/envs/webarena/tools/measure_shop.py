"""Measure the built-in shop: copy-on-reset time, page latency, and the site's RSS as sessions open and close.

Runs the shop as ``python -m agenthub_env_webarena.shop`` (the ``process=True`` mode) and reads its RSS
from /proc. Prints one JSON object; the README's "Built-in shop" section quotes a run.
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from agenthub import popen

from agenthub_env_webarena.shop.app import SECRET_HEADER, Shop
from agenthub_env_webarena.shop.server import READY, SECRET_ENV_VAR


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95)] * 1000, 3),
    }


def main() -> None:
    result: dict[str, object] = {}
    shop = Shop()
    token = shop.open()
    resets = []
    for _ in range(1000):
        start = time.perf_counter()
        shop.reset(token)
        resets.append(time.perf_counter() - start)
    result["copy_on_reset_in_process"] = ms(resets)

    cmd = [sys.executable, "-m", "agenthub_env_webarena.shop"]
    secret = secrets.token_urlsafe(32)  # the session API's (the env's alone, as start_shop does)
    child = popen(cmd, stdout=subprocess.PIPE, env={**os.environ, SECRET_ENV_VAR: secret})
    assert child.stdout is not None
    url = child.stdout.readline().decode()[len(READY) :].strip()
    try:
        with httpx.Client(trust_env=False, timeout=30, headers={SECRET_HEADER: secret}) as http:
            result["site_rss_mib_idle"] = round(rss_mib(child.pid), 1)
            session = http.post(f"{url}/_sessions").json()["base_url"]
            token = session.rsplit("/", 1)[1]
            result["reset_over_http"] = ms(
                [_timed(lambda: http.post(f"{url}/_sessions/{token}/reset")) for _ in range(200)]
            )
            for path in ("/", "/search?q=acme", "/category/clothing?sort=price_asc", "/product/10", "/cart"):
                page = session + path
                result[f"GET {path}"] = ms([_timed(functools.partial(http.get, page)) for _ in range(100)])
            opened = [http.post(f"{url}/_sessions").json()["base_url"] for _ in range(1000)]
            for s in opened:  # each session with a cart item, so its database has pages of its own
                http.post(f"{s}/cart/add", data={"product_id": "10", "Color": "Blue"})
            result["site_rss_mib_1000_open_sessions"] = round(rss_mib(child.pid), 1)
            for s in opened:
                http.delete(f"{url}/_sessions/{s.rsplit('/', 1)[1]}")
            before = rss_mib(child.pid)
            for _ in range(1000):
                s = http.post(f"{url}/_sessions").json()["base_url"]
                http.post(f"{s}/cart/add", data={"product_id": "10", "Color": "Blue"})
                http.delete(f"{url}/_sessions/{s.rsplit('/', 1)[1]}")
            result["site_rss_mib_before_after_1000_open_close"] = [round(before, 1), round(rss_mib(child.pid), 1)]
    finally:
        child.terminate()
        child.wait()
    print(json.dumps(result, indent=2))


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
