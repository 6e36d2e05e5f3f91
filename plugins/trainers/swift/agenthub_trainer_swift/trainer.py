"""The ``swift`` trainer that ``agenthub run trainer=swift`` builds: writes the launch, then starts it.

Without ``url`` the env servers are started here (``processes`` of them, on
127.0.0.1), or with ``backend=ray`` on every node of a Ray cluster, for the length
of the run; swift's processes reach them through the settings file. ``--dry-run``
prints the files and the exact commands instead, with the env servers' address left
as a placeholder when they would be started by the run.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenthub import ConfigError, EnvInfo, get_plugin_host
from agenthub.config import validate_config
from agenthub.training import (
    env_servers,
    most_turns,
    one_trained_seat,
    preflight,
    print_dry_run_checks,
    print_dry_run_head,
    recorded_run,
    resumption,
    split_task_ids,
)

from agenthub_trainer_swift.checks import framework_needs, launch_checks
from agenthub_trainer_swift.config import SwiftConfig
from agenthub_trainer_swift.launch import TINY_MODEL_DIR, Command, LaunchPlan, build_plan
from agenthub_trainer_swift.runs import RESUMABLE_CHANGES, last_checkpoint

LOCAL_URL_PLACEHOLDER = "http://127.0.0.1:<port chosen when the run starts>"
ROLLOUT_STARTUP_S = 900.0


def tasks_of(config: SwiftConfig) -> tuple[list[Any], int]:
    """The split's task ids and the env's default turn limit: from the installed env, else its first server."""
    host = get_plugin_host()
    if config.env in host.envs.names() or not config.url:
        spec = host.env(config.env)  # an unknown env fails here, with suggestions
        splits = spec.resolved_splits()
        if config.split not in splits:
            raise ConfigError(f"env {config.env!r} has no split {config.split!r}; its splits: {', '.join(splits)}")
        return split_task_ids(splits[config.split]), spec.default_max_turns
    from agenthub import SyncEnvClient

    with SyncEnvClient(config.url[0], token=config.token) as client:
        info, listing = client.info(), client.tasks(config.split)
    return split_task_ids(listing), info.default_max_turns


def on_cpu() -> bool:
    try:
        import torch
    except ImportError:
        return True
    return not torch.cuda.is_available()


def check_seats(config: SwiftConfig) -> None:
    """Who plays a multi-player env's seats (``seat=``, ``opponent=``), checked before anything starts:
    the scheduler of ``mode=server`` plays them with the hub executor; ``mode=colocate`` cannot."""
    info: EnvInfo
    host = get_plugin_host()
    if config.env in host.envs.names() or not config.url:
        info = host.env(config.env).info()
    else:
        from agenthub import SyncEnvClient

        with SyncEnvClient(config.url[0], token=config.token) as client:
            info = client.info()
    if info.multi_player and config.mode == "colocate":
        raise ConfigError(
            f"env {info.name!r} has {info.players} seats; mode=colocate steps each episode's env session one "
            "model turn at a time and plays single-player envs only: use mode=server (the hub executor plays "
            "every seat), or trainer=trl, verl, openrlhf or areal"
        )
    one_trained_seat(config, info, "ms-swift's GRPO")


def plan_for(config: SwiftConfig, run_dir: Path, urls: list[str], tasks: tuple[list[Any], int]) -> LaunchPlan:
    ids, default_turns = tasks
    return build_plan(
        config,
        run_dir=run_dir,
        urls=urls,
        task_ids=ids,
        max_turns=turn_cap(config, default_turns),
        on_cpu=on_cpu(),
        checkpoint=last_checkpoint(run_dir) if config.resume is not None else None,
    )


def turn_cap(config: SwiftConfig, default_turns: int) -> int:
    """swift's ``--max_turns``: it stops every episode there, so it is the most turns the horizon ever allows."""
    if (longest := most_turns(config.horizon, config.steps)) is not None:
        return longest
    return config.max_turns or default_turns


def wait_for_rollout(config: SwiftConfig, process: subprocess.Popen[bytes]) -> None:
    url = f"http://{config.rollout_host}:{config.rollout_port}/health/"
    deadline = time.monotonic() + ROLLOUT_STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"`swift rollout` exited with code {process.returncode} before it was ready")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as response:
            if response.status == 200:
                return
        time.sleep(2)
    raise RuntimeError(f"`swift rollout` did not answer {url} within {ROLLOUT_STARTUP_S:.0f}s; see its log")


def execute(plan: LaunchPlan, config: SwiftConfig) -> int:
    """Run the plan's commands; background ones are stopped when the training command ends."""
    env = {**os.environ, **plan.env}
    background: list[subprocess.Popen[bytes]] = []
    try:
        for command in plan.commands:
            argv = resolve_swift(command)
            if command.background:
                process = subprocess.Popen(argv, env=env)
                background.append(process)
                wait_for_rollout(config, process)
            else:
                return subprocess.run(argv, env=env, check=False).returncode
        return 0
    finally:
        for process in background:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


def resolve_swift(command: Command) -> list[str]:
    """``swift`` from this interpreter's environment, so a virtualenv need not be activated."""
    local = Path(sys.executable).parent / command.argv[0]
    return [str(local), *command.argv[1:]] if local.exists() else list(command.argv)


def print_dry_run(settings: SwiftConfig, tasks: tuple[list[Any], int]) -> int:
    """The resolved settings, the checks, then every file and the exact commands; writes nothing."""
    run_dir = resumption.planned_run_dir(settings, RESUMABLE_CHANGES, root=settings.runs_dir, run_id=settings.run_id)
    resuming = (
        None if settings.resume is None else f" from {last_checkpoint(run_dir)}, rewriting its dataset and settings"
    )
    print_dry_run_head(settings, run_dir, resuming=resuming)
    report = print_dry_run_checks(framework_needs(settings), lambda: launch_checks(settings, dry_run=True))
    print(plan_for(settings, run_dir, settings.url or [LOCAL_URL_PLACEHOLDER], tasks).describe())
    report.raise_if_refused()
    return 0


class SwiftTrainer:
    """``run(config, dry_run)`` as the ``Trainer`` protocol asks."""

    def run(self, config: Mapping[str, Any], *, dry_run: bool = False) -> int:
        settings = validate_config(SwiftConfig, config)
        tasks = tasks_of(settings)  # a bad env or split fails here, before a run directory is made
        check_seats(settings)
        if dry_run:
            return print_dry_run(settings, tasks)
        preflight(framework_needs(settings), lambda: launch_checks(settings, dry_run=False))
        if settings.resume is not None:  # nothing to resume from: refused before the run is reopened
            last_checkpoint(resumption.check_resumable(settings, settings.resume, RESUMABLE_CHANGES).path)
        store = resumption.open_run(settings, RESUMABLE_CHANGES, root=settings.runs_dir, run_id=settings.run_id)
        print(f"run directory: {store.path}", flush=True)
        code = 1
        with recorded_run(store, lambda: {"swift_exit_code": code}) as end:
            if settings.model is None and not (store.path / TINY_MODEL_DIR / "config.json").is_file():
                from agenthub.testing import build_tiny_model

                build_tiny_model(store.path / TINY_MODEL_DIR, seed=settings.seed)
            servers = env_servers(
                settings.env,
                settings.url,
                processes=settings.processes,
                max_sessions=max(64, settings.episodes_per_step * 2),
                token=settings.token,
                backend=settings,  # backend=ray: on the Ray cluster's nodes, behind a token of the run's
            )
            with servers as urls:
                # the servers' own token (backend=ray makes one) is what swift's scheduler presents
                launched = settings.model_copy(update={"token": urls.token}) if urls.token else settings
                plan = plan_for(launched, store.path, list(urls), tasks)
                plan.write()
                print(plan.describe(), flush=True)
                code = end.exited(execute(plan, settings))
        print(f"run saved in {store.path} (swift exited with {code})")
        return code
