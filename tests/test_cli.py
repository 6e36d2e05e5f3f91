"""The `agenthub` command as a user runs it: real processes, real output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

AGENTHUB = [sys.executable, "-m", "agenthub"]


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENTHUB, *args], capture_output=True, text=True, timeout=timeout)


def test_play_runs_the_oracle_to_a_win() -> None:
    result = run("play", "env=guess", "task_id=10007")
    assert result.returncode == 0, result.stderr
    assert "agent 'guess-oracle'" in result.stdout
    assert "Correct! The number was" in result.stdout
    assert "outcome: success   reward: 1" in result.stdout


def test_play_takes_env_kwargs_as_eval_and_serve_do() -> None:
    result = run("play", "env=guess", "task_id=3", "env_kwargs.high=32", "env_kwargs.max_guesses=6")
    assert result.returncode == 0, result.stderr
    assert "I am thinking of a whole number from 1 to 32. You have 6 guesses." in result.stdout
    refused = run("play", "env=guess", "env_kwargs.high=32", "url=http://127.0.0.1:9")
    assert refused.returncode == 2
    assert "env_kwargs configure the server play starts; with url= set them on that server" in refused.stderr


def test_check_passes_for_the_builtin_env() -> None:
    result = run("check", "env=guess", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["passed"] and len(report["results"]) == 14  # the seat checks: 422 for a seat, seat_rewards skipped


def test_unknown_env_and_bad_override_explain_what_to_do() -> None:
    result = run("serve", "env=gues")
    assert result.returncode == 2
    assert "unknown env 'gues'; did you mean 'guess'? installed envs: " in result.stderr
    assert "?;" not in result.stderr
    result = run("play", "env=guess", "agent=randm")
    assert result.returncode == 2 and "unknown agent 'randm'; did you mean 'random'? installed agents:" in result.stderr
    result = run("serv", "env=guess")
    assert (
        result.returncode == 2 and "unknown command 'serv'; did you mean 'serve'? installed commands:" in result.stderr
    )
    result = run("serve", "env=guess", "max_sesions=3")
    assert result.returncode == 2 and "did you mean 'max_sessions'" in result.stderr
    result = run("check")
    assert result.returncode == 2 and "env=NAME" in result.stderr


def test_serve_stops_cleanly_on_sigterm_and_closes_sessions(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    log = (tmp_path / "server.log").open("w")
    process = subprocess.Popen(
        [*AGENTHUB, "serve", "env=guess", "port=0", f"--ready-file={ready}"], stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.05)
        url = json.loads(ready.read_text())["url"]
        assert url.startswith("http://127.0.0.1:")  # loopback unless told otherwise
        for task in range(3):
            assert httpx.post(f"{url}/v1/sessions", json={"task_id": task}).status_code == 201
        process.send_signal(signal.SIGTERM)
        # uvicorn re-raises the signal after its graceful shutdown, as a well-behaved child should.
        assert process.wait(timeout=20) in (0, -signal.SIGTERM)
    finally:
        if process.poll() is None:
            process.kill()
        log.close()
    assert "stopped; closed 3 sessions" in (tmp_path / "server.log").read_text()


def test_serve_refuses_a_port_in_use_in_one_line() -> None:
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = run("serve", "env=guess", f"port={port}")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(f"agenthub serve: error: cannot listen on 127.0.0.1:{port}")
    assert f"port {port} is in use; choose another port=..., port=0 for a free one" in lines[0]


def serve_until_ready(tmp_path: Path, *args: str) -> str:
    """Start `agenthub serve ARGS`, wait until it listens, stop it; what it printed to stderr."""
    ready = tmp_path / f"ready-{len(list(tmp_path.iterdir()))}.json"
    with subprocess.Popen(
        [*AGENTHUB, "serve", "env=guess", "port=0", f"--ready-file={ready}", *args],
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "AGENTHUB_TOKEN"},
    ) as process:
        try:
            deadline = time.monotonic() + 60
            while not ready.exists():
                assert process.poll() is None and time.monotonic() < deadline, process.stderr
                time.sleep(0.05)
        finally:
            process.terminate()
            _, stderr = process.communicate(timeout=30)
    return stderr


def test_serve_beyond_loopback_needs_a_token_or_insecure(tmp_path: Path) -> None:
    refused = subprocess.run(
        [*AGENTHUB, "serve", "env=guess", "host=0.0.0.0", "port=0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "AGENTHUB_TOKEN"},
    )
    assert refused.returncode == 2
    assert "host=0.0.0.0 serves beyond this machine with no token" in refused.stderr
    assert "token=SECRET" in refused.stderr and "--insecure" in refused.stderr
    with_token = serve_until_ready(tmp_path, "host=0.0.0.0", "token=s3cret")
    assert "warning" not in with_token
    insecure = serve_until_ready(tmp_path, "host=0.0.0.0", "--insecure")
    assert "warning: --insecure: serving on 0.0.0.0 with no token" in insecure
    assert "warning" not in serve_until_ready(tmp_path, "host=localhost")


def test_version_and_help() -> None:
    assert run("--version").stdout.startswith("agenthub ")
    help_text = run("--help").stdout
    for command in ("serve", "plugins", "check", "play"):
        assert command in help_text
