"""Client CPU per env request for candidate transports of ``EnvClient``, side by side in one run.

Each transport plays whole ``guess`` episodes (create, 8 steps, delete) against one
real ``agenthub serve env=guess`` process, ``concurrency`` episodes at a time, and
the benchmark process's own CPU time is divided by the requests it sent. The
server's CPU is reported too, to show who the bottleneck was.

Transports:

- ``httpx``: ``httpx.AsyncClient`` as ``EnvClient`` used it before (pooled, keep-alive);
- ``httpcore``: httpx's own connection pool without httpx's request/response models (tuned httpx);
- ``aiohttp``: ``aiohttp.ClientSession`` with a pooled ``TCPConnector`` and orjson bodies;
- ``lean``: one persistent asyncio connection per worker, httptools parsing the answers.

    pip install -e '.[bench]'
    python benchmarks/env_client_transports.py [--seconds 4] [--concurrency 1 64 256] [--loop asyncio uvloop]
    python benchmarks/env_client_transports.py --quick    # smoke run: 0.3 s cells, concurrency 1 and 16; temp dir

Writes benchmarks/results/env_client_transports.json (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpcore
import httptools
import httpx
import orjson
import psutil
import uvloop
from provenance import write_result  # a sibling module of this script

from agenthub import LocalServer

RESULTS = Path(__file__).resolve().parent / "results"
STEPS = 8

# request(method, path, body) -> (status, body bytes)
Request = Callable[[str, str, Any], Awaitable[tuple[int, bytes]]]


class Transport:
    name = ""

    async def open(self, base_url: str, concurrency: int) -> None: ...

    def requester(self) -> Request:  # one per worker (the lean client holds one connection each)
        raise NotImplementedError

    async def close(self) -> None: ...


class Httpx(Transport):
    name = "httpx"

    async def open(self, base_url: str, concurrency: int) -> None:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self.client = httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60.0)

    def requester(self) -> Request:
        async def request(method: str, path: str, body: Any) -> tuple[int, bytes]:
            response = await self.client.request(method, path, json=body)
            return response.status_code, response.content

        return request

    async def close(self) -> None:
        await self.client.aclose()


class Httpcore(Transport):
    name = "httpcore"

    async def open(self, base_url: str, concurrency: int) -> None:
        self.base = base_url.encode()
        self.pool = httpcore.AsyncConnectionPool(max_connections=concurrency, max_keepalive_connections=concurrency)

    def requester(self) -> Request:
        async def request(method: str, path: str, body: Any) -> tuple[int, bytes]:
            content = orjson.dumps(body) if body is not None else b""
            headers = [(b"Content-Type", b"application/json")] if body is not None else []
            response = await self.pool.request(
                method.encode(), self.base + path.encode(), headers=headers, content=content
            )
            return response.status, response.content

        return request

    async def close(self) -> None:
        await self.pool.aclose()


class Aiohttp(Transport):
    name = "aiohttp"

    async def open(self, base_url: str, concurrency: int) -> None:
        connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
        self.session = aiohttp.ClientSession(base_url=base_url, connector=connector)

    def requester(self) -> Request:
        async def request(method: str, path: str, body: Any) -> tuple[int, bytes]:
            data = orjson.dumps(body) if body is not None else None
            headers = {"Content-Type": "application/json"} if body is not None else None
            async with self.session.request(method, path, data=data, headers=headers) as response:
                return response.status, await response.read()

        return request

    async def close(self) -> None:
        await self.session.close()


class _LeanProtocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self.body: list[bytes] = []
        self.transport: Any = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # uvloop's transports are not asyncio.Transport instances

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        assert self.waiter is not None
        self.waiter.set_result((self.parser.get_status_code(), b"".join(self.body)))
        self.body = []

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("connection lost"))


class Lean(Transport):
    name = "lean"

    async def open(self, base_url: str, concurrency: int) -> None:
        host, port = base_url.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.host_header = f"Host: {host}:{port}\r\n".encode()
        self.protocols: list[_LeanProtocol] = []

    def requester(self) -> Request:
        protocol: _LeanProtocol | None = None

        async def request(method: str, path: str, body: Any) -> tuple[int, bytes]:
            nonlocal protocol
            if protocol is None:
                _, protocol = await asyncio.get_running_loop().create_connection(_LeanProtocol, self.host, self.port)
                self.protocols.append(protocol)
            content = orjson.dumps(body) if body is not None else b""
            head = f"{method} {path} HTTP/1.1\r\nContent-Length: {len(content)}\r\nContent-Type: application/json\r\n"
            protocol.waiter = asyncio.get_running_loop().create_future()
            assert protocol.transport is not None
            protocol.transport.write(head.encode() + self.host_header + b"\r\n" + content)
            return await protocol.waiter

        return request

    async def close(self) -> None:
        for protocol in self.protocols:
            if protocol.transport is not None:
                protocol.transport.close()


TRANSPORTS: dict[str, type[Transport]] = {t.name: t for t in (Httpx, Httpcore, Aiohttp, Lean)}


async def measure(transport: Transport, url: str, server_pid: int, seconds: float, concurrency: int) -> dict[str, Any]:
    await transport.open(url, concurrency)
    requests = 0
    server = psutil.Process(server_pid)
    deadline = 0.0

    async def worker(offset: int) -> None:
        nonlocal requests
        request = transport.requester()
        episode = offset
        while time.perf_counter() < deadline:
            status, body = await request("POST", "/v1/sessions", {"task_id": episode % 10_000, "seed": episode})
            assert status == 201, (status, body)
            session_id = orjson.loads(body)["session_id"]
            for turn in range(STEPS):
                request_id = f"{episode}-{turn}"
                status, body = await request(
                    "POST", f"/v1/sessions/{session_id}/step", {"action": "look", "request_id": request_id}
                )
                assert status == 200, (status, body)
                orjson.loads(body)
            status, _ = await request("DELETE", f"/v1/sessions/{session_id}", None)
            assert status == 204, status
            requests += STEPS + 2
            episode += concurrency

    # warm-up: open the connections
    deadline = time.perf_counter() + 0.3
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    requests = 0
    server_cpu = sum(server.cpu_times()[:2])
    cpu, wall = time.process_time(), time.perf_counter()
    deadline = wall + seconds
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu
    server_cpu = sum(server.cpu_times()[:2]) - server_cpu
    await transport.close()
    return {
        "transport": transport.name,
        "concurrency": concurrency,
        "requests_per_s": round(requests / wall, 1),
        "client_cpu_ms_per_request": round(1000 * cpu / requests, 4),
        "server_cpu_ms_per_request": round(1000 * server_cpu / requests, 4),
        "client_cpu_share": round(cpu / wall, 3),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=None, help="seconds per cell (default 4; quick 0.3)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=None, help="default 1 64 256; quick 1 16")
    parser.add_argument("--transports", nargs="+", default=list(TRANSPORTS), choices=list(TRANSPORTS))
    parser.add_argument("--loop", nargs="+", default=["asyncio", "uvloop"], choices=["asyncio", "uvloop"])
    parser.add_argument("--quick", action="store_true", help="smoke run: 0.3 s cells, concurrency 1 and 16; temp dir")
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    args = parser.parse_args(argv)
    args.seconds = args.seconds or (0.3 if args.quick else 4.0)
    args.concurrency = args.concurrency or ([1, 16] if args.quick else [1, 64, 256])
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS
    rows = []
    with LocalServer("guess", overrides={"max_sessions": 2 * max(args.concurrency)}) as server:
        for loop in args.loop:
            factory = uvloop.new_event_loop if loop == "uvloop" else None
            for concurrency in args.concurrency:
                for name in args.transports:
                    with asyncio.Runner(loop_factory=factory) as runner:
                        row = runner.run(measure(TRANSPORTS[name](), server.url, server.pid, args.seconds, concurrency))
                    row["loop"] = loop
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    report = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "versions": {"httpx": httpx.__version__, "httpcore": httpcore.__version__, "aiohttp": aiohttp.__version__},
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    write_result(args.out / "env_client_transports.json", report, args)


if __name__ == "__main__":
    main()
