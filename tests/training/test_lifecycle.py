"""The trainer lifecycle in core: checks before a run, env servers during it, its end in the run store."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agenthub import ServerStartError
from agenthub.rollout import RunStore
from agenthub.testing import default_sigint
from agenthub.training import (
    Finding,
    FrameworkMissing,
    FrameworkNeeds,
    LaunchRefused,
    LaunchReport,
    env_servers,
    preflight,
    print_dry_run_checks,
    recorded_run,
)


def new_store(tmp_path: Path) -> RunStore:
    return RunStore.create({"env": "guess"}, root=tmp_path, run_id="run")


def test_a_run_that_exits_0_is_finished_with_its_summary(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    steps: list[int] = []
    with recorded_run(store, lambda: {"steps": len(steps)}) as end:
        steps += [1, 2]
        assert end.exited(0) == 0
    meta = store.meta()
    assert meta["status"] == "finished" and meta["summary"] == {"steps": 2} and meta["finished_at"]


def test_a_framework_that_exits_non_zero_is_failed(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    with recorded_run(store, {"command": ["verl"]}) as end:
        end.exited(3)
    assert store.meta()["status"] == "failed" and store.meta()["summary"] == {"command": ["verl"]}


def test_an_error_is_failed_and_ctrl_c_is_interrupted_and_both_are_raised(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    with pytest.raises(RuntimeError, match="out of memory"), recorded_run(store):
        raise RuntimeError("CUDA out of memory")
    assert store.meta()["status"] == "failed"
    resumed = RunStore.resume(store.path)
    with pytest.raises(KeyboardInterrupt), recorded_run(resumed, lambda: {"seen": True}):
        raise KeyboardInterrupt
    assert resumed.meta()["status"] == "interrupted" and resumed.meta()["summary"] == {"seen": True}


def test_env_servers_are_started_for_the_run_and_stopped_after_it() -> None:
    with env_servers("guess", None, processes=2, max_sessions=3, token="s3cret") as urls:
        assert len(set(urls)) == 2
        for url in urls:
            assert httpx.get(f"{url}/v1/info", headers={"Authorization": "Bearer s3cret"}).status_code == 200
            assert httpx.get(f"{url}/v1/info").status_code == 401  # the token is the run's
    for url in urls:
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{url}/healthz", timeout=2)


def test_running_servers_are_used_as_given() -> None:
    with env_servers("guess", ["http://elsewhere:8000"], processes=4, max_sessions=64) as urls:
        assert urls == ["http://elsewhere:8000"]


def test_a_server_that_cannot_start_stops_the_run_before_it_starts() -> None:
    with pytest.raises(ServerStartError, match="before it was ready"):  # noqa: SIM117
        with env_servers("guess", None, processes=1, max_sessions=0):  # max_sessions must be >= 1
            pytest.fail("the run body ran without its env servers")


NEEDS_NOTHING = FrameworkNeeds(trainer="test", framework="test")
MISSING_MODULE = FrameworkNeeds(trainer="test", framework="nothing", modules={"agenthub_no_such_module": "no-pkg"})


def refusing_report() -> LaunchReport:
    return LaunchReport(
        env="guess",
        task_id=1,
        prompt_tokens=900,
        prompt_task=1,
        findings=[
            Finding("max_context", "the first prompt needs 900 tokens; set max_context>=1024", refuse=True),
            Finding("max_tokens", "actions are long", refuse=False),
        ],
    )


def test_preflight_stops_on_a_missing_framework_before_the_checks_run() -> None:
    ran: list[bool] = []

    def checks() -> LaunchReport:
        ran.append(True)
        return refusing_report()

    with pytest.raises(FrameworkMissing, match="agenthub_no_such_module \\(from no-pkg\\)"):
        preflight(MISSING_MODULE, checks)
    assert ran == []


def test_preflight_prints_the_checks_then_refuses() -> None:
    out = io.StringIO()
    with pytest.raises(LaunchRefused, match="max_context>=1024"):
        preflight(NEEDS_NOTHING, refusing_report, file=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("checks before launch refused") and lines[1] == "warning: max_tokens: actions are long"


def test_a_dry_run_prints_the_checks_as_comments(capsys: pytest.CaptureFixture[str]) -> None:
    report = print_dry_run_checks(MISSING_MODULE, refusing_report)
    assert report.problems  # returned, not raised: the dry run prints its plan first
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("# a real run would stop here: nothing's trainer imports modules that are not")
    assert lines[1:] == [
        "# checks before launch refused (env 'guess', task 1: longest first prompt 900 tokens (task 1))",
        "# warning: max_tokens: actions are long",
    ]


_CHILD = """
import asyncio, sys, time
from pathlib import Path
from agenthub.rollout import RunStore
from agenthub.training import recorded_run

async def episodes() -> None:
    await asyncio.sleep(60)

store = RunStore.create({"env": "guess"}, root=sys.argv[1], run_id="run")
with recorded_run(store, lambda: {"steps": 3}):
    if sys.argv[2] == "async":
        with asyncio.Runner() as runner:
            print("running", flush=True)
            try:
                runner.run(episodes())
            finally:  # where a trainer closes its env pool on the same loop: is the rollout still running?
                Path(sys.argv[1], "pending").write_text(str(len(asyncio.all_tasks(runner.get_loop()))))
    else:
        print("running", flush=True)
        time.sleep(60)
"""


@pytest.mark.parametrize(
    ("signum", "where"), [(signal.SIGTERM, "sync"), (signal.SIGINT, "sync"), (signal.SIGTERM, "async")]
)
def test_sigterm_and_sigint_end_a_real_run_as_interrupted_at_once_with_the_resume_line(
    tmp_path: Path, signum: int, where: str
) -> None:
    command = [sys.executable, "-c", _CHILD, str(tmp_path), where]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint
    ) as child:
        assert child.stdout is not None and child.stdout.readline().strip() == "running"
        time.sleep(0.2)  # into the sleep (and, async, the event loop's wait)
        sent = time.monotonic()
        child.send_signal(signum)
        _, err = child.communicate(timeout=30)
    assert time.monotonic() - sent < 20  # promptly: not the minute the body would have slept (loose for busy CI)
    # re-raised as a KeyboardInterrupt (the CLI exits 130 as after Ctrl-C; bare Python exits by SIGINT)
    assert child.returncode == -signal.SIGINT and "KeyboardInterrupt" in err
    store = RunStore.existing(tmp_path / "run")
    assert store.meta()["status"] == "interrupted" and store.meta()["summary"] == {"steps": 3}
    line = f"interrupted: run saved in {store.path}; resume with: agenthub run --resume {store.path}"
    assert line in err.splitlines()
    if where == "async":  # SIGTERM inside asyncio.Runner.run is Ctrl-C there too: the task is cancelled, not
        assert (tmp_path / "pending").read_text() == "0"  # left running while the pool closes


def test_a_summary_that_fails_still_ends_the_run_record(tmp_path: Path) -> None:
    store = new_store(tmp_path)

    def broken() -> dict[str, int]:
        raise ValueError("no steps yet")

    with pytest.raises(KeyboardInterrupt), recorded_run(store, broken):
        raise KeyboardInterrupt
    meta = store.meta()
    assert meta["status"] == "interrupted" and meta["summary"] == {"summary_error": "ValueError: no steps yet"}
