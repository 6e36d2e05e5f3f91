"""``agenthub run trainer=openrlhf --dry-run``, and the files a run writes, read back by OpenRLHF's own code."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any

import httpx
import pytest
from agenthub import ConfigError
from agenthub.testing import run_cli as main
from openrlhf.datasets.prompts_dataset import preprocess_data

from agenthub_trainer_openrlhf.agent import parse_task
from agenthub_trainer_openrlhf.config import OpenRlhfConfig
from agenthub_trainer_openrlhf.launch import PROMPTS_FILE, agent_func_path, build_launch, train_flags
from agenthub_trainer_openrlhf.settings import SETTINGS_ENV, AgentSettings
from agenthub_trainer_openrlhf.trainer import launch


def flag_values(argv: list[str], name: str) -> list[str]:
    """The values after ``--name`` (up to the next flag)."""
    start = argv.index(f"--{name}") + 1
    values = []
    for item in argv[start:]:
        if item.startswith("--"):
            break
        values.append(item)
    return values


def test_dry_run_prints_the_exact_command_and_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["run", "--dry-run", "trainer=openrlhf", "env=trail", "model=/models/qwen", "tasks=5", "horizon=3"]
    assert main([*args, f"runs_dir={tmp_path}", "run_id=r", "openrlhf.ds.zero_stage=3", "gpus_per_node=4"]) == 0
    out = capsys.readouterr().out
    assert not (tmp_path / "r").exists()  # a dry run writes nothing
    assert "model: /models/qwen" in out and "gpus_per_node: 4" in out  # the resolved settings
    assert "# a real run would stop here: OpenRLHF 0.11 needs an NVIDIA GPU" in out
    assert "# checks before launch: not run (the tokenizer of '/models/qwen' is not on this machine yet)" in out

    command_line = out.strip().splitlines()[-1]
    env_assignment, *argv = shlex.split(command_line)
    assert env_assignment == f"{SETTINGS_ENV}={tmp_path / 'r' / 'agent.json'}"
    assert argv[1:3] == ["-m", "openrlhf.cli.train_ppo_ray"]
    assert flag_values(argv, "train.agent_func_path") == [agent_func_path()] and Path(agent_func_path()).is_file()
    assert flag_values(argv, "data.prompt_dataset") == [str(tmp_path / "r" / PROMPTS_FILE)]
    assert flag_values(argv, "data.input_key") == ["input"]
    assert flag_values(argv, "algo.dynamic_filtering_enable") == []  # a bare flag: on
    low, high = flag_values(argv, "algo.dynamic_filtering_range")
    assert (float(low), float(high)) == (-1e9, 1e9)
    assert argparse.ArgumentParser()._negative_number_matcher.match(low)  # argparse reads it as a number, not a flag
    assert flag_values(argv, "ds.zero_stage") == ["3"]  # openrlhf.* passes through
    assert flag_values(argv, "vllm.num_engines") == ["4"] and flag_values(argv, "actor.num_gpus_per_node") == ["4"]
    assert flag_values(argv, "rollout.n_samples_per_prompt") == ["8"]
    assert "--ckpt.load_enable" not in argv and "--data.apply_chat_template" not in argv

    settings_text = out.split("agent.json\n", 1)[1].split("\n# ", 1)[0]
    settings = AgentSettings.model_validate_json(settings_text)
    assert settings.episodes_per_step == 8 * 16 // 4  # a rollout's episodes, shared by the 4 vLLM engines
    assert settings.env == "trail" and settings.urls == ["<local trail server 1>"] and settings.max_tokens == 512
    rows = [json.loads(line) for line in out.split("(5 rows)\n", 1)[1].splitlines()[:3]]
    assert [parse_task(r["input"], "trail").task_id for r in rows] == [0, 1, 2]
    assert {parse_task(r["input"], "trail").max_turns for r in rows} == {3}
    assert "# ... 2 more rows" in out


def test_written_prompts_reach_the_agent_through_openrlhfs_preprocessing(tmp_path: Path) -> None:
    config = OpenRlhfConfig(env="trail", model="m", tasks=4, split="test")
    launch = build_launch(config, tmp_path, urls=["http://127.0.0.1:9"], task_ids=[10_000, 10_001], run_id="x")
    launch.write_files()
    for line in (tmp_path / PROMPTS_FILE).read_text().splitlines():
        prompt, label = preprocess_data(json.loads(line), input_key="input")  # what PromptDataset does per row
        task = parse_task(prompt, "trail")
        assert task.split == "test" and task.task_id in (10_000, 10_001) and label == ""
    assert AgentSettings.model_validate_json((tmp_path / "agent.json").read_text()).store == str(tmp_path)


def test_ray_job_submit_carries_the_settings_inline() -> None:
    config = OpenRlhfConfig(env="trail", model="m", url="http://envs:8000", ray_address="http://head:8265")
    launch = build_launch(config, Path("/shared/run"), urls=["http://envs:8000"], task_ids=[0], run_id="x")
    assert launch.command[:4] == ["ray", "job", "submit", "--address"] and launch.environment == {}
    runtime_env = json.loads(launch.command[launch.command.index("--runtime-env-json") + 1])
    settings = AgentSettings.model_validate_json(runtime_env["env_vars"][SETTINGS_ENV])
    assert settings.urls == ["http://envs:8000"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"openrlhf": {"algo": {"dynamic_filtering_enable": False}}}, "dynamic_filtering_enable must stay on"),
        ({"openrlhf": {"data": {"apply_chat_template": True}}}, "leave openrlhf.data.apply_chat_template"),
    ],
    ids=["filtering-off", "chat-template"],
)
def test_settings_that_would_train_on_failures_or_break_prompts_are_refused(
    overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        train_flags(OpenRlhfConfig(env="trail", model="m", **overrides), Path("/run"))


def test_a_cluster_without_reachable_env_servers_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--dry-run", "trainer=openrlhf", "env=trail", "model=m", "ray_address=http://head:8265"])
    assert code != 0
    assert "start env servers the cluster can reach and pass url=" in capsys.readouterr().err


def test_without_a_gpu_a_run_stops_at_once_and_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "trainer=openrlhf", "env=trail", f"runs_dir={tmp_path}"]) == 2
    error = capsys.readouterr().err
    assert "trainer=openrlhf cannot start on this machine" in error
    assert "OpenRLHF 0.11 needs an NVIDIA GPU with CUDA and this machine has none" in error
    assert "--dry-run" in error and "trainer=trl" in error and "trainer=swift" in error
    assert list(tmp_path.iterdir()) == []


def test_dry_run_refuses_token_limits_that_cannot_train(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Played for real: the guess env's oracle with the model's tokenizer, its actions cut to max_tokens."""
    args = ["run", "--dry-run", "trainer=openrlhf", "env=guess", f"model={tiny_model_dir}", f"runs_dir={tmp_path}"]
    assert main([*args, "max_tokens=2", "max_len=100"]) == 2
    error = capsys.readouterr().err
    assert "  - max_len: the first prompt of task" in error and "Set max_len>=" in error
    assert "  - max_tokens: max_tokens=2 cannot hold the env's actions" in error
    assert main([*args, "max_tokens=64"]) == 0
    assert "# checks before launch passed (env 'guess'" in capsys.readouterr().out


def test_a_run_writes_its_files_starts_openrlhf_and_records_how_it_ended(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    config = OpenRlhfConfig(env="trail", model="m", tasks=3, runs_dir=str(tmp_path), run_id="r")
    code = launch(config)  # what `agenthub run` starts once its checks pass (here they cannot: no GPU)
    # OpenRLHF's launcher really started: on this CPU machine it stops at importing vLLM.
    assert code != 0 and "No module named 'vllm'" in capfd.readouterr().err
    run_dir = tmp_path / "r"
    rows = (run_dir / PROMPTS_FILE).read_text().splitlines()
    assert [parse_task(json.loads(r)["input"], "trail").task_id for r in rows] == [0, 1, 2]
    settings = AgentSettings.model_validate_json((run_dir / "agent.json").read_text())
    assert settings.store == str(run_dir.resolve()) and settings.urls[0].startswith("http://127.0.0.1:")
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "failed" and meta["summary"] == {"tasks": 3}
    with pytest.raises(httpx.TransportError):  # the env server it started is stopped again
        httpx.get(settings.urls[0] + "/healthz", timeout=2)


@pytest.mark.parametrize(("setting", "level"), [([], "token"), (["is_correction=off"], "off")])
def test_off_policy_correction_is_on_by_default_and_openrlhf_accepts_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, setting: list[str], level: str, openrlhf_parse: Any
) -> None:
    """vLLM's logprobs correct the actor's loss (OpenRLHF's is_correction); is_correction=off turns it off."""
    args = ["run", "--dry-run", "trainer=openrlhf", "env=trail", "model=/models/qwen", f"runs_dir={tmp_path}"]
    assert main([*args, *setting]) == 0
    _env, *argv = shlex.split(capsys.readouterr().out.strip().splitlines()[-1])
    assert flag_values(argv, "algo.advantage.is_correction_level") == [level]
    parsed = openrlhf_parse(argv[3:])  # every flag the command passes, read by OpenRLHF's own parser
    assert parsed["algo.advantage.is_correction_level"] == level
    assert parsed["train.agent_func_path"] == agent_func_path()


def test_a_horizon_schedule_goes_to_the_agent_and_a_bad_one_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["run", "--dry-run", "trainer=openrlhf", "env=trail", "model=/models/qwen", f"runs_dir={tmp_path}"]
    schedule = ["horizon.kind=stepwise", "horizon.rounds=[2,4]", "horizon.every=10"]
    assert main([*args, *schedule, "run_id=r"]) == 0
    out = capsys.readouterr().out
    settings = AgentSettings.model_validate_json(out.split("agent.json\n", 1)[1].split("\n# ", 1)[0])
    assert settings.horizon == {"kind": "stepwise", "rounds": [2, 4], "every": 10}
    rows = [json.loads(line) for line in out.split("rows)\n", 1)[1].splitlines()[:3]]
    assert {parse_task(r["input"], "trail").max_turns for r in rows} == {None}  # the agent sets it per step
    assert main([*args, "horizon.kind=stepwise", "horizon.rounds=[2,4]"]) != 0
    assert "horizon kind 'stepwise' rejected its settings" in capsys.readouterr().err


def test_resume_refuses_changed_settings_and_keeps_no_secret(tmp_path: Path) -> None:
    """OpenRLHF's checkpoint would continue under any settings; the plugin refuses all but RESUMABLE_CHANGES."""
    from agenthub.rollout import RunStore

    from agenthub_trainer_openrlhf.trainer import open_run, print_dry_run

    first = OpenRlhfConfig(env="trail", model="m", runs_dir=str(tmp_path), run_id="r", token="s3cret")
    open_run(first).finish(status="interrupted")
    run_dir = tmp_path / "r"
    assert "s3cret" not in (run_dir / "config.yaml").read_text()  # a secret is never written to the run
    stored = RunStore.existing(run_dir).config()

    changed = OpenRlhfConfig.model_validate({**stored, "resume": str(run_dir), "learning_rate": 1e-3})
    for attempt in (open_run, print_dry_run):  # a dry run refuses it too, before printing a command
        with pytest.raises(ConfigError, match=r"learning_rate: 1e-06 -> 0\.001.*only .*episodes.* may change"):
            attempt(changed)

    more = OpenRlhfConfig.model_validate({**stored, "resume": str(run_dir), "episodes": 3, "token": "s3cret"})
    store = open_run(more)
    assert store.path == run_dir and store.config()["episodes"] == 3
    assert RunStore.existing(run_dir).meta()["status"] == "running"
