"""Training metrics: a line per step on the console, ``metrics.jsonl`` + ``metrics.csv`` in the run
directory, TensorBoard events under ``tensorboard/``, and ``learning_curve.png`` at the end.

The numbers are TRL's own logs (``loss``, ``kl``, ``reward``, ``entropy``, ...)
plus what the env reward function logs for each rollout: ``kl`` (from the start model, when TRL
has no reference model: see :mod:`agenthub_trainer_trl.kl`), ``success`` (rate
among trainable episodes), ``turns`` (per episode), ``max_turns`` (the
horizon in force) and ``infra_failures`` (fraction never trained on).
"""

from __future__ import annotations

import csv
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agenthub.rollout import RunStore
from transformers import TrainerCallback

CSV_FILE = "metrics.csv"
CURVE_FILE = "learning_curve.png"
CSV_COLUMNS = (
    "step",
    "success",
    "reward",
    "reward_std",
    "turns",
    "max_turns",
    "kl",
    "loss",
    "entropy",
    "grad_norm",
    "learning_rate",
    "infra_failures",
)


def env_reward(
    completions: list[Any],
    env_reward: list[float | None],
    success: list[float | None],
    turns: list[int],
    max_turns: list[int | None],
    log_metric: Any = None,
    kl_start: list[float | None] | None = None,
    **_: Any,
) -> list[float | None]:
    """TRL reward function: the env's own reward, as the rollout passed it (None: not trainable)."""
    if log_metric is not None:
        measured = [k for k in kl_start or [] if k is not None]
        if measured:  # beta=0: TRL logs no KL of its own (see agenthub_trainer_trl.kl)
            log_metric("kl", sum(measured) / len(measured))
        scored = [s for s in success if s is not None]
        if scored:
            log_metric("success", sum(scored) / len(scored))
        log_metric("turns", sum(turns) / max(1, len(turns)))
        log_metric("infra_failures", sum(s is None for s in success) / max(1, len(success)))
        limits = [m for m in max_turns if m is not None]
        if limits:
            log_metric("max_turns", max(limits))
    return list(env_reward)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class MetricsCallback(TrainerCallback):  # type: ignore[misc]
    """Writes every TRL log record to the run store and CSV, and prints a line per step."""

    def __init__(self, store: RunStore, *, echo: bool = True) -> None:
        self.store = store
        self.echo = echo
        self.csv_path = store.path / CSV_FILE

    def on_log(self, args: Any, state: Any, control: Any, logs: Mapping[str, Any] | None = None, **_: Any) -> None:
        if not state.is_world_process_zero or not logs:
            return
        record = {"step": int(state.global_step), **logs}
        self.store.log_metrics(record)
        if "reward" not in logs and "loss" not in logs:
            return  # the end-of-training summary: kept in metrics.jsonl only
        new = not self.csv_path.exists()
        with self.csv_path.open("a", newline="") as file:
            writer = csv.writer(file)
            if new:
                writer.writerow(CSV_COLUMNS)
            writer.writerow(["" if (v := record.get(c)) is None else v for c in CSV_COLUMNS])
        if self.echo:
            shown = " ".join(
                f"{name} {value:.3f}"
                for name in ("success", "reward", "turns", "kl", "loss")
                if (value := _number(record.get(name))) is not None
            )
            print(f"step {record['step']}/{state.max_steps}  {shown}", file=sys.stderr, flush=True)


def rewind_csv(file: Path, step: int) -> None:
    """Keep ``metrics.csv``'s rows up to ``step`` (a resumed run writes the later ones again)."""
    if not file.exists():
        return
    with file.open(newline="") as handle:
        rows = list(csv.reader(handle))
    kept = rows[:1] + [row for row in rows[1:] if row and row[0].isdigit() and int(row[0]) <= step]
    if len(kept) == len(rows):
        return
    tmp = file.with_name(file.name + ".tmp")
    with tmp.open("w", newline="") as handle:
        csv.writer(handle).writerows(kept)
    tmp.replace(file)


def curve_points(records: Sequence[Mapping[str, Any]], name: str) -> tuple[list[int], list[float]]:
    """(steps, values) of metric ``name``; a resumed run's repeated steps keep the latest value."""
    points: dict[int, float] = {}
    for record in records:
        value = _number(record.get(name))
        if value is not None and not math.isnan(value) and "step" in record:
            points[int(record["step"])] = value
    steps = sorted(points)
    return steps, [points[s] for s in steps]


def plot_learning_curve(records: Sequence[Mapping[str, Any]], out: Path, *, title: str) -> Path:
    """A PNG of success and reward (top), KL and loss (bottom) per training step; empty panels are left out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        (names, curves)
        for names in (("success", "reward"), ("kl", "loss"))
        if (curves := [(name, *curve_points(records, name)) for name in names if curve_points(records, name)[0]])
    ]
    if not panels:
        raise ValueError("no success, reward, kl or loss values to plot")
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 3 * len(panels) + 0.5), sharex=True, squeeze=False)
    for ax, (names, curves) in zip(axes[:, 0], panels, strict=True):
        for name, steps, values in curves:
            ax.plot(steps, values, marker=".", label=name)
        if names[0] == "success":
            ax.set_ylim(-0.05, 1.05)
            ax.set_ylabel("per episode")
        ax.legend(loc="best")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("training step")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
