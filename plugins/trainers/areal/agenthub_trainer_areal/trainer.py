"""The ``areal`` trainer that ``agenthub run trainer=areal`` builds: writes AReaL's launch files and starts it."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

from agenthub import ConfigError, get_plugin_host
from agenthub.rollout import RunStore
from agenthub.training import (
    FrameworkTrainer,
    ServerUrls,
    one_trained_seat,
    print_dry_run_checks,
    print_dry_run_head,
    ray_env_servers,
    recorded_run,
    resumption,
)

from agenthub_trainer_areal.checks import framework_needs, launch_checks
from agenthub_trainer_areal.config import RESUMABLE_CHANGES, ArealConfig
from agenthub_trainer_areal.experiment import RESUME_OVERRIDE, LaunchPlan, launch_plan

TINY_MODEL_DIR = "tiny-model"
RESUMING = f" with AReaL's recovery ({RESUME_OVERRIDE}), rewriting its launch files"


def model_path(config: ArealConfig, run_dir: Path) -> str:
    """``model`` as given, or where the tiny random model is (or will be) built in the run directory."""
    return config.model if config.model is not None else str((run_dir / TINY_MODEL_DIR).absolute())


def build_tiny_model(config: ArealConfig, run_dir: Path) -> None:
    from agenthub.testing import build_tiny_model as build

    try:
        build(run_dir / TINY_MODEL_DIR, **{"seed": config.seed, **config.tiny_model})
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"tiny_model settings {config.tiny_model} were rejected: {exc}") from None


def run_env_servers(config: ArealConfig) -> contextlib.AbstractContextManager[ServerUrls | None]:
    """``backend=ray``: the env servers on the Ray cluster's nodes for the length of the run (their URLs and
    token go into the experiment YAML); None otherwise: each rollout worker starts its own, or uses url=."""
    return ray_env_servers(config, max_sessions=config.env_capacity)


def prepare(config: ArealConfig, servers: ServerUrls | None = None) -> tuple[RunStore, LaunchPlan]:
    """A new run directory with AReaL's launch files written (and the tiny model built when ``model`` is unset);
    on resume, the run's own directory, its launch files rewritten (e.g. more steps) and its tiny model kept."""
    store = resumption.open_run(config, RESUMABLE_CHANGES, root=config.runs_dir, run_id=config.run_id)
    if config.model is None and not (store.path / TINY_MODEL_DIR / "config.json").is_file():
        build_tiny_model(config, store.path)
    plan = launch_plan(config, store.path, model_path(config, store.path), servers)
    plan.write()
    return store, plan


def describe(plan: LaunchPlan) -> str:
    """The dry run's answer: each file as it would be written, then the exact command."""
    parts = [f"# {path}\n{text.rstrip()}" for path, text in plan.files().items()]
    parts.append(f"# command (run in {plan.run_dir}):\n{plan.shell_command()}")
    return "\n\n".join(parts)


def print_dry_run(settings: ArealConfig) -> int:
    """The resolved settings, the checks, then each file and the exact command; writes nothing."""
    run_dir = resumption.planned_run_dir(settings, RESUMABLE_CHANGES, root=settings.runs_dir, run_id=settings.run_id)
    print_dry_run_head(settings, run_dir, resuming=RESUMING)
    report = print_dry_run_checks(framework_needs(settings), lambda: launch_checks(settings, dry_run=True))
    if settings.backend == "ray":
        print(
            "# backend=ray: the env servers start on the Ray cluster's nodes before AReaL does, and their URLs "
            "and token go into the agenthub section's url and token"
        )
    print(describe(launch_plan(settings, run_dir, model_path(settings, run_dir))))
    if settings.model is None and not (run_dir / TINY_MODEL_DIR / "config.json").is_file():
        print(f"\n# the tiny random model would be built in {run_dir / TINY_MODEL_DIR} first")
    report.raise_if_refused()
    return 0


def refuse_misfits(settings: ArealConfig) -> None:
    """An unknown env, or seat=/opponent= that do not fit it, fail here, with suggestions; AReaL's GRPO groups
    take one trajectory per episode, so one seat is trained."""
    if not settings.url:
        info = get_plugin_host().env(settings.env).info()
        one_trained_seat(settings, info, "AReaL")


def train(settings: ArealConfig) -> int:
    """Start the env servers (``backend=ray``), write AReaL's launch files and run it until it exits."""
    with run_env_servers(settings) as servers:
        store, plan = prepare(settings, servers)
        print(f"run directory: {store.path}")
        print(f"wrote {plan.experiment_path} and {plan.entry_path}\nrunning: {plan.shell_command()}", flush=True)
        with recorded_run(store, {"command": plan.shell_command()}) as end:
            return end.exited(subprocess.call(plan.command, cwd=plan.run_dir))


class ArealTrainer(FrameworkTrainer[ArealConfig]):
    """``run(config, dry_run)`` as the ``Trainer`` protocol asks; no GPU fails at once, not inside a worker."""

    def __init__(self) -> None:
        super().__init__(
            ArealConfig, framework_needs, launch_checks, print_dry_run, train, refuse_misfits=refuse_misfits
        )
