"""The ``verl`` trainer that ``agenthub run trainer=verl`` builds: writes verl's inputs, then starts verl."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import yaml
from agenthub import ConfigError
from agenthub.rollout import RunStore, new_run_id
from agenthub.training import (
    FrameworkTrainer,
    ServerUrls,
    print_dry_run_checks,
    print_dry_run_head,
    ray_env_servers,
    recorded_run,
    resumption,
)

from agenthub_trainer_verl.checks import framework_needs, launch_checks
from agenthub_trainer_verl.config import RESUMABLE_CHANGES, VerlConfig
from agenthub_trainer_verl.launch import (
    COMMAND_FILE,
    TRAIN_FILE,
    VAL_FILE,
    LaunchPlan,
    plan,
    write_files,
    write_launch_files,
)
from agenthub_trainer_verl.rows import task_rows_for

RAY_SERVERS = (
    "backend=ray: the env servers start on the Ray cluster's nodes before verl does, and their URLs and token "
    "go into the agent-loop YAML's urls and token"
)


def run_env_servers(settings: VerlConfig) -> contextlib.AbstractContextManager[ServerUrls | None]:
    """``backend=ray``: the env servers on the Ray cluster's nodes for the length of the run (their URLs and
    token go into the agent-loop YAML); None otherwise: each agent-loop worker starts its own, or uses url=."""
    # verl's workers hold `capacity` sessions per server; the servers take as many
    return ray_env_servers(settings, max_sessions=settings.capacity)


def prepare(settings: VerlConfig, servers: ServerUrls | None = None) -> tuple[RunStore, LaunchPlan, list[Path]]:
    """The run directory with the parquet files, the agent-loop YAML and the command."""
    if settings.resume is not None:
        return prepare_resume(settings, servers)
    rows = task_rows_for(settings)
    store = resumption.open_run(settings, RESUMABLE_CHANGES, root=settings.runs_dir, run_id=settings.run_id)
    launch = plan(settings, store.path, servers)
    return store, launch, write_files(launch, rows)


def prepare_resume(settings: VerlConfig, servers: ServerUrls | None = None) -> tuple[RunStore, LaunchPlan, list[Path]]:
    """The run directory ``resume`` names, reopened: its parquet files kept, the YAML and command rewritten."""
    run_dir = resumption.check_resumable(settings, str(settings.resume), RESUMABLE_CHANGES).path
    missing = [name for name in data_files(settings) if not (run_dir / name).is_file()]
    if missing:
        raise ConfigError(
            f"cannot resume {run_dir}: {', '.join(missing)} is missing; it holds the run's tasks. "
            "Start a new run instead"
        )
    store = resumption.reopen(settings, str(settings.resume), RESUMABLE_CHANGES)
    launch = plan(settings, store.path, servers)
    return store, launch, write_launch_files(launch)


def data_files(settings: VerlConfig) -> list[str]:
    return [TRAIN_FILE] + ([VAL_FILE] if settings.val_split else [])


def print_dry_run(settings: VerlConfig) -> int:
    """The resolved settings, the files and the exact command a run would write and start; writes nothing."""
    if settings.resume is not None:
        return print_resume_dry_run(settings)
    rows = task_rows_for(settings)
    run_dir = Path(settings.runs_dir) / (settings.run_id or new_run_id())
    launch = plan(settings, run_dir)
    print_dry_run_head(settings, run_dir)
    for name, split_rows in rows.items():
        print(f"# would write {run_dir / name}: {len(split_rows)} rows, one per task")
    print(f"# would write {launch.loop_file}:\n{yaml.safe_dump(launch.agent_loop, sort_keys=False).rstrip()}")
    if settings.backend == "ray":
        print(f"# {RAY_SERVERS}")
    print(f"# would run (in {run_dir}, also written as {COMMAND_FILE}):\n{launch.shell()}")
    return print_checks(settings)


def print_resume_dry_run(settings: VerlConfig) -> int:
    """``--resume RUN_DIR --dry-run``: the refused changes raise, else the exact resume command; writes nothing."""
    run_dir = resumption.check_resumable(settings, str(settings.resume), RESUMABLE_CHANGES).path
    launch = plan(settings, run_dir)
    kept = ", ".join(data_files(settings))
    print_dry_run_head(settings, run_dir, resuming=f": its {kept} kept, verl loads its latest checkpoint")
    print(f"# would rewrite {launch.loop_file} and {launch.path(COMMAND_FILE)}")
    print(f"# would run (in {run_dir}, also written as {COMMAND_FILE}):\n{launch.shell()}")
    return print_checks(settings)


def print_checks(settings: VerlConfig) -> int:
    report = print_dry_run_checks(framework_needs(settings), lambda: launch_checks(settings, dry_run=True))
    report.raise_if_refused()
    return 0


def train(settings: VerlConfig) -> int:
    """Start the env servers (``backend=ray``), write the run's files and run verl until it exits."""
    with run_env_servers(settings) as servers:
        store, launch, written = prepare(settings, servers)
        print(f"run directory: {store.path}")
        for path in written:
            print(f"# wrote {path}")
        print(f"# running:\n{launch.shell()}", flush=True)
        with recorded_run(store, {"command": launch.command}) as end:
            code = end.exited(subprocess.call(launch.command, cwd=store.path))
    if code != 0:
        print(f"agenthub run: verl exited with code {code}; its output is above, the run's files are in {store.path}")
    return code


class VerlTrainer(FrameworkTrainer[VerlConfig]):
    """``run(config, dry_run)`` as the ``Trainer`` protocol asks; no GPU fails at once, before Ray waits forever."""

    def __init__(self) -> None:
        super().__init__(VerlConfig, framework_needs, launch_checks, print_dry_run, train)
