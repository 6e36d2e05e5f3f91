"""The ``openrlhf`` trainer that ``agenthub run trainer=openrlhf`` builds.

It lists the env's task ids, starts env servers (unless ``url=`` names
running ones), writes ``prompts.jsonl`` and ``agent.json`` into the run
directory, and runs OpenRLHF's ``train_ppo_ray`` until it exits; then it
stops the servers. ``--dry-run`` prints the command and the files instead.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from agenthub import ConfigError, EnvInfo, SyncEnvClient, TaskId, get_plugin_host
from agenthub.rollout import RunStore
from agenthub.training import (
    FrameworkTrainer,
    Seating,
    env_servers,
    one_trained_seat,
    print_dry_run_checks,
    print_dry_run_head,
    recorded_run,
    resumption,
    split_task_ids,
)

from agenthub_trainer_openrlhf.checks import NEEDS, launch_checks
from agenthub_trainer_openrlhf.config import RESUMABLE_CHANGES, OpenRlhfConfig
from agenthub_trainer_openrlhf.launch import build_launch


def task_ids(config: OpenRlhfConfig) -> list[TaskId]:
    """The split's task ids: from the servers at ``url=``, else from the installed env plugin."""
    if config.url:
        with SyncEnvClient(config.url[0], token=config.token) as client:
            info = client.info()
            if info.name != config.env:
                raise ConfigError(f"the env server at {config.url[0]} serves {info.name!r}, not env={config.env!r}")
            if config.split not in info.splits:
                raise ConfigError(f"env {info.name!r} has no split {config.split!r}; it has: {', '.join(info.splits)}")
            ids = split_task_ids(client.tasks(config.split))
    else:
        splits = get_plugin_host().env(config.env).resolved_splits()  # unknown env: fails with suggestions
        if config.split not in splits:
            raise ConfigError(f"env {config.env!r} has no split {config.split!r}; it has: {', '.join(splits)}")
        split = splits[config.split]
        ids = list(split.ids) if split.ids is not None else split.first(split.count)
    return ids[: config.tasks] if config.tasks else ids


def seats_of(config: OpenRlhfConfig) -> Seating:
    """Who plays which seat (``seat=``, ``opponent=``), checked against the env before anything starts;
    OpenRLHF takes one trajectory per prompt sample, so one seat is trained."""
    info: EnvInfo
    if config.url:
        with SyncEnvClient(config.url[0], token=config.token) as client:
            info = client.info()
    else:
        info = get_plugin_host().env(config.env).info()
    return one_trained_seat(config, info, "OpenRLHF")


def open_run(config: OpenRlhfConfig) -> RunStore:
    """A new run directory, or the one ``--resume`` names if only ``RESUMABLE_CHANGES`` differ from its config
    (OpenRLHF's checkpoint would continue under any settings: the check is here)."""
    return resumption.open_run(config, RESUMABLE_CHANGES, root=config.runs_dir, run_id=config.run_id)


def print_dry_run(settings: OpenRlhfConfig) -> int:
    """The resolved settings, the files and the exact command a run would write and start; writes nothing."""
    ids = task_ids(settings)
    seats_of(settings)
    run_dir = resumption.planned_run_dir(settings, RESUMABLE_CHANGES, root=settings.runs_dir, run_id=settings.run_id)
    where = "Ray node's" if settings.backend == "ray" else "local"
    urls = settings.url or [f"<{where} {settings.env} server {i + 1}>" for i in range(settings.processes)]
    launch = build_launch(settings, run_dir, urls=urls, task_ids=ids, run_id=run_dir.name)
    print_dry_run_head(settings, run_dir)
    report = print_dry_run_checks(NEEDS, lambda: launch_checks(settings, dry_run=True))
    print(launch.describe())  # last: its last line is the command
    report.raise_if_refused()
    return 0


class OpenRlhfTrainer(FrameworkTrainer[OpenRlhfConfig]):
    """``run(config, dry_run)`` as the ``Trainer`` protocol asks; no GPU or vLLM fails at once, not in a Ray actor."""

    def __init__(self) -> None:
        super().__init__(OpenRlhfConfig, lambda _: NEEDS, launch_checks, print_dry_run, launch)


def launch(settings: OpenRlhfConfig) -> int:
    """Write the run's files, start the env servers and OpenRLHF, and wait for it (no checks: see ``run``)."""
    ids = task_ids(settings)
    seats_of(settings)
    store = open_run(settings)
    print(f"run directory: {store.path}", flush=True)
    servers = env_servers(
        settings.env,
        settings.url,
        processes=settings.processes,
        max_sessions=max(64, settings.samples_per_rollout),
        token=settings.token,
        backend=settings,  # backend=ray: on the cluster's nodes, where every vLLM actor reaches them
    )
    with recorded_run(store, {"tasks": len(ids)}) as end, servers as urls:
        plan = build_launch(
            settings, store.path.resolve(), urls=urls, task_ids=ids, run_id=store.run_id, token=urls.token
        )
        plan.write_files()
        return end.exited(run_command(plan.command, {**os.environ, **plan.environment}))


def run_command(command: Sequence[str], environment: Mapping[str, str]) -> int:
    """Run OpenRLHF in the foreground; its output goes to this terminal."""
    try:
        return subprocess.run(list(command), env=dict(environment), check=False).returncode
    except FileNotFoundError:
        raise ConfigError(
            f"cannot start {command[0]!r}; set python= to the interpreter that has openrlhf, vllm and deepspeed "
            "installed (or install ray for ray_address=)"
        ) from None
