"""``env=reasoning_gym:NAME``: reasoning-gym's real generators served over real servers on loopback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("reasoning_gym")

import reasoning_gym

from agenthub import SyncEnvClient, get_plugin_host
from agenthub.errors import ConfigError
from agenthub.reasoning_gym_import import ReasoningGymEnv, reasoning_gym_env_spec
from agenthub.service.launcher import ThreadedServer
from agenthub.service.settings import ServiceSettings
from agenthub.testing.conformance import check_env

# Quick generators from five of reasoning-gym's categories.
SAMPLE = ["leg_counting", "basic_arithmetic", "spell_backward", "gcd", "word_sorting"]


@pytest.mark.parametrize("generator", SAMPLE)
def test_a_sample_of_generators_passes_every_conformance_check_through_a_server(generator: str) -> None:
    report = check_env(f"reasoning_gym:{generator}")  # the oracle answers with the reference answer
    assert report.passed, report.summary()
    assert report.result("reset_after_done").status == "passed", report.summary()


def test_the_task_id_is_an_index_into_the_seeded_dataset_and_the_reward_is_its_scorer() -> None:
    spec = get_plugin_host().env("reasoning_gym:leg_counting")
    dataset = reasoning_gym.create_dataset("leg_counting", seed=0, size=200_000)
    entry = dataset[100_003]
    with ThreadedServer(spec, ServiceSettings()) as server, SyncEnvClient(server.url) as client:
        created = client.create_session(task_id=100_003)
        assert created.observation == entry["question"]
        wrong = client.step(created.id, "<answer>-1</answer>")
        # one attempt by default: a wrong answer ends the episode with the scorer's 0.0
        assert (wrong.reward, wrong.terminated, wrong.info["won"]) == (0.0, True, False)
        again = client.create_session(task_id=100_003)
        right = client.step(again.id, f"I count them up. <answer>{entry['answer']}</answer>")
        assert (right.reward, right.terminated, right.info["won"]) == (1.0, True, True)
        assert client.create_session(task_id=100_004).observation == dataset[100_004]["question"]


def test_attempts_give_the_scorers_feedback_between_answers() -> None:
    env = ReasoningGymEnv("spell_backward", attempts=3)
    question, info = env.reset(task_id=5)
    answer = env.dataset[5]["answer"]
    assert info == {"attempts_left": 3} and question == env.dataset[5]["question"]
    text, reward, terminated, _, info = env.step("<answer>nope</answer>")
    assert text == "Your answer scored 0.00 out of 1. Try again: 2 attempts left."
    assert (reward, terminated, info["score"]) == (0.0, False, 0.0)
    text, reward, terminated, _, info = env.step(answer)  # an untagged reply is the answer as is
    assert (text, reward, terminated, info["won"]) == ("Correct.", 1.0, True, True)
    assert env.step(answer)[0] == "The episode is over. Reset to play again."
    env.reset(task_id=5)
    for _ in range(2):
        env.step("x")
    text, reward, terminated, _, info = env.step("x")
    assert text == "Your answer scored 0.00 out of 1. No attempts are left."
    assert (reward, terminated, info["won"]) == (0.0, True, False)


def test_config_and_seed_reach_the_generator() -> None:
    env = ReasoningGymEnv("basic_arithmetic", seed=7, config={"min_terms": 2, "max_terms": 2})
    expected = reasoning_gym.create_dataset("basic_arithmetic", seed=7, size=10, min_terms=2, max_terms=2)
    assert env.reset(task_id=4)[0] == expected[4]["question"]


def test_wrong_names_config_and_task_ids_are_explained() -> None:
    with pytest.raises(
        ConfigError, match=r"reasoning-gym has no generator 'leg_countin'; choose one of: .*leg_counting"
    ):
        get_plugin_host().env("reasoning_gym:leg_countin")
    with pytest.raises(ConfigError, match=r"rejected its config .*env_kwargs.config.KEY"):
        ReasoningGymEnv("gcd", config={"no_such_field": 1})
    with pytest.raises(ConfigError, match=r"attempts must be an integer >= 1"):
        ReasoningGymEnv("gcd", attempts=0)
    env = ReasoningGymEnv("gcd")
    with pytest.raises(ValueError, match=r"task ids are integers from 0 to 100999"):
        env.reset(task_id="seven")
    assert reasoning_gym_env_spec("gcd").name == "reasoning_gym:gcd"


def test_agenthub_plugins_lists_the_importer() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agenthub", "plugins", "--json"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    records = {r["name"]: r for r in json.loads(done.stdout)}
    assert records["reasoning-gym"]["registered"] == {"env": ["reasoning_gym:NAME"]}
    assert records["reasoning-gym"]["version"] == "0.1.25" and records["reasoning-gym"]["importer"] is True
    assert records["gymnasium"]["registered"] == {"env": ["gym:ID"]}
