"""`agenthub run trainer=trl` as a user types it: dry run, bad settings, and the SFT warm start from an
exported run of the env's oracle (a real eval run, a real SFTTrainer)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from agenthub import get_plugin_host
from agenthub.rollout import RunStore, render
from agenthub.testing import build_tiny_model
from transformers import AutoTokenizer

from agenthub_trainer_trl.sft import assistant_tokens


def agenthub(
    *args: str, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenthub", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def test_dry_run_prints_the_resolved_config_and_the_plan_and_trains_nothing(tmp_path: Path) -> None:
    done = agenthub("run", "trainer=trl", "steps=3", "horizon.kind=stepwise", "horizon.rounds=[1,2,3]",
                    "horizon.every=10", "--dry-run", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed = yaml.safe_load(done.stdout)
    assert printed["trainer"] == "trl" and printed["env"] == "trail" and printed["steps"] == 3
    assert printed["horizon"] == {"kind": "stepwise", "rounds": [1, 2, 3], "every": 10}
    assert printed["model"] is None and printed["mode"] == "grpo"
    assert (
        "# would run: GRPO of a tiny random model" in done.stdout and "3 steps of 16 tasks x 4 episodes" in done.stdout
    )
    assert "# TRL's GRPOConfig would be given:\n#   output_dir: <run dir>/checkpoints" in done.stdout
    assert "#   max_completion_length: 1\n" in done.stdout and "#   max_steps: 3\n" in done.stdout
    assert "# checks before launch passed (env 'trail', task 0, played with the oracle 'trail-oracle'" in done.stdout
    assert not (tmp_path / "runs").exists()


def test_a_dry_run_writes_nothing_anywhere(tmp_path: Path) -> None:
    """Its checks build the tiny model in a temporary directory and remove it, torch's import-time cache
    folder (``$TMPDIR/torchinductor_$USER``) included."""
    work, scratch = tmp_path / "work", tmp_path / "tmp"
    work.mkdir(), scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    done = agenthub("run", "trainer=trl", "--dry-run", cwd=work, env={**env, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stderr
    assert "# checks before launch passed" in done.stdout
    assert list(scratch.iterdir()) == [] and list(work.iterdir()) == []


def test_settings_that_cannot_train_are_refused_before_a_run_is_made(tmp_path: Path) -> None:
    """The tiny model's one token a turn cannot say guess's `guess 14`; nor fit its prompt in 100 tokens."""
    for run in (["run", "trainer=trl", "env=guess", "steps=1"], ["run", "trainer=trl", "env=guess", "--dry-run"]):
        done = agenthub(*run, "max_context=100", cwd=tmp_path)
        assert done.returncode == 2, done.stdout
        assert "refused before launch (env 'guess', task 0, played with the oracle 'guess-oracle'):" in done.stderr
        assert "  - max_tokens: max_tokens=1 cannot hold the env's actions" in done.stderr
        assert "  - max_context: the first prompt of task 0" in done.stderr and "Set max_context>=" in done.stderr
    assert not (tmp_path / "runs").exists()


def test_a_run_says_where_it_is_counts_steps_one_way_and_does_not_warn_of_its_first_steps(tmp_path: Path) -> None:
    """horizon=1 on trail's 3 forks: every episode hits the turn limit; a run's first steps are not warned
    about (a random model starts out mostly truncated), only truncation that persists while the reward is
    flat (agenthub.training.StepWarnings, patience 5: never before step 10)."""
    done = agenthub("run", "trainer=trl", "steps=2", "tasks_per_step=2", "num_generations=2", "horizon=1",
                    "test_episodes=3", "run_id=r", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    where = lines.index(f"run directory: {Path('runs') / 'r'}")
    first_step = next(i for i, line in enumerate(lines) if line.startswith("step 1/2 "))
    assert lines[0].startswith("checks before launch passed") and where < first_step
    assert not [line for line in lines if line.startswith("warning: step")]
    assert "Warning" not in done.stderr and "Loading weights" not in done.stderr  # no framework noise
    assert "at step 1 -> " in done.stdout and " at step 2 (over the run;" in done.stdout  # as the step lines
    assert re.search(r"^test split: success \d\.\d\d over 3 episodes", done.stdout, re.MULTILINE)


def test_bad_settings_are_explained_before_anything_starts(tmp_path: Path) -> None:
    typo = agenthub("run", "trainer=trl", "stepz=3", "--dry-run", cwd=tmp_path)
    assert typo.returncode == 2 and "unknown key 'stepz'; did you mean 'steps'?" in typo.stderr
    sft = agenthub("run", "trainer=trl", "mode=sft", cwd=tmp_path)
    assert sft.returncode == 2 and "mode=sft needs dataset=FILE" in sft.stderr and "agenthub export sft" in sft.stderr
    env = agenthub("run", "trainer=trl", "env=trial", "steps=1", cwd=tmp_path)
    assert env.returncode == 2 and "unknown env 'trial'; did you mean 'trail'?" in env.stderr


def test_the_assistant_mask_covers_each_reply_and_its_end_token_only(tmp_path: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(build_tiny_model(tmp_path / "m"))
    messages = [
        {"role": "system", "content": get_plugin_host().env("trail").instructions or ""},
        {"role": "user", "content": "Fork 1 of 2: the sign points left."},
        {"role": "assistant", "content": "left"},
        {"role": "user", "content": "Good. Fork 2 of 2: the sign points right."},
        {"role": "assistant", "content": "right"},
    ]
    ids, mask = assistant_tokens(tokenizer, messages)
    trained = [i for i, m in zip(ids, mask, strict=True) if m]
    assert tokenizer.decode(trained) == "left<|im_end|>right<|im_end|>"
    assert len(ids) == len(mask) and ids == render(tokenizer, messages, add_generation_prompt=False)


def test_sft_warm_start_from_an_exported_oracle_run(tmp_path: Path) -> None:
    evaluated = agenthub("eval", "env=trail", "split=train", "n=24", "run_id=oracle", "concurrency=8", cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    exported = agenthub("export", "sft", "runs/oracle", "--only-success", "-o", "sft.jsonl", cwd=tmp_path)
    assert exported.returncode == 0 and "wrote 24 conversations" in exported.stdout

    trained = agenthub("run", "trainer=trl", "mode=sft", "dataset=sft.jsonl", "epochs=6", "batch_size=8",
                       "learning_rate=0.01", "run_id=sft", cwd=tmp_path)  # fmt: skip
    assert trained.returncode == 0, trained.stderr
    run_dir = tmp_path / "runs" / "sft"
    assert (run_dir / "model" / "config.json").is_file() and (run_dir / "model" / "tokenizer.json").is_file()
    losses = [m["loss"] for m in RunStore.existing(run_dir).metrics() if "loss" in m]
    assert len(losses) == 18 and losses[-1] < losses[0] / 2  # 24 conversations / 8 per step x 6 epochs
    assert json.loads((run_dir / "run.json").read_text())["status"] == "finished"
    assert f"model={run_dir.relative_to(tmp_path) / 'model'}" in trained.stdout  # how to start GRPO from it


def test_sft_on_a_missing_dataset_says_how_to_make_one(tmp_path: Path) -> None:
    done = agenthub("run", "trainer=trl", "mode=sft", "dataset=nothing.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and "does not exist; make one with `agenthub export sft RUN_DIR`" in done.stderr
    assert not (tmp_path / "runs").exists()
