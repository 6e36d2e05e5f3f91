"""Each response leaves the server in one write, and HTTP/1.1 keeps working over it (raw sockets, real server)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from agenthub.service.launcher import ThreadedServer
from agenthub.specs import EnvSpec


@pytest.fixture(scope="module")
def address(guess_spec_module: EnvSpec) -> Iterator[tuple[str, int]]:
    with ThreadedServer(guess_spec_module) as server:
        url = urlsplit(server.url)
        yield url.hostname or "127.0.0.1", url.port or 80


@pytest.fixture(scope="module")
def guess_spec_module() -> EnvSpec:
    from agenthub import get_plugin_host

    return get_plugin_host().env("guess")


def request(path: str, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: test\r\n{extra}\r\n".encode()


def read_response(sock: socket.socket, buffered: bytes = b"") -> tuple[bytes, bytes, bytes]:
    """(head, body, what came after) of one response with a Content-Length."""
    data = buffered
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, rest = data.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return head, rest[:length], rest[length:]


def test_a_response_arrives_whole_in_one_read(address: tuple[str, int]) -> None:
    with socket.create_connection(address) as sock:
        for _ in range(3):  # on a kept-alive connection, every time
            sock.sendall(request("/v1/info"))
            first_read = sock.recv(65536)
            head, body, after = read_response(sock, first_read)
            assert head.startswith(b"HTTP/1.1 200") and b'"name":"guess"' in body and after == b""
            assert first_read == head + b"\r\n\r\n" + body, "head and body came in separate segments"


def test_pipelined_requests_are_answered_in_order(address: tuple[str, int]) -> None:
    with socket.create_connection(address) as sock:
        sock.sendall(request("/v1/info") + request("/healthz") + request("/v1/tasks?split=test"))
        _, info, rest = read_response(sock)
        _, health, rest = read_response(sock, rest)
        _, tasks, rest = read_response(sock, rest)
    assert b'"name":"guess"' in info and b'"status":"ok"' in health and b'"count":500' in tasks


def test_connection_close_sends_the_whole_answer_then_closes(address: tuple[str, int]) -> None:
    with socket.create_connection(address) as sock:
        sock.sendall(request("/healthz", "Connection: close\r\n"))
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, body = received.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200") and b"connection: close" in head.lower()
    assert body.startswith(b"{") and b'"status":"ok"' in body
