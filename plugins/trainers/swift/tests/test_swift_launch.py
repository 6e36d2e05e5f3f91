"""``agenthub run trainer=swift --dry-run``: the exact files and commands, nothing started."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agenthub import ConfigError, get_plugin_host

from agenthub_trainer_swift.launch import plugin_file


def dry_run(*overrides: str) -> str:
    command = [sys.executable, "-m", "agenthub", "run", *overrides, "--dry-run"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_dry_run_prints_the_colocate_launch(tmp_path: Path) -> None:
    out = dry_run("trainer=swift", "env=trail", "steps=3", "tasks_per_step=2", f"runs_dir={tmp_path}", "run_id=r")
    run = tmp_path / "r"
    assert not run.exists()  # nothing written, nothing started
    lines = out.splitlines()
    dataset = lines[lines.index(f"# file {run / 'dataset.jsonl'} (6 lines)") + 1]
    task = json.loads(json.loads(dataset)["agenthub_task"])
    assert task["env"] == "trail" and task["split"] == "train" and isinstance(task["task_id"], int)
    (command,) = [line for line in lines if " swift rlhf " in line]
    offline = "HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1"  # a local model: no hub at all
    settings = f"AGENTHUB_SWIFT_CONFIG={run / 'agenthub_swift.json'}"
    assert command.startswith(f"{settings} {offline} swift rlhf --rlhf_type grpo")
    assert "--check_model false" in command  # swift's own hub check of a local model's files
    for flag in (
        f"--external_plugins {plugin_file()}",
        "--multi_turn_scheduler agenthub",
        "--reward_funcs agenthub_env_reward",
        "--max_turns 3",  # trail's own turn limit
        f"--model {run / 'tiny-model'} --model_type qwen2 --template chatml",
        "--num_generations 4 --per_device_train_batch_size 8 --generation_batch_size 8",
        "--max_steps 3",
    ):
        assert flag in command
    assert '"urls": [' in out and '"env": "trail"' in out
    assert '"episodes_per_step": 8' in out  # what the scheduler's step warnings judge: 2 tasks x 4 episodes
    assert "# checks before launch passed (env 'trail', task 0, played with the oracle 'trail-oracle'" in out


def test_dry_run_prints_the_server_launch_and_takes_the_ms_swift_name(tmp_path: Path) -> None:
    out = dry_run(
        "trainer=ms-swift", "env=trail", "mode=server", "model=/models/qwen", "url=http://10.1.2.3:8000",
        "rollout_port=8011", "swift.beta=0.04", f"runs_dir={tmp_path}",
    )  # fmt: skip
    rollout = next(line for line in out.splitlines() if " swift rollout " in line)
    train = next(line for line in out.splitlines() if " swift rlhf " in line)
    assert rollout.endswith(" &") and "--vllm_use_async_engine true" in rollout and "--port 8011" in rollout
    assert "--multi_turn_scheduler agenthub" in rollout and "--model /models/qwen" in rollout
    assert "--use_vllm true --vllm_mode server" in train and "--vllm_server_port 8011" in train
    assert "--beta 0.04" in train and "--beta 0.0 " not in train
    assert "OFFLINE" not in train and "--check_model" not in train  # /models/qwen is not here: a hub id
    assert '"http://10.1.2.3:8000"' in out
    # planned for a cluster: the model is not on this machine, so the checks say they did not run
    assert "# checks before launch: not run (the tokenizer of '/models/qwen' is not on this machine yet)" in out
    assert "# a real run would stop here: ms-swift with vLLM (use_vllm=true or mode=server) needs an NVIDIA GPU" in out


def test_bad_settings_are_refused_with_what_to_do() -> None:
    trainer = get_plugin_host().trainer("swift").make()
    with pytest.raises(ConfigError, match="use_vllm"):
        trainer.run({"trainer": "swift", "mode": "server", "use_vllm": True}, dry_run=True)
    with pytest.raises(ConfigError, match="no split 'nope'"):
        trainer.run({"trainer": "swift", "env": "trail", "split": "nope"}, dry_run=True)


def test_settings_that_cannot_train_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "agenthub", "run", "trainer=swift", "env=guess", "max_tokens=1"]
    for extra in ([f"runs_dir={tmp_path}"], [f"runs_dir={tmp_path}", "--dry-run"]):
        done = subprocess.run([*command, *extra], capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 2, done.stdout
        assert "refused before launch (env 'guess'" in done.stderr
        assert "  - max_tokens: max_tokens=1 cannot hold the env's actions" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_vllm_without_a_gpu_stops_at_once_and_says_what_to_do(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "agenthub", "run", "trainer=swift", "env=trail", "use_vllm=true"]
    done = subprocess.run([*command, f"runs_dir={tmp_path}"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2
    assert "trainer=swift cannot start on this machine" in done.stderr
    assert "Use mode=colocate without use_vllm to generate with transformers" in done.stderr
    assert list(tmp_path.iterdir()) == []


def stored_run(tmp_path: Path, *checkpoints: int) -> Path:
    """A run directory as `agenthub run trainer=swift` leaves it, with swift's checkpoints in ``swift/``."""

    from agenthub.training import resumption

    from agenthub_trainer_swift.config import SwiftConfig
    from agenthub_trainer_swift.runs import RESUMABLE_CHANGES

    settings = SwiftConfig(env="trail", steps=3, tasks_per_step=2, runs_dir=str(tmp_path), run_id="r")
    store = resumption.open_run(settings, RESUMABLE_CHANGES, root=tmp_path, run_id="r")
    store.close()
    for step in checkpoints:
        (store.path / "swift" / f"checkpoint-{step}").mkdir(parents=True)
    return store.path


def snapshot(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


def swift_rlhf_args(command_line: str) -> Any:
    """``swift rlhf``'s flags as swift's own argument parser (``RLHFArguments``) reads them."""
    import shlex

    from swift.arguments.rlhf_args import RLHFArguments
    from swift.utils.utils import _patch_get_type_hints
    from transformers import HfArgumentParser

    argv = shlex.split(command_line)
    with _patch_get_type_hints():
        parser = HfArgumentParser([RLHFArguments])
    return parser.parse_args(argv[argv.index("rlhf") + 1 :])


def test_resume_dry_run_prints_swifts_resume_command_and_writes_nothing(tmp_path: Path) -> None:
    run = stored_run(tmp_path, 2, 10)
    before = snapshot(run)
    out = dry_run("--resume", str(run), "steps=12")
    assert snapshot(run) == before  # nothing written
    (command,) = [line for line in out.splitlines() if " swift rlhf " in line]
    assert f"--resume_from_checkpoint {run.absolute() / 'swift' / 'checkpoint-10'}" in command
    args = swift_rlhf_args(command)
    assert args.resume_from_checkpoint == str(run.absolute() / "swift" / "checkpoint-10")
    assert args.max_steps == 12 and args.output_dir == str(run / "swift")
    assert f"# file {run / 'dataset.jsonl'} (24 lines)" in out  # 12 steps x 2 tasks, the same order first


def test_resume_may_move_the_env_servers_onto_a_ray_cluster(tmp_path: Path) -> None:
    from agenthub.training import resumption

    from agenthub_trainer_swift.config import SwiftConfig
    from agenthub_trainer_swift.runs import RESUMABLE_CHANGES

    run = stored_run(tmp_path, 2)
    moved = SwiftConfig(
        env="trail", steps=5, tasks_per_step=2, runs_dir=str(tmp_path), run_id="r", resume=str(run), backend="ray",
        address="auto",
    )  # fmt: skip
    assert resumption.check_resumable(moved, str(run), RESUMABLE_CHANGES).path == run


def test_resume_refuses_changes_and_a_run_without_checkpoints(tmp_path: Path) -> None:
    run = stored_run(tmp_path, 2)
    before = snapshot(run)
    command = [sys.executable, "-m", "agenthub", "run", "--resume", str(run), "--dry-run"]
    done = subprocess.run([*command, "num_generations=2"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert f"cannot resume {run}: its config differs in num_generations: 4 -> 2" in done.stderr
    assert "only address, backend, steps may change on resume" in done.stderr
    (run / "swift" / "checkpoint-2").rmdir()
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "swift saved no checkpoint in" in done.stderr
    assert "swift.save_strategy=steps swift.save_steps=N" in done.stderr
    assert snapshot(run) == before


def test_a_horizon_schedule_reaches_the_scheduler_and_swift_accepts_the_launch(tmp_path: Path) -> None:
    out = dry_run(
        "trainer=swift", "env=trail", "steps=6", "horizon.kind=stepwise", "horizon.rounds=[1,2,5]", "horizon.every=2",
        f"runs_dir={tmp_path}", "run_id=r",
    )  # fmt: skip
    (command,) = [line for line in out.splitlines() if " swift rlhf " in line]
    args = swift_rlhf_args(command)
    assert args.max_turns == 5  # swift stops every episode at --max_turns: the schedule's most
    assert args.callbacks == ["agenthub_step"]  # the training step, for the schedule
    settings = json.loads(out.split("agenthub_swift.json (", 1)[1].split("\n", 1)[1].split("\n# ", 1)[0])
    assert settings["horizon"] == {"kind": "stepwise", "rounds": [1, 2, 5], "every": 2}
    assert "max_turns" not in settings


def test_a_bad_horizon_or_two_turn_limits_are_refused() -> None:
    trainer = get_plugin_host().trainer("swift").make()
    with pytest.raises(ConfigError, match="horizon kind 'stepwise' rejected its settings"):
        trainer.run({"trainer": "swift", "env": "trail", "horizon": {"kind": "stepwise", "rounds": [2]}}, dry_run=True)
    with pytest.raises(ConfigError, match="not both"):
        trainer.run({"trainer": "swift", "env": "trail", "horizon": 3, "max_turns": 3}, dry_run=True)
