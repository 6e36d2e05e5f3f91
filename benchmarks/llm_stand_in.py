"""A stand-in for an OpenAI-compatible LLM server: a latency that grows with load, fixed reply, next to no CPU.

It answers ``POST /v1/chat/completions`` after

    latency = latency_ms * (1 + growth * (in_flight - 1))

where ``in_flight`` is the number of completions in progress when the request arrives, itself
included: a batching inference server's step gets slower with every sequence in its batch, so
past a few concurrent requests its throughput stops growing. ``--growth 0`` (the default) is a
fixed delay at any concurrency: the executor's own overhead, with a model that never saturates.
``benchmarks/executor_scaling.py`` calibrates ``growth`` from vLLM's measured behaviour
(``benchmarks/results/vllm_vs_hf.json``). It replies with one fixed
completion (``Thought: ... Action: look``) and ``GET /v1/models`` with the one
model ``stand-in``. HTTP/1.1 keep-alive, parsed by httptools on uvloop, one
timer per request: a load generator for the executor must cost far less than
what it stands in for. ``benchmarks/executor_scaling.py`` starts it and
measures its CPU.

    python benchmarks/llm_stand_in.py --latency-ms 500 [--growth 0.43] [--port 0]

Prints ``{"url": "http://127.0.0.1:PORT/v1"}`` on one line once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

import httptools
import uvloop

_REPLY = json.dumps(
    {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": 0,
        "model": "stand-in",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Thought: I will look around first.\nAction: look"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }
).encode()
_MODELS = json.dumps({"object": "list", "data": [{"id": "stand-in", "object": "model"}]}).encode()


class _Load:
    """The completions in progress, shared by every connection: what the latency grows with."""

    def __init__(self, latency_s: float, growth: float) -> None:
        self.latency_s, self.growth, self.in_flight = latency_s, growth, 0

    def admit(self) -> float:
        """Count one more completion in progress and return how long it takes."""
        self.in_flight += 1
        return self.latency_s * (1 + self.growth * (self.in_flight - 1))


class _StandInProtocol(asyncio.Protocol):
    """HTTP/1.1 keep-alive on one connection: httptools parses, a timer answers after the latency."""

    def __init__(self, load: _Load) -> None:
        self.load = load
        self.parser = httptools.HttpRequestParser(self)
        self.transport: Any = None
        self.url = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self._send(400, b'{"error": {"message": "malformed HTTP request"}}', keep_alive=False)

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_message_complete(self) -> None:
        url, self.url = self.url, b""
        keep_alive = self.parser.should_keep_alive()
        if url.endswith(b"/chat/completions"):
            asyncio.get_running_loop().call_later(self.load.admit(), self._complete, keep_alive)
        elif url.endswith(b"/models"):
            self._send(200, _MODELS, keep_alive)
        else:
            self._send(404, b'{"error": {"message": "only /v1/chat/completions and /v1/models"}}', keep_alive)

    def _complete(self, keep_alive: bool) -> None:
        self.load.in_flight -= 1
        self._send(200, _REPLY, keep_alive)

    def _send(self, status: int, body: bytes, keep_alive: bool) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        reason = {200: b"OK", 400: b"Bad Request", 404: b"Not Found"}[status]
        head = b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n" % (
            status,
            reason,
            len(body),
        )
        self.transport.write(head + (b"\r\n" if keep_alive else b"Connection: close\r\n\r\n") + body)
        if not keep_alive:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def serve(latency_ms: float, growth: float, port: int) -> None:
    loop = asyncio.get_running_loop()
    load = _Load(latency_ms / 1000, growth)
    server = await loop.create_server(lambda: _StandInProtocol(load), "127.0.0.1", port, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(json.dumps({"url": f"http://127.0.0.1:{port}/v1"}), flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency-ms", type=float, required=True, help="how long a completion takes alone")
    parser.add_argument(
        "--growth",
        type=float,
        default=0.0,
        help="the share of --latency-ms each other completion in progress adds (default 0: fixed latency)",
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args()
    if args.latency_ms < 0:
        parser.error(f"--latency-ms must be >= 0, got {args.latency_ms}")
    if args.growth < 0:
        parser.error(f"--growth must be >= 0 (0 is a fixed latency), got {args.growth}")
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(serve(args.latency_ms, args.growth, args.port))


if __name__ == "__main__":
    main()
