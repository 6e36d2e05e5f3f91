"""``seat=``/``opponent=`` (issue 20) and ``backend=ray`` (issue 21) for ``agenthub run trainer=openrlhf``.

The agent plays seat 1 of the real ``tictactoe`` server against the oracle, through the stand-in engine;
``backend=ray`` starts the env servers on a one-node Ray started here (``agenthub.testing.one_node_ray``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from agenthub import ConfigError, LocalServer
from agenthub.config import validate_config
from agenthub.rollout import RunStore
from agenthub.testing import one_node_ray, ray_cpus_back
from agenthub.testing import run_cli as main

from agenthub_trainer_openrlhf.agent import HubAgentExecutor
from agenthub_trainer_openrlhf.config import OpenRlhfConfig
from agenthub_trainer_openrlhf.launch import build_launch, prompt_rows
from agenthub_trainer_openrlhf.settings import AgentSettings
from agenthub_trainer_openrlhf.trainer import launch, seats_of


def sampling_params() -> Any:
    from vllm import SamplingParams

    return SamplingParams(temperature=1.0, top_p=1.0, max_tokens=8, skip_special_tokens=False, logprobs=None)


def test_the_agent_plays_the_trained_seat_against_the_opponent_and_answers_its_reward(
    tmp_path: Path, tokenizer: Any, engine_class: Any
) -> None:
    with LocalServer("tictactoe") as server:
        settings = AgentSettings(
            env="tictactoe", urls=[server.url], store=str(tmp_path), seat=1, opponent="oracle", max_tokens=4
        )
        agent = HubAgentExecutor(settings)
        prompts = [row["input"] for row in prompt_rows("tictactoe", "train", [0, 1, 2], None)]

        async def play() -> list[dict[str, Any]]:
            try:
                engine = engine_class(tokenizer, seed=1)
                return [await agent.execute(p, "", sampling_params(), 600, tokenizer, engine) for p in prompts]
            finally:
                await agent.aclose()

        responses = asyncio.run(play())
    episodes = list(RunStore(tmp_path).trajectories())
    assert len(responses) == len(episodes) == 3  # one response and one stored trajectory per prompt: seat 1's
    assert {t.seat for t in episodes} == {1} and all(t.key and t.key.endswith("/seat1") for t in episodes)
    assert {t.provenance["opponent"] for t in episodes} == {"tictactoe-oracle"}
    for response, episode in zip(responses, episodes, strict=True):
        assert response["reward"] == episode.reward == float(episode.provenance["seat_returns"]["1"])


@pytest.mark.parametrize(
    ("settings", "refusal"),
    [
        ({"env": "tictactoe", "seat": [0, 1]}, "trains on 2 seats of each 'tictactoe' episode, but OpenRLHF takes"),
        ({"env": "trail", "opponent": "random"}, "env 'trail' is single-player; opponent= is for multi-player envs"),
        ({"env": "tictactoe", "opponent": "orcale"}, "did you mean 'oracle'?"),
    ],
)
def test_seat_settings_that_do_not_fit_are_refused_before_a_run(settings: dict[str, Any], refusal: str) -> None:
    with pytest.raises(ConfigError, match=refusal):
        seats_of(OpenRlhfConfig(model="m", **settings))


def test_the_seat_settings_reach_every_vllm_actor() -> None:
    config = OpenRlhfConfig(env="tictactoe", model="m", seat=1, opponent="random", opponent_kwargs={"seed": 2})
    plan = build_launch(config, Path("/run"), urls=["http://n:1"], task_ids=[0], run_id="r", token="tok")
    assert (plan.settings.seat, plan.settings.opponent, plan.settings.opponent_kwargs) == (1, "random", {"seed": 2})
    assert plan.settings.token == "tok"  # the servers' own token (backend=ray makes one)
    assert seats_of(config).seats == frozenset({1})


def test_backend_keys_are_checked_with_the_settings() -> None:
    assert OpenRlhfConfig(env="trail", model="m", backend="ray", ray_address="http://head:8265").backend == "ray"
    with pytest.raises(ConfigError, match="backend=ray starts env servers on every Ray node itself"):
        validate_config(OpenRlhfConfig, {"env": "trail", "backend": "ray", "url": "http://x:1"})
    with pytest.raises(ConfigError, match="add backend=ray to run on it"):
        validate_config(OpenRlhfConfig, {"env": "trail", "address": "auto"})


def test_a_cluster_run_without_url_is_pointed_to_backend_ray(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--dry-run", "trainer=openrlhf", "env=trail", "model=m", "ray_address=http://head:8265"])
    assert "add backend=ray [address=...] to start them on the cluster's nodes" in capsys.readouterr().err


def test_backend_ray_starts_the_env_servers_on_the_ray_nodes_and_stops_them(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with one_node_ray() as ray:
        config = OpenRlhfConfig(env="trail", model="m", tasks=2, runs_dir=str(tmp_path), run_id="r", backend="ray")
        code = launch(config)  # OpenRLHF really starts; on this CPU machine it stops at importing vLLM
        released = ray_cpus_back(ray)
        node_ip = ray.util.get_node_ip_address()
    assert code != 0 and "No module named 'vllm'" in capfd.readouterr().err
    settings = AgentSettings.model_validate_json((tmp_path / "r" / "agent.json").read_text())
    [url] = settings.urls
    assert settings.token  # servers that listen on the node's address answer to a token of the run's
    assert url.startswith(f"http://{node_ip}:")  # the Ray node's address, which the cluster reaches
    assert released == 1.0  # the servers' actor is gone: its CPU is back with Ray
    with pytest.raises(httpx.TransportError):
        httpx.get(url + "/healthz", timeout=2)
    assert json.loads((tmp_path / "r" / "run.json").read_text())["status"] == "failed"
    assert RunStore.existing(tmp_path / "r").config()["backend"] == "ray"
