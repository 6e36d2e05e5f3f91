"""``agenthub run trainer=areal``: the launch files, read back by AReaL's own config parser, and what they build.

Starting the written command needs GPUs (AReaL's scheduler launches SGLang and FSDP
workers), so these tests stop right before it: the dry run, and the run directory
that a real run writes, down to an episode of the workflow the YAML describes.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agenthub import ConfigError, LocalServer
from agenthub.rollout import RunStore
from agenthub.testing import build_tiny_model
from areal.infra import check_trajectory_format
from areal.utils.dynamic_import import import_from_string
from standin_engine import StandInEngine
from transformers import AutoTokenizer

from agenthub_trainer_areal.config import ArealConfig
from agenthub_trainer_areal.entry import WORKFLOW, epochs_for, hub_section, parse_experiment, task_rows, workflow_kwargs
from agenthub_trainer_areal.experiment import ENTRY_SCRIPT
from agenthub_trainer_areal.trainer import prepare
from agenthub_trainer_areal.workflow import task_from_row


def agenthub(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenthub", *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


def sections(printed: str) -> dict[str, str]:
    """The dry run's output: ``# TITLE`` headers, each followed by its text."""
    out: dict[str, str] = {}
    title = None
    for line in printed.splitlines():
        if line.startswith(("# /", "# command", "# the tiny")):
            title, out[line[2:]] = line[2:], ""
        elif title is not None:
            out[title] += line + "\n"
    return out


def test_dry_run_prints_the_exact_command_and_files_and_starts_nothing(tmp_path: Path) -> None:
    done = agenthub(
        "run", "trainer=areal", "env=trail", "model=/models/qwen", "run_id=r1", "steps=7", "tasks_per_step=16",
        "num_generations=4", "horizon.kind=stepwise", "horizon.rounds=[5,10]", "horizon.every=50",
        "rollout_backend=sglang:d2t2", "areal.actor.kl_ctl=0.01", "--dry-run", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_dir = (tmp_path / "runs" / "r1").absolute()
    printed = sections(done.stdout)
    assert printed[f"{run_dir}/train.py"].strip() == ENTRY_SCRIPT.strip()
    command = printed[f"command (run in {run_dir}):"].strip()
    assert command == f"{sys.executable} {run_dir}/train.py --config {run_dir}/areal.yaml"
    assert not (tmp_path / "runs").exists()

    # The printed YAML is a complete experiment for AReaL's own parser.
    experiment = tmp_path / "areal.yaml"
    experiment.write_text(printed[f"{run_dir}/areal.yaml"])
    config = parse_experiment(["--config", str(experiment)])
    assert config.gconfig.n_samples == 4 and config.train_dataset.batch_size == 16 and config.total_train_steps == 7
    assert config.actor.path == config.tokenizer_path == config.sglang.model_path == "/models/qwen"
    assert config.rollout.backend == "sglang:d2t2" and config.actor.kl_ctl == 0.01
    assert config.actor.reward_norm.group_size == 4  # GRPO: rewards normalised within each group
    assert config.cluster.fileroot == f"{run_dir}/areal"
    hub = hub_section(config)
    assert hub.env == "trail" and hub.horizon == {"kind": "stepwise", "rounds": [5, 10], "every": 50}
    assert hub.run_dir == str(run_dir)


def test_a_dry_run_writes_nothing_not_even_arealss_import_time_cache_folders(tmp_path: Path) -> None:
    """Importing ``areal`` makes cache folders (``/tmp/areal-$USER/.cache/...``, or under $AREAL_CACHE_DIR):
    the dry run's checks find AReaL's modules without importing them, and everything else it builds (the tiny
    model's tokenizer) lives in a temporary directory it removes."""
    work, scratch, cache = tmp_path / "work", tmp_path / "tmp", tmp_path / "areal-cache"
    work.mkdir(), scratch.mkdir()
    env = {**os.environ, "AREAL_CACHE_DIR": str(cache), "TMPDIR": str(scratch)}
    done = agenthub("run", "trainer=areal", "env=trail", "--dry-run", cwd=work, env=env)
    assert done.returncode == 0, done.stderr
    assert "# command (run in" in done.stdout
    assert not cache.exists()  # AReaL was never imported
    assert list(scratch.iterdir()) == [] and list(work.iterdir()) == []


def test_bad_settings_are_explained_before_anything_starts(tmp_path: Path) -> None:
    typo = agenthub("run", "trainer=areal", "stepz=3", "--dry-run", cwd=tmp_path)
    assert typo.returncode == 2 and "unknown key 'stepz'; did you mean 'steps'?" in typo.stderr
    env = agenthub("run", "trainer=areal", "env=trial", "--dry-run", cwd=tmp_path)
    assert env.returncode == 2 and "unknown env 'trial'; did you mean 'trail'?" in env.stderr
    assert not (tmp_path / "runs").exists()


def test_the_written_run_builds_the_workflow_and_plays_an_episode(trail_server: LocalServer, tmp_path: Path) -> None:
    """What a real run writes, read as the entry script reads it, down to one episode of its workflow."""
    model = build_tiny_model(tmp_path / "model")
    settings = ArealConfig(model=str(model), url=trail_server.url, runs_dir=str(tmp_path / "runs"), run_id="r1")
    store, plan = prepare(settings)
    store.close()
    assert plan.experiment_path.is_file() and plan.entry_path.read_text() == ENTRY_SCRIPT
    assert RunStore.existing(plan.run_dir).config()["model"] == str(model)

    # AReaL's CLI overrides apply on top of the YAML, as on `python train.py --config areal.yaml KEY=V`.
    config = parse_experiment(["--config", str(plan.experiment_path), "gconfig.max_new_tokens=6"])
    hub = hub_section(config)
    rows = asyncio.run(task_rows(hub))
    assert len(rows) == 10_000 and task_from_row(rows[7]).task_id == 7
    assert epochs_for(config, len(rows)) == 1
    config.total_train_steps = 700  # 312 steps per pass over the tasks at 32 tasks per step
    assert epochs_for(config, len(rows)) == 3
    with pytest.raises(ConfigError, match="fewer than tasks_per_step=32"):
        epochs_for(config, 31)

    # AReaL builds the workflow on each rollout worker from its import path and these arguments.
    tokenizer = AutoTokenizer.from_pretrained(model)
    engine = StandInEngine(tokenizer, follow=True)

    async def episode() -> dict[str, Any] | None:
        workflow = import_from_string(WORKFLOW)(**workflow_kwargs(config, hub))
        try:
            return await workflow.arun_episode(engine, rows[7])
        finally:
            await workflow.close()

    out = asyncio.run(episode())
    assert out is not None and check_trajectory_format(out)
    assert {c.max_new_tokens for c in engine.calls} == {6}
    [trajectory] = RunStore.existing(plan.run_dir).trajectories()
    assert trajectory.task.task_id == 7 and trajectory.provenance["trainer"] == "areal"
    assert trajectory.tokens is not None
    assert out["input_ids"][0].tolist() == trajectory.tokens.prompt_ids + trajectory.tokens.response_ids
    assert out["rewards"].tolist() == [trajectory.reward] == [1.0]


def test_the_headline_command_plans_with_the_default_model_and_stops_at_once_without_a_gpu(tmp_path: Path) -> None:
    planned = agenthub("run", "trainer=areal", "env=trail", "--dry-run", cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert "model: Qwen/Qwen2.5-0.5B-Instruct" in planned.stdout
    assert "# a real run would stop here: AReaL 1.0 needs an NVIDIA GPU" in planned.stdout
    assert "# checks before launch: not run (the tokenizer of 'Qwen/Qwen2.5-0.5B-Instruct'" in planned.stdout
    run = agenthub("run", "trainer=areal", "env=trail", cwd=tmp_path)
    assert run.returncode == 2
    assert "trainer=areal cannot start on this machine" in run.stderr and "--dry-run" in run.stderr
    assert "trainer=trl" in run.stderr and "trainer=swift" in run.stderr
    assert not (tmp_path / "runs").exists()


def test_dry_run_refuses_token_limits_that_cannot_train(tmp_path: Path) -> None:
    """model=null: the tiny model, whose tokenizer is built for the checks; guess's actions need more tokens."""
    done = agenthub("run", "trainer=areal", "env=guess", "model=null", "max_tokens=1", "--dry-run", cwd=tmp_path)
    assert done.returncode == 2
    assert "refused before launch (env 'guess'" in done.stderr
    assert "  - max_tokens: max_tokens=1 cannot hold the env's actions" in done.stderr
    assert not (tmp_path / "runs").exists()


def snapshot(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


def written_run(tmp_path: Path) -> Path:
    settings = ArealConfig(model="/models/qwen", env="trail", steps=5, runs_dir=str(tmp_path / "runs"), run_id="r1")
    store, plan = prepare(settings)
    store.close()
    return plan.run_dir


def test_resume_dry_run_prints_areals_recovery_command_and_writes_nothing(tmp_path: Path) -> None:
    run_dir = written_run(tmp_path)
    before = snapshot(run_dir)
    done = agenthub("run", "--resume", str(run_dir), "steps=9", "--dry-run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert snapshot(run_dir) == before  # nothing written
    printed = sections(done.stdout)
    command = printed[f"command (run in {run_dir}):"].strip().split()
    assert command == [sys.executable, f"{run_dir}/train.py", "--config", f"{run_dir}/areal.yaml", "recover.mode=auto"]

    # The printed YAML and the command's overrides, as AReaL's own parser reads them on resume.
    experiment = tmp_path / "areal.yaml"
    experiment.write_text(printed[f"{run_dir}/areal.yaml"])
    config = parse_experiment(["--config", str(experiment), *command[4:]])
    assert config.recover.mode == "auto" and config.recover.freq_steps == 20
    assert config.total_train_steps == 9
    assert config.cluster.fileroot == f"{run_dir}/areal" and config.trial_name == "r1"  # where its recover info is
    assert hub_section(config).run_dir == str(run_dir)


def test_resume_refuses_changes_other_than_steps(tmp_path: Path) -> None:
    run_dir = written_run(tmp_path)
    before = snapshot(run_dir)
    done = agenthub("run", "--resume", str(run_dir), "num_generations=4", "--dry-run", cwd=tmp_path)
    assert done.returncode == 2
    assert f"cannot resume {run_dir}: its config differs in num_generations: 8 -> 4" in done.stderr
    assert "only address, backend, save_steps, steps may change on resume" in done.stderr
    assert snapshot(run_dir) == before


def test_a_resumed_run_reuses_its_directory_and_appends_to_its_trajectories(tmp_path: Path) -> None:
    run_dir = written_run(tmp_path)
    (run_dir / "trajectories.jsonl").write_text('{"partial": ')  # a line cut short when the run died
    stored = RunStore.existing(run_dir).config()
    store, plan = prepare(ArealConfig.model_validate({**stored, "steps": 11, "resume": str(run_dir)}))
    store.close()
    assert store.path == run_dir == plan.run_dir
    assert plan.command[-1] == "recover.mode=auto"
    assert parse_experiment(["--config", str(plan.experiment_path), *plan.command[4:]]).total_train_steps == 11
    reopened = RunStore.existing(run_dir)
    assert reopened.config()["steps"] == 11 and "resume" not in reopened.config()
    assert "resumed_at" in reopened.meta()
    assert (run_dir / "trajectories.jsonl").read_text() == ""  # the cut line repaired; new episodes append
