"""The ``verl`` trainer that ``agenthub run trainer=verl`` builds: writes verl's inputs, then starts verl."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenthub.config import validate_config
from agenthub.rollout.store import RunStore

from agenthub_trainer_verl.config import VerlConfig
from agenthub_trainer_verl.launch import TRAIN_FILE, VAL_FILE, LaunchPlan, plan, write_files
from agenthub_trainer_verl.rows import split_ids, task_rows
from agenthub_trainer_verl.tasks import list_tasks


def prepare(settings: VerlConfig) -> tuple[RunStore, LaunchPlan, list[Path]]:
    """The run directory with the parquet files, the agent-loop YAML and the command."""
    splits = [settings.split] + ([settings.val_split] if settings.val_split else [])
    _info, listings = list_tasks(settings, splits)
    train_ids = split_ids(listings[settings.split], settings.max_tasks)
    rows = {TRAIN_FILE: task_rows(settings.env, settings.split, train_ids)}
    if settings.val_split:
        ids = split_ids(listings[settings.val_split], settings.max_tasks)
        rows[VAL_FILE] = task_rows(settings.env, settings.val_split, ids)
    store = RunStore.create(settings.model_dump(mode="json"), root=settings.runs_dir, run_id=settings.run_id)
    launch = plan(settings, store.path)
    return store, launch, write_files(launch, rows)


class VerlTrainer:
    """``run(config, dry_run)`` as the ``Trainer`` protocol asks."""

    def run(self, config: Mapping[str, Any], *, dry_run: bool = False) -> int:
        settings = validate_config(VerlConfig, config)
        store, launch, written = prepare(settings)
        for path in written:
            print(f"# wrote {path}")
        print(f"# {launch.loop_file.name}:\n{launch.loop_file.read_text().rstrip()}")
        if dry_run:
            print(f"# would run:\n{launch.shell()}")
            store.finish({"command": launch.command}, status="dry-run")
            return 0
        print(f"# running:\n{launch.shell()}", flush=True)
        status = "failed"
        try:
            code = subprocess.call(launch.command, cwd=store.path)
            status = "finished" if code == 0 else "failed"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            store.finish({"command": launch.command}, status=status)
        if code != 0:
            print(
                f"agenthub run: verl exited with code {code}; its output is above, the run's files are in {store.path}"
            )
        return code
