"""How a GRPO run ends: its summary (last steps, best step, the test split), the models it keeps, and a
``kill`` or Ctrl-C (``interrupted``, promptly, with the command that resumes it). Real TRL, a tiny model,
the real ``trail`` env server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agenthub.rollout import RunStore
from agenthub.testing import default_sigint
from transformers import TrainerCallback

from agenthub_trainer_trl.checkpoints import MODEL_SETTINGS_FILE
from agenthub_trainer_trl.config import TrlConfig
from agenthub_trainer_trl.grpo import run_grpo

SMALL = {"tasks_per_step": 2, "num_generations": 2, "max_tokens": 4, "concurrency": 8, "learning_rate": 1e-2}


class ScriptedSuccess(TrainerCallback):  # type: ignore[misc]
    """Replaces each step's logged success with a scripted one, before the run's callbacks read it, so that
    which checkpoint is best is known: a run that peaks, then dips at its end."""

    def __init__(self, successes: list[float]) -> None:
        self.successes = successes

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
        if logs is not None and "success" in logs:
            logs["success"] = self.successes[int(state.global_step) - 1]

    def install(self, trainer: Any) -> None:
        trainer.callback_handler.callbacks.insert(0, self)


def test_the_summary_keeps_the_best_checkpoint_and_the_last_model_and_scores_the_test_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted = ScriptedSuccess([1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0])  # steps 1-5 at 1.0, then a dip
    settings = {"steps": 7, "save_steps": 1, "test_episodes": 6, "temperature": 2.0}
    config = TrlConfig.model_validate({"runs_dir": str(tmp_path), "run_id": "end", **SMALL, **settings})
    assert run_grpo(config, on_trainer=scripted.install) == 0
    run_dir = tmp_path / "end"
    summary = RunStore.existing(run_dir).meta()["summary"]

    # the mean of the last 5 steps beside the single best step (the first of equals)
    assert summary["last_steps_success"] == {"steps": [3, 4, 5, 6, 7], "mean": 0.6}
    assert summary["best_step"] == {"step": 1, "success": 1.0}

    # the best checkpoint (mean success 1.0 over steps 1-5) is kept beside the last one (0.6 over 3-7)
    kept = summary["checkpoints"]
    assert kept == {
        "best": {"path": "checkpoints/checkpoint-5", "step": 5, "success": 1.0},
        "last": {"path": "model", "step": 7},
    }
    remaining = {p.name for p in (run_dir / "checkpoints").glob("checkpoint-*")}
    assert remaining == {"checkpoint-5", "checkpoint-7"}  # save_total_limit=2 (the default), the best protected

    # each kept model carries the settings it was trained with, for agent=hf
    for directory, step in ((run_dir / "model", 7), (run_dir / "checkpoints" / "checkpoint-5", 5)):
        carried = json.loads((directory / MODEL_SETTINGS_FILE).read_text())
        assert carried["agent"] == {"max_tokens": 4, "max_context": 1024, "temperature": 2.0, "top_p": 1.0}
        assert (carried["env"], carried["trainer"], carried["step"]) == ("trail", "trl", step)

    # the test split: 6 tasks, played once each by the final model
    test = summary["test"]
    assert test["split"] == "test" and test["episodes"] == 6 and test["infra_failures"] == 0
    assert 0 <= test["success"] <= 1
    out = capsys.readouterr().out.splitlines()
    assert "success 0.60 over the last 5 steps (3-7); best step 1 (1.00)" in out
    assert f"test split: success {test['success']:.2f} over 6 episodes (final model, sampled as in training)" in out
    assert f"best checkpoint: {run_dir}/checkpoints/checkpoint-5 (success 1.00 over the 5 steps up to step 5)" in out
    assert f"last model: {run_dir / 'model'} (step 7)" in out


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_killed_run_ends_interrupted_at_once_with_the_command_that_resumes_it(tmp_path: Path, signum: int) -> None:
    options = [f"{k}={v}" for k, v in {**SMALL, "steps": 500, "test_episodes": 0}.items()]
    command = [sys.executable, "-m", "agenthub", "run", "trainer=trl", f"runs_dir={tmp_path}", "run_id=k", *options]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env, preexec_fn=default_sigint
    ) as child:
        assert child.stderr is not None
        seen = []
        for line in child.stderr:  # wait for a step to have run: the run is inside TRL's training loop
            seen.append(line)
            if line.startswith("step 2/"):
                break
        else:
            pytest.fail(f"the run ended before its second step: {''.join(seen)}")
        sent = time.monotonic()
        child.send_signal(signum)
        rest = child.stderr.read()
        child.wait(timeout=60)
        waited = time.monotonic() - sent
    assert child.returncode == 130  # the CLI's exit after Ctrl-C
    run_dir = tmp_path / "k"
    meta = RunStore.existing(run_dir).meta()
    assert meta["status"] == "interrupted" and meta["summary"]["rollouts"] >= 2
    line = f"interrupted: run saved in {run_dir}; resume with: agenthub run --resume {run_dir}"
    assert line in rest.splitlines()
    assert waited < 20, f"took {waited:.1f}s to stop"
