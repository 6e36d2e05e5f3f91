"""What a run keeps of its model: the last one and the best checkpoint, each with the settings it was trained with.

**The best checkpoint.** One step's success is noisy (64 episodes: a healthy run can read 0.67 at its last
step), so a checkpoint is judged by the mean success of the ``WINDOW`` steps up to it. A checkpoint that beats
(or ties, later being more trained) every earlier one is recorded as transformers' ``best_model_checkpoint``,
which ``save_total_limit`` never deletes; so the run keeps its best checkpoint as well as its last.

**agenthub.json.** Beside the weights of ``model/`` and of each checkpoint: the settings a model was trained
with (tokens per turn, context, sampling), so ``agent=hf`` plays it as trained (it reads the file; an
``agent.KEY=VALUE`` wins). A model trained with one token a turn and played with 256 writes on past its word.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agenthub.rollout import RunStore
from transformers import TrainerCallback

from agenthub_trainer_trl.config import TrlConfig
from agenthub_trainer_trl.metrics import curve_points

MODEL_SETTINGS_FILE = "agenthub.json"
WINDOW = 5
"""Steps averaged: the summary's "mean of the last 5 steps", and what a checkpoint is judged by."""


def model_settings(config: TrlConfig, *, run_dir: Path, step: int) -> dict[str, Any]:
    """``agenthub.json``'s content: who trained the model, and ``agent`` (agent=hf's settings to play it as trained)."""
    return {
        "trainer": "trl",
        "run": str(run_dir),
        "env": config.env,
        "step": step,
        "agent": {
            "max_tokens": config.turn_tokens,
            "max_context": config.max_context,
            "temperature": config.temperature,
            "top_p": config.top_p,
        },
    }


def write_model_settings(directory: Path, config: TrlConfig, *, run_dir: Path, step: int) -> Path:
    file = directory / MODEL_SETTINGS_FILE
    file.write_text(json.dumps(model_settings(config, run_dir=run_dir, step=step), indent=2) + "\n")
    return file


def window_mean(successes: Mapping[int, float], step: int) -> float | None:
    """Mean success of the ``WINDOW`` recorded steps up to ``step``; None before there are that many."""
    recent = [successes[s] for s in sorted(successes) if s <= step][-WINDOW:]
    return statistics.fmean(recent) if len(recent) == WINDOW else None


class CheckpointCallback(TrainerCallback):  # type: ignore[misc]
    """Marks the best checkpoint before transformers saves it, and writes ``agenthub.json`` into each one.

    ``on_log`` runs after a step's rollout is logged and before its checkpoint is saved (transformers'
    ``_maybe_log_save_evaluate``), so a new best is recorded in time for the save to keep it.
    """

    def __init__(self, config: TrlConfig, store: RunStore) -> None:
        self.config = config
        self.run_dir = store.path
        steps, values = curve_points(store.metrics(), "success")  # a resumed run's earlier steps count too
        self.successes: dict[int, float] = dict(zip(steps, values, strict=True))

    def on_log(self, args: Any, state: Any, control: Any, logs: Mapping[str, Any] | None = None, **_: Any) -> None:
        if not logs or not isinstance(logs.get("success"), int | float):
            return
        self.successes[int(state.global_step)] = float(logs["success"])
        if not control.should_save:
            return
        mean = window_mean(self.successes, int(state.global_step))
        if mean is not None and (state.best_metric is None or mean >= state.best_metric):
            state.best_metric = mean
            state.best_global_step = int(state.global_step)

    def on_save(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if not state.is_world_process_zero:
            return
        directory = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if directory.is_dir():
            write_model_settings(directory, self.config, run_dir=self.run_dir, step=int(state.global_step))


def best_step(successes: Sequence[tuple[int, float]]) -> tuple[int, float] | None:
    """The step with the highest success (the first of equals), and its success."""
    return max(successes, key=lambda point: (point[1], -point[0]), default=None)
