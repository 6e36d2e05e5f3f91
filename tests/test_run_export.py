"""`agenthub run` (config resolution, trainer lookup, resume) and `agenthub export sft|parquet`, plus
`trail`, the built-in env that `agenthub run trainer=trl` trains on by default. No RL framework needed."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from agenthub import EnvInfo, Observation, Outcome, PluginHost, Task, TrainerSpec, Trajectory, Turn, hookimpl
from agenthub.builtin.trail import INSTRUCTIONS, TrailEnv, TrailOracle, parse_direction
from agenthub.cli.main import main
from agenthub.plugins import get_plugin_host, set_plugin_host
from agenthub.rollout.store import RunStore

RECORDED: list[tuple[dict[str, Any], bool]] = []


class RecordingTrainer:
    """A trainer plugin that records what `agenthub run` hands it (real trainers need torch, absent here)."""

    def run(self, config: Mapping[str, Any], *, dry_run: bool = False) -> int:
        RECORDED.append((dict(config), dry_run))
        return 0


class RecordingPlugin:
    @hookimpl
    def agenthub_register_trainers(self, register: Any) -> None:
        register(TrainerSpec(name="recorder", factory=RecordingTrainer))


@pytest.fixture
def recorder() -> Iterator[list[tuple[dict[str, Any], bool]]]:
    set_plugin_host(PluginHost(load_entry_points=False, extra_plugins=[RecordingPlugin()]))
    RECORDED.clear()
    yield RECORDED
    set_plugin_host(None)


def agenthub(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenthub", *args], cwd=cwd, capture_output=True, text=True, timeout=180
    )


# ---- agenthub run -------------------------------------------------------------------


def test_run_without_a_trainer_says_how_and_lists_the_installed_ones(
    recorder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "env=trail"]) == 2
    err = capsys.readouterr().err
    assert "agenthub run needs trainer=NAME" in err and "installed trainers: recorder" in err
    assert recorder == []


def test_unknown_trainer_suggests_the_closest_and_lists_installed(
    recorder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "trainer=recordr", "env=trail"]) == 2
    err = capsys.readouterr().err
    assert "unknown trainer 'recordr'; did you mean 'recorder'?" in err
    assert "installed trainers: recorder" in err


def test_an_unknown_env_or_agent_is_refused_before_the_trainer_starts_any_server(
    recorder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "trainer=recorder", "env=trial"]) == 2
    err = capsys.readouterr().err
    assert "unknown env 'trial'; did you mean 'trail'? installed envs: guess" in err
    assert "Install more with `agenthub install NAME`" in err
    assert main(["run", "trainer=recorder", "env=trail", "agent=orcale"]) == 2
    assert "unknown agent 'orcale'; did you mean 'oracle'?" in capsys.readouterr().err
    assert recorder == []  # the trainer never ran
    # with url= the env servers are someone else's, and may serve an env not installed here
    assert main(["run", "trainer=recorder", "env=remote-only", "url=http://127.0.0.1:9"]) == 0
    assert recorder[0][0]["env"] == "remote-only"


def test_run_hands_the_trainer_the_file_then_the_overrides(recorder: list[Any], tmp_path: Path) -> None:
    config = tmp_path / "train.yaml"
    config.write_text(
        yaml.safe_dump({"trainer": "recorder", "env": "trail", "steps": 5, "horizon": {"kind": "stepwise"}})
    )
    assert main(["run", "--config", str(config), "steps=7", "horizon.rounds=[1,2,3]", "horizon.every=4"]) == 0
    assert main(["run", "trainer=recorder", "--dry-run"]) == 0
    assert recorder == [
        (
            {
                "trainer": "recorder",
                "env": "trail",
                "steps": 7,
                "horizon": {"kind": "stepwise", "rounds": [1, 2, 3], "every": 4},
            },
            False,
        ),
        ({"trainer": "recorder"}, True),
    ]


def test_resume_hands_the_trainer_the_stored_config_and_the_run_dir(
    recorder: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = RunStore.create({"trainer": "recorder", "env": "trail", "steps": 5}, root=tmp_path, run_id="r1")
    store.finish()
    assert main(["run", "--resume", str(store.path), "steps=9"]) == 0
    assert recorder == [({"trainer": "recorder", "env": "trail", "steps": 9, "resume": str(store.path)}, False)]
    assert main(["run", "--resume", str(tmp_path / "nothing")]) == 2
    assert "is not a run directory" in capsys.readouterr().err
    assert main(["run", "--resume", str(store.path), "--config", str(tmp_path / "x.yaml")]) == 2
    assert "drop --config" in capsys.readouterr().err


def test_run_is_a_registered_command_that_explains_itself(tmp_path: Path) -> None:
    listed = agenthub("--help", cwd=tmp_path)
    assert " run " in listed.stdout and " export " in listed.stdout
    missing = agenthub("run", "env=trail", cwd=tmp_path)
    assert missing.returncode == 2 and "needs trainer=NAME" in missing.stderr


# ---- agenthub export sft --------------------------------------------------------------


def turn(action: str, observation: str, reward: float, *, done: bool = False, text: str | None = None) -> Turn:
    return Turn(action=action, observation=observation, reward=reward, terminated=done, truncated=False, text=text)


def trajectory(key: str, outcome: Outcome, turns: list[Turn], env: str = "trail") -> Trajectory:
    return Trajectory(
        task=Task(env=env, task_id=int(key)),
        first_observation=f"start {key}",
        turns=turns,
        reward=sum(t.reward for t in turns),
        outcome=outcome,
        key=key,
    )


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    store = RunStore.create({"env": "trail"}, root=tmp_path, run_id="run")
    store.write(
        trajectory(
            "1",
            Outcome.SUCCESS,
            [turn("left", "fork 2", 0.5), turn("right", "end", 0.5, done=True, text="  right\n")],
        )
    )
    store.write(trajectory("2", Outcome.FAILURE, [turn("left", "dead end", 0.0, done=True)]))
    store.write(trajectory("3", Outcome.ENV_ERROR, [turn("left", "fork 2", 0.5)]))  # never exported
    store.write(trajectory("4", Outcome.TRUNCATED, []))  # no reply to imitate
    store.finish()
    return store.path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_sft_writes_chat_jsonl_with_the_env_instructions_as_system_prompt(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "sft", str(run_dir)]) == 0
    assert "wrote 2 conversations" in capsys.readouterr().out
    records = read_jsonl(run_dir / "sft.jsonl")
    assert [(r["task_id"], r["outcome"]) for r in records] == [(1, "success"), (2, "failure")]
    assert records[0]["messages"] == [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": "start 1"},
        {"role": "assistant", "content": "left"},
        {"role": "user", "content": "fork 2"},
        {"role": "assistant", "content": "  right\n"},  # the raw reply, not the parsed action
    ]
    assert records[0]["reward"] == 1.0 and records[0]["env"] == "trail"


def test_export_sft_only_success_and_a_chosen_system_prompt(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "ok.jsonl"
    assert main(["export", "sft", str(run_dir), "--only-success", "-o", str(out), "--system-prompt", ""]) == 0
    records = read_jsonl(out)
    assert [r["outcome"] for r in records] == ["success"]
    assert records[0]["messages"][0] == {"role": "user", "content": "start 1"}  # '' means no system message


def test_export_sft_explains_an_unknown_env_and_an_empty_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = RunStore.create({}, root=tmp_path, run_id="other")
    store.write(trajectory("1", Outcome.FAILURE, [turn("x", "y", 0.0, done=True)], env="nowhere"))
    store.finish()
    assert main(["export", "sft", str(store.path)]) == 2
    assert "env 'nowhere' is not installed" in capsys.readouterr().err
    assert main(["export", "sft", str(store.path), "--only-success", "--system-prompt", "play"]) == 1
    assert "has no successful episodes" in capsys.readouterr().err
    assert main(["export", "sft", str(tmp_path / "missing")]) == 2
    assert "is not a run directory" in capsys.readouterr().err


def test_export_parquet_keeps_every_trajectory(run_dir: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    assert main(["export", "parquet", str(run_dir), "-o", str(run_dir / "t.parquet")]) == 0
    assert pq.read_table(run_dir / "t.parquet").num_rows == 4


def test_export_sft_of_a_real_eval_run_of_the_trail_oracle(tmp_path: Path) -> None:
    done = agenthub("eval", "env=trail", "n=5", "k=2", "run_id=oracle", "concurrency=4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = tmp_path / "runs" / "oracle"
    exported = agenthub("export", "sft", str(run), "--only-success", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    records = read_jsonl(run / "sft-success.jsonl")
    assert len(records) == 10 and {r["outcome"] for r in records} == {"success"}
    for record in records:
        roles = [m["role"] for m in record["messages"]]
        assert roles == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]  # 3 forks
        assert record["messages"][0]["content"] == INSTRUCTIONS
        assert all(m["content"] in ("left", "right") for m in record["messages"] if m["role"] == "assistant")


# ---- trail: the default env of `agenthub run trainer=trl` -------------------------------


def test_trail_follows_the_signs_and_a_wrong_turn_loses() -> None:
    env = TrailEnv(forks=3)
    observation, info = env.reset(task_id=7)
    assert observation in ("Fork 1 of 3: the sign points left.", "Fork 1 of 3: the sign points right.")
    assert info["available_actions"] == ["left", "right"]
    total = 0.0
    for fork in range(3):
        sign = observation.rsplit(" ", 1)[-1].rstrip(".")
        observation, reward, done, truncated, info = env.step(f"I go {sign}")
        total += reward
        assert done == (fork == 2) and not truncated
    assert info["won"] is True and total == pytest.approx(1.0)
    observation, _ = env.reset(task_id=7)
    wrong = "left" if observation.endswith("right.") else "right"
    _, reward, done, _, info = env.step(wrong)
    assert (reward, done, info["won"]) == (0.0, True, False)


def test_trail_reads_the_word_else_the_first_l_or_r_and_a_reply_without_either_is_no_move() -> None:
    assert parse_direction("Right!") == "right" and parse_direction("go left now") == "left"
    assert parse_direction("xyz rl") == "right" and parse_direction("all") == "left"
    assert parse_direction("") is None and parse_direction("north") == "right"
    env = TrailEnv(forks=2)
    env.reset(task_id=1)
    observation, reward, done, _, info = env.step("??")
    assert (reward, done, info["invalid_action"], info["fork"]) == (0.0, False, True, 0)
    assert observation.startswith("That is not a direction. Fork 1 of 2: the sign points ")


def test_trail_tasks_are_fixed_by_id_and_differ_between_ids() -> None:
    first = [TrailEnv().reset(task_id=i)[0] for i in range(40)]
    assert first == [TrailEnv().reset(task_id=i)[0] for i in range(40)]
    assert len({o.rsplit(" ", 1)[-1] for o in first}) == 2  # both directions occur
    assert TrailEnv().reset(seed=3) == TrailEnv().reset(seed=3)
    with pytest.raises(ValueError, match="non-negative integers"):
        TrailEnv().reset(task_id="a")


def test_trail_oracle_wins_and_the_env_passes_conformance(tmp_path: Path) -> None:
    env, oracle = TrailEnv(), TrailOracle()
    info = EnvInfo(name="trail", version="0", default_max_turns=3, splits=["train"])
    for task_id in range(20):
        observation, _ = env.reset(task_id=task_id)
        episode = oracle.start_episode(Task(env="trail", task_id=task_id), info)
        done, step_info = False, {}
        while not done:
            action = asyncio.run(episode.act(Observation(text=observation))).action
            observation, _, done, _, step_info = env.step(action)
        assert step_info["won"] is True
    assert get_plugin_host().env("trail").oracle == "trail-oracle"
    checked = agenthub("check", "env=trail", "--json", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["passed"]
