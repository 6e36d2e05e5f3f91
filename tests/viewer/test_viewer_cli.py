"""``agenthub view`` and ``agenthub report`` as a user runs them: real processes, real output."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import EVAL_RUN, TOKEN_RUN, running_view

AGENTHUB = [sys.executable, "-m", "agenthub"]


def agenthub(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENTHUB, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def view_url(runs_root: Path, tmp_path: Path) -> Iterator[str]:
    with running_view(runs_root, tmp_path / "ready.json") as url:
        yield url


def test_view_serves_the_page_and_the_api_on_loopback(view_url: str) -> None:
    assert view_url.startswith("http://127.0.0.1:") and view_url.endswith("/")
    page = httpx.get(view_url)
    assert page.status_code == 200 and "<title>agenthub view</title>" in page.text
    runs = httpx.get(f"{view_url}api/runs").json()["runs"]
    assert [r["id"] for r in runs] == [EVAL_RUN, TOKEN_RUN]
    assert httpx.get(f"{view_url}api/runs/{TOKEN_RUN}/episodes").json()["total"] == 15


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["view", "{missing}"], "does not exist; give a run directory (runs/<run-id>) or a runs/ root"),
        (["view", "{empty}"], "is not a run directory and holds none"),
        (["view", "{root}", "prot=1"], "unknown key 'prot'; did you mean 'port'?"),
        (["view", "{root}", "port=-5"], "port: Input should be greater than or equal to 0"),
        (["view", "{root}", "tokenizer={missing}"], "does not exist; give a local tokenizer directory or file"),
        (["view", "{root}", "host=0.0.0.0"], "serves beyond this machine with no token"),
        (["view", "{root}", "token=short"], "token= must be at least 16 characters"),
        (["report", "{missing}"], "does not exist; give a run directory"),
        (["report", "{root}", "episodes=-1"], "episodes: Input should be greater than or equal to 0"),
    ],
    ids=["missing", "not-a-run", "typo", "bad-port", "tokenizer", "open", "token", "report-missing", "report-cap"],
)
def test_mistakes_exit_2_and_say_what_to_do(runs_root: Path, tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "empty").mkdir()
    paths = {"missing": str(tmp_path / "missing"), "empty": str(tmp_path / "empty"), "root": str(runs_root)}
    result = agenthub(*(arg.format(**paths) for arg in args))
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and f"agenthub {args[0]}: error:" in result.stderr


def test_view_with_a_token_prints_the_url_to_open_and_the_api_needs_it(runs_root: Path, tmp_path: Path) -> None:
    token = "cli-token-0123456789abcdef"
    ready = tmp_path / "ready.json"
    with running_view(runs_root, ready, f"token={token}") as url:
        assert httpx.get(f"{url}api/runs").status_code == 401
        with httpx.Client(follow_redirects=True) as browser:  # keeps cookies and follows, as a browser does
            assert browser.get(f"{url}?token={token}").status_code == 200  # redirected to the page
            assert [r["id"] for r in browser.get(f"{url}api/runs").json()["runs"]] == [EVAL_RUN, TOKEN_RUN]
    assert f"{url}?token={token}" in ready.with_suffix(".log").read_text()


def test_view_beyond_loopback_with_insecure_warns(runs_root: Path, tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    with running_view(runs_root, ready, "host=0.0.0.0", "--insecure") as url:
        assert httpx.get(f"{url}api/runs").status_code == 200
    assert "--insecure: serving on 0.0.0.0 with no token" in ready.with_suffix(".log").read_text()


def test_view_on_a_port_in_use_says_so(runs_root: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = agenthub("view", str(runs_root), f"port={port}")
    assert result.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "port=0 for a free one" in result.stderr


def test_report_writes_one_file_and_says_what_it_holds(runs_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "report.html"
    result = agenthub("report", str(runs_root), "-o", str(out), "episodes=5")
    assert result.returncode == 0, result.stderr
    assert f"wrote {out}" in result.stdout and "2 run(s), 39 episodes, 10 of them in full" in result.stdout
    assert "embed more with episodes=N" in result.stdout
    assert out.read_text().startswith("<!doctype html>")


def test_report_defaults_to_the_run_directory(runs_root: Path, tmp_path: Path) -> None:
    run = Path(shutil.copytree(runs_root / EVAL_RUN, tmp_path / EVAL_RUN))
    result = agenthub("report", str(run))
    assert result.returncode == 0, result.stderr
    assert (run / "report.html").stat().st_size > 0 and "24 of them in full" in result.stdout
