"""Real runs for the viewer's tests, built once per session under one ``runs/`` root.

* ``eval-guess``: ``agenthub eval env=guess agent=random n=8 k=3 max_turns=5``, the command a user
  runs (a real env server process, the real executor and store): successes and truncations,
  three samples a task, and the eval summary in ``metrics.jsonl``.
* ``train-tokens``: what a trainer's rollouts leave: token-level episodes of ``guess`` from a
  :class:`~agenthub.rollout.policy.TokenPolicy` over a tokenizer built here (saved in the run, as
  the TRL trainer saves its model), episodes of ``trail`` from the random agent with a seed per
  sample, and one metrics record per training step.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthub import Task
from agenthub.builtin.agents import RandomAgent
from agenthub.cli.main import main
from agenthub.rollout.collect import collect
from agenthub.rollout.executor import EpisodeRequest, Executor, episode_requests
from agenthub.rollout.policy import SamplingParams, TokenPolicy
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.store import RunStore
from agenthub.testing.tiny_tokenizer import build_tokenizer

from ..rollout.engines import GuessSearchEngine

EVAL_RUN = "eval-guess"
TOKEN_RUN = "train-tokens"
GUESS_TASKS = (3, 5, 8)
TRAIL_TASKS = (1, 2, 4, 7)
TRAIL_SAMPLES = 3
STEPS = 6
CHROMIUM = "/usr/bin/chromium"
AGENTHUB = [sys.executable, "-m", "agenthub"]
REQUIRE_ENV = "AGENTHUB_REQUIRE_PLUGIN_TESTS"  # set by CI (.ci/run): a skipped test there is a failure


def skip_or_fail(reason: str) -> None:
    """Skip where a test cannot run here; under CI (``AGENTHUB_REQUIRE_PLUGIN_TESTS=1``) fail instead."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason}; CI runs every test ({REQUIRE_ENV}=1): install it (see .ci/run)", pytrace=False)
    pytest.skip(reason)


def metric_record(step: int) -> dict[str, float]:
    """A trainer's log line: success and reward rising, loss falling."""
    return {"step": step, "success": step / STEPS, "reward": 0.1 * step, "loss": 1.0 / step, "max_turns": 8}


async def _token_episodes(store: RunStore) -> None:
    tokenizer = build_tokenizer("chatml")
    tokenizer.save_pretrained(store.path / "tiny-model")  # where the TRL trainer keeps its built model
    engine = GuessSearchEngine(tokenizer)
    policy = TokenPolicy(engine, tokenizer, SamplingParams(max_tokens=16), system_prompt="Play the game.")
    async with await EnvPool.launch("guess") as pool:
        tasks = [Task(env="guess", task_id=t) for t in GUESS_TASKS]
        await collect(Executor(pool, policy, concurrency=4), episode_requests(tasks), store=store)
    async with await EnvPool.launch("trail") as pool:
        requests = [
            EpisodeRequest(f"trail-{t}/{s}", Task(env="trail", task_id=t, seed=s))
            for t in TRAIL_TASKS
            for s in range(TRAIL_SAMPLES)
        ]
        await collect(Executor(pool, RandomAgent(seed=7), concurrency=4), requests, store=store)


def build_token_run(root: Path) -> Path:
    store = RunStore.create({"env": "guess", "trainer": "demo", "steps": STEPS}, root=root, run_id=TOKEN_RUN)
    asyncio.run(_token_episodes(store))
    for step in range(1, STEPS + 1):
        store.log_metrics(metric_record(step))
    store.finish({"episodes": len(GUESS_TASKS) + len(TRAIL_TASKS) * TRAIL_SAMPLES})
    return store.path


def build_eval_run(root: Path) -> Path:
    code = main(
        ["eval", "env=guess", "agent=random", "n=8", "k=3", "max_turns=5", f"runs_dir={root}", f"run_id={EVAL_RUN}"]
    )
    assert code == 0
    return root / EVAL_RUN


@contextlib.contextmanager
def running_view(root: Path, ready: Path, *extra: str) -> Iterator[str]:
    """`agenthub view ROOT port=0` once it is listening: its URL; stopped with SIGTERM afterwards."""
    log_path = ready.with_suffix(".log")
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [*AGENTHUB, "view", str(root), "port=0", f"--ready-file={ready}", *extra], stdout=log, stderr=log
        )
        try:
            deadline = time.monotonic() + 60
            while not ready.exists():
                assert process.poll() is None and time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.05)
            yield json.loads(ready.read_text())["url"]
            process.send_signal(signal.SIGTERM)
            # uvicorn re-raises the signal after its graceful shutdown, as `agenthub serve` does.
            assert process.wait(timeout=30) in (0, -signal.SIGTERM)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs/ root holding both runs; tests that change a run copy it first (``fresh_root``)."""
    root = tmp_path_factory.mktemp("viewer") / "runs"
    build_token_run(root)
    build_eval_run(root)
    return root


@pytest.fixture
def fresh_root(runs_root: Path, tmp_path: Path) -> Path:
    """A copy of the runs, without any index, for one test to change."""
    copy = tmp_path / "runs"
    shutil.copytree(runs_root, copy, ignore=shutil.ignore_patterns(".viewer-index.sqlite*"))
    return copy


@pytest.fixture
def screenshot_dirs(tmp_path: Path) -> list[Path]:
    """Where screenshots go: the test's tmp_path, and $AGENTHUB_SCREENSHOT_DIR when set."""
    dirs = [tmp_path]
    if os.environ.get("AGENTHUB_SCREENSHOT_DIR"):
        extra = Path(os.environ["AGENTHUB_SCREENSHOT_DIR"])
        extra.mkdir(parents=True, exist_ok=True)
        dirs.append(extra)
    return dirs
