"""The training parquet: one verl dataset row per env task.

verl's ``RLHFDataset`` reads ``prompt`` (chat messages) and passes every other
column to the agent loop as keyword arguments. A row here is:

* ``data_source``: ``agenthub/<env>``, how verl groups metrics;
* ``agent_name``: ``agenthub``, which picks :class:`AgenthubAgentLoop` from the agent-loop YAML;
* ``prompt``: one user message holding the task; verl only measures it, the
  real prompt is the env's first observation, built by the agent loop;
* ``reward_model``: ``{"style": "env", "ground_truth": ""}``, the env scores each episode;
* ``extra_info``: ``index`` (the row, which verl uses as the sample index), ``split``,
  ``task_id`` and ``agenthub_task``, the :class:`~agenthub.types.Task` as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenthub import Task, TaskId
from agenthub.training import one_trained_seat, split_task_ids

from agenthub_trainer_verl.launch import TRAIN_FILE, VAL_FILE
from agenthub_trainer_verl.loop_settings import AGENT_NAME
from agenthub_trainer_verl.tasks import list_tasks

if TYPE_CHECKING:
    from agenthub_trainer_verl.config import VerlConfig

TASK_FIELD = "agenthub_task"


def task_rows_for(settings: VerlConfig) -> dict[str, list[dict[str, Any]]]:
    """The parquet files' rows: one per task of the training split (and of ``val_split``)."""
    splits = [settings.split] + ([settings.val_split] if settings.val_split else [])
    info, listings = list_tasks(settings, splits)
    # seat=/opponent= that do not fit the env fail here, before anything is written; verl takes one
    # trajectory per sample, so one seat is trained
    one_trained_seat(settings, info, "verl")
    train_ids = split_task_ids(listings[settings.split], settings.max_tasks)
    rows = {TRAIN_FILE: task_rows(settings.env, settings.split, train_ids)}
    if settings.val_split:
        ids = split_task_ids(listings[settings.val_split], settings.max_tasks)
        rows[VAL_FILE] = task_rows(settings.env, settings.val_split, ids)
    return rows


def task_rows(env: str, split: str, ids: Sequence[TaskId]) -> list[dict[str, Any]]:
    """One row per task of ``env``'s ``split``."""
    rows = []
    for index, task_id in enumerate(ids):
        task = Task(env=env, task_id=task_id, split=split)
        rows.append(
            {
                "data_source": f"agenthub/{env}",
                "agent_name": AGENT_NAME,
                "prompt": [{"role": "user", "content": task.model_dump_json(exclude_defaults=True)}],
                "reward_model": {"style": "env", "ground_truth": ""},
                "extra_info": {
                    "index": index,
                    "split": split,
                    "task_id": str(task_id),
                    TASK_FIELD: task.model_dump_json(exclude_defaults=True),
                },
            }
        )
    return rows


def write_parquet(rows: list[dict[str, Any]], path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not rows:
        raise ValueError(f"no tasks to write to {path}; check the env's split and max_tasks")
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def task_of_row(row: Mapping[str, Any]) -> Task:
    """The task a dataset row carries (what verl passes to ``run`` as keyword arguments)."""
    extra = row.get("extra_info")
    payload = extra.get(TASK_FIELD) if isinstance(extra, Mapping) else None
    if not isinstance(payload, str):
        raise ValueError(
            f"the dataset row has no extra_info.{TASK_FIELD}; the agenthub agent loop plays rows written by "
            "`agenthub run trainer=verl` (data.train_files), not other datasets"
        )
    return Task.model_validate_json(payload)
