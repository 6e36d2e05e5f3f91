"""``agenthub run trainer=verl``: the parquet, the agent-loop YAML and a command verl accepts; the dry run,
which prints them and writes nothing; and the checks that refuse a run before verl starts."""

from __future__ import annotations

import importlib
import shlex
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from agenthub import ConfigError, Task
from agenthub.config import validate_config as validate_settings
from agenthub.rollout import RunStore
from agenthub.testing import run_cli as main
from verl.experimental.agent_loop import AgentLoopBase
from verl.trainer.ppo.utils import need_critic, need_reference_policy
from verl.utils.config import validate_config

from agenthub_trainer_verl.config import VerlConfig
from agenthub_trainer_verl.trainer import prepare

from .conftest import compose_verl


def prepared(tmp_path: Path, **settings: object) -> tuple[Path, str]:
    """The files a run writes before it starts verl (``prepare``, as ``agenthub run`` calls it)."""
    config = validate_settings(
        VerlConfig, {"env": "trail", "model": "/models/qwen", "runs_dir": str(tmp_path), "run_id": "run", **settings}
    )
    store, _launch, written = prepare(config)
    return store.path, "\n".join(f"# wrote {path}" for path in written)


def command_of(run_dir: Path) -> list[str]:
    script = (run_dir / "command.sh").read_text().split("\n", 2)[2]
    return shlex.split(script.replace("\\\n", " "))


def test_a_run_writes_task_rows_yaml_and_the_command(tmp_path: Path):
    run_dir, printed = prepared(tmp_path, max_tasks=6, val_split="test", n=4, horizon=2)

    rows = pq.read_table(run_dir / "train.parquet").to_pylist()
    assert [Task.model_validate_json(r["extra_info"]["agenthub_task"]) for r in rows] == [
        Task(env="trail", task_id=i, split="train") for i in range(6)
    ]
    assert [r["extra_info"]["index"] for r in rows] == list(range(6))
    assert {r["agent_name"] for r in rows} == {"agenthub"}
    assert {r["data_source"] for r in rows} == {"agenthub/trail"}
    val = pq.read_table(run_dir / "val.parquet").to_pylist()
    assert [r["extra_info"]["task_id"] for r in val] == [str(i) for i in range(10_000, 10_006)]

    (entry,) = yaml.safe_load((run_dir / "agent_loop.yaml").read_text())
    assert entry == {
        "name": "agenthub",
        "_target_": "agenthub_trainer_verl.agent_loop.AgenthubAgentLoop",
        "env": "trail",
        "horizon": 2,
    }
    module, _, name = entry["_target_"].rpartition(".")
    assert issubclass(getattr(importlib.import_module(module), name), AgentLoopBase)

    command = command_of(run_dir)
    assert command[1:3] == ["-m", "verl.trainer.main_ppo"]
    for path in ("train.parquet", "val.parquet", "agent_loop.yaml", "command.sh"):
        assert f"# wrote {run_dir / path}" in printed

    config = compose_verl(command[3:])  # verl's own hydra config accepts every override ...
    validate_config(config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))
    assert config.algorithm.adv_estimator == "grpo"
    assert config.data.train_files == str((run_dir / "train.parquet").resolve())
    assert config.data.val_files == str((run_dir / "val.parquet").resolve())
    rollout = config.actor_rollout_ref.rollout
    assert rollout.mode == "async" and rollout.multi_turn.enable and rollout.n == 4
    assert rollout.agent.agent_loop_config_path == str((run_dir / "agent_loop.yaml").resolve())
    assert rollout.agent.default_agent_loop == "agenthub"
    assert rollout.calculate_log_probs
    assert (rollout.prompt_length, rollout.response_length) == (1024, 4096)  # ... and derives the rest from them


def test_verl_settings_pass_through(tmp_path: Path):
    run_dir, _ = prepared(
        tmp_path,
        max_tasks=2,
        verl={
            "trainer": {"save_freq": 7},
            "actor_rollout_ref": {"actor": {"use_dynamic_bsz": True, "ppo_max_token_len_per_gpu": 8192}},
        },
    )
    config = compose_verl(command_of(run_dir)[3:])
    assert config.trainer.save_freq == 7
    assert config.actor_rollout_ref.actor.use_dynamic_bsz is True
    assert config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu == 8192


def test_unknown_split_is_refused_in_words(tmp_path: Path):
    config = VerlConfig(env="trail", model="m", split="dev", runs_dir=str(tmp_path))
    with pytest.raises(ConfigError, match=r"no split 'dev'; its splits: test, train"):
        prepare(config)


def test_unknown_setting_is_refused_with_a_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["run", "trainer=verl", "env=trail", "model=m", "max_task=3", "--dry-run"]) != 0
    assert "unknown key 'max_task'; did you mean 'max_tasks'?" in capsys.readouterr().err


def test_agent_loop_yaml_with_a_typo_fails_on_instantiation(tmp_path: Path):
    from agenthub_trainer_verl.loop_settings import LoopSettings

    with pytest.raises(ValueError, match="max_token") as failure:
        LoopSettings.from_kwargs({"env": "trail", "max_token": 3})
    assert "--dry-run" in str(failure.value)


def test_dry_run_prints_settings_files_and_command_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """The headline command with no model: the default model, and a plan, on a machine without a GPU."""
    runs = tmp_path / "runs"
    assert main(["run", "trainer=verl", "env=trail", f"runs_dir={runs}", "max_tasks=3", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert not runs.exists()  # nothing written, not even the run directory
    assert "model: Qwen/Qwen2.5-0.5B-Instruct" in printed
    run_dir = printed.split("# run directory ", 1)[1].split(":", 1)[0]
    assert f"# would write {run_dir}/train.parquet: 3 rows" in printed
    assert "_target_: agenthub_trainer_verl.agent_loop.AgenthubAgentLoop" in printed
    shown = printed.split("also written as command.sh):\n", 1)[1].split("\n# ", 1)[0]
    command = shlex.split(shown.replace("\\\n", " "))
    assert command[1:3] == ["-m", "verl.trainer.main_ppo"]
    assert "actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct" in command
    config = compose_verl(command[3:])  # the command a run would start is one verl accepts
    assert config.trainer.n_gpus_per_node >= 1
    assert "# a real run would stop here: verl 0.9 needs an NVIDIA GPU" in printed
    assert "checks before launch: not run (the tokenizer of 'Qwen/Qwen2.5-0.5B-Instruct' is not on this" in printed


def test_without_a_gpu_a_run_stops_at_once_and_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["run", "trainer=verl", "env=trail", f"runs_dir={tmp_path / 'runs'}"]) == 2
    error = capsys.readouterr().err
    assert "trainer=verl cannot start on this machine" in error
    assert "verl 0.9 needs an NVIDIA GPU with CUDA and this machine has none" in error
    assert "--dry-run" in error and "trainer=trl" in error and "trainer=swift" in error
    assert not (tmp_path / "runs").exists()


def test_dry_run_refuses_token_limits_that_cannot_train(
    tmp_path: Path, tiny_model: Path, capsys: pytest.CaptureFixture[str]
):
    """Played for real: the guess env's oracle with the model's tokenizer, its actions cut to max_tokens."""
    args = ["run", "trainer=verl", "env=guess", f"model={tiny_model}", f"runs_dir={tmp_path}", "--dry-run"]
    assert main([*args, "max_tokens=2", "prompt_length=64"]) == 2
    error = capsys.readouterr().err
    assert "refused before launch (env 'guess'" in error
    assert "  - max_tokens: max_tokens=2 cannot hold the env's actions" in error
    assert "  - prompt_length: the first prompt of task" in error and "Set prompt_length>=" in error
    assert main([*args, "max_tokens=64"]) == 0
    assert "# checks before launch passed (env 'guess'" in capsys.readouterr().out


@pytest.mark.parametrize(("settings", "expected"), [({}, "token"), ({"rollout_is": None}, None)])
def test_off_policy_correction_is_on_by_default_and_can_be_turned_off(
    tmp_path: Path, settings: dict[str, object], expected: str | None
):
    """verl's rollout importance sampling reads the logprobs the agent loop returns; rollout_is=null: none."""
    from verl.trainer.config.algorithm import RolloutCorrectionConfig
    from verl.utils.config import omega_conf_to_dataclass

    run_dir, _ = prepared(tmp_path, **settings)
    command = command_of(run_dir)
    assert f"algorithm.rollout_correction.rollout_is={expected or 'null'}" in command
    config = compose_verl(command[3:])
    # verl's own typed config validates the section (its __post_init__ refuses unknown levels)
    correction = omega_conf_to_dataclass(config.algorithm.rollout_correction, RolloutCorrectionConfig)
    assert correction.rollout_is == expected and float(correction.rollout_is_threshold) == 2.0
    assert correction.rollout_rs is None and not correction.bypass_mode
    assert config.actor_rollout_ref.rollout.calculate_log_probs  # the weights' denominator


def snapshot(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


def test_resume_dry_run_prints_verls_resume_command_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    run_dir, _ = prepared(tmp_path, max_tasks=4)
    assert "trainer.resume_mode=disable" in command_of(run_dir)  # a new run never loads a stray checkpoint
    before = snapshot(run_dir)
    assert main(["run", "--resume", str(run_dir), "--dry-run", "steps=300"]) == 0
    printed = capsys.readouterr().out
    assert snapshot(run_dir) == before  # nothing written
    shown = printed.split("also written as command.sh):\n", 1)[1].split("\n# ", 1)[0]
    command = shlex.split(shown.replace("\\\n", " "))
    assert "trainer.resume_mode=auto" in command
    config = compose_verl(command[3:])  # verl's own hydra config: resume from the same checkpoint directory
    assert config.trainer.resume_mode == "auto"
    assert config.trainer.default_local_dir == str((run_dir / "checkpoints").resolve())
    assert config.trainer.total_training_steps == 300
    assert config.data.train_files == str((run_dir / "train.parquet").resolve())


def test_resume_refuses_changes_other_than_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    run_dir, _ = prepared(tmp_path, max_tasks=4)
    before = snapshot(run_dir)
    assert main(["run", "--resume", str(run_dir), "--dry-run", "n=4", "learning_rate=0.1"]) == 2
    error = capsys.readouterr().err
    assert f"cannot resume {run_dir}: its config differs in learning_rate: 1e-06 -> 0.1, n: 8 -> 4" in error
    assert "only address, backend, save_freq, steps may change on resume" in error
    assert snapshot(run_dir) == before


def test_a_resumed_run_reuses_its_directory_and_tasks(tmp_path: Path):
    run_dir, _ = prepared(tmp_path, max_tasks=4)
    train = (run_dir / "train.parquet").read_bytes()
    config = validate_settings(VerlConfig, {**RunStore.existing(run_dir).config(), "steps": 7, "resume": str(run_dir)})
    store, _launch, written = prepare(config)
    assert store.path == run_dir and (run_dir / "train.parquet").read_bytes() == train
    assert sorted(p.name for p in written) == ["agent_loop.yaml", "command.sh"]
    reopened = RunStore.existing(run_dir)
    assert reopened.config()["steps"] == 7 and "resume" not in reopened.config()
    assert reopened.meta()["status"] == "running" and "resumed_at" in reopened.meta()
    command = command_of(run_dir)
    assert "trainer.resume_mode=auto" in command and "trainer.total_training_steps=7" in command


def test_a_setting_added_since_the_run_started_counts_as_its_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    run_dir, _ = prepared(tmp_path, max_tasks=4)
    stored = yaml.safe_load((run_dir / "config.yaml").read_text())
    del stored["rollout_is"], stored["rollout_is_threshold"]  # as a run from before these settings stored it
    (run_dir / "config.yaml").write_text(yaml.safe_dump(stored))
    assert main(["run", "--resume", str(run_dir), "--dry-run"]) == 0
    assert "algorithm.rollout_correction.rollout_is=token" in capsys.readouterr().out
