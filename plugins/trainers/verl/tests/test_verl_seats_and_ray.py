"""``seat=``/``opponent=`` (issue 20) and ``backend=ray`` (issue 21) for ``agenthub run trainer=verl``.

A multi-player episode runs through verl's real ``AgentLoopWorker`` as in test_verl_agent_loop.py, with a
stand-in engine that places its mark in the first free cell; ``backend=ray`` starts the env servers on a
one-node Ray started here (``agenthub.testing.one_node_ray``)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml
from agenthub import ConfigError, LocalServer
from agenthub.config import validate_config
from agenthub.testing import check_servers_on_one_node_ray
from verl.experimental.agent_loop.agent_loop import get_trajectory_info

from agenthub_trainer_verl.config import VerlConfig
from agenthub_trainer_verl.launch import plan
from agenthub_trainer_verl.loop_settings import LoopSettings
from agenthub_trainer_verl.pools import close_pools
from agenthub_trainer_verl.trainer import run_env_servers, task_rows_for

from .conftest import EngineDouble, small_run, worker_for

SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}


class FirstFreeCell(EngineDouble):
    """Stand-in engine: reads the last board in the prompt and places its mark in the first free cell."""

    def __init__(self, tokenizer: Any) -> None:
        super().__init__()
        self.tokenizer = tokenizer

    def answer(self, prompt_ids: list[int], params: dict[str, Any]) -> dict[str, Any]:
        text = self.tokenizer.decode(prompt_ids)
        board = text[text.rindex("The board:") :].split("Your move")[0].replace("The board:", "")
        cell = re.search(r"[1-9]", board)
        assert cell is not None
        end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        ids = [*self.tokenizer.encode(f"place {cell.group()}", add_special_tokens=False), end]
        return {"token_ids": ids, "logprobs": [-0.1] * len(ids)}


def test_seat_1_against_the_oracle_is_trained_on_seat_1s_episode_and_reward(
    tmp_path: Path, tiny_model: Path, tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agenthub_trainer_verl.pools as worker_shared

    built: list[Any] = []

    def counted_seating(*args: Any, **kwargs: Any) -> Any:  # the real one, its builds counted
        built.append(real_seating(*args, **kwargs))
        return built[-1]

    real_seating = worker_shared.seating
    monkeypatch.setattr(worker_shared, "seating", counted_seating)
    monkeypatch.setattr(worker_shared, "_seatings", {})
    with LocalServer("tictactoe") as server:
        launch = small_run(
            tmp_path,
            tiny_model,
            server.url,
            env="tictactoe",
            seat=1,
            opponent="oracle",
            max_tasks=2,
            run_id="ttt",
            prompt_length=512,
            response_length=1024,
        )
        [entry] = yaml.safe_load(launch.loop_file.read_text())
        assert (entry["seat"], entry["opponent"]) == (1, "oracle")  # what every agent-loop worker reads
        engine = FirstFreeCell(tokenizer)
        worker, dataset = worker_for(launch, engine)
        row = {k: v for k, v in dataset[0].items() if not isinstance(v, torch.Tensor)}

        async def samples() -> list[Any]:
            trajectories = await get_trajectory_info(-1, [0, 1], False)
            try:  # two samples on one worker, as verl runs a step's samples
                return [
                    await worker._run_agent_loop(dict(SAMPLING), trajectory, trace=False, **row)
                    for trajectory in trajectories
                ]
            finally:
                await close_pools()

        outputs = asyncio.run(samples())
    # O moving into the first free cell loses to the oracle's X: seat 1's return, not seat 0's +1
    assert [output.reward_score for output in outputs] == pytest.approx([-1.0, -1.0])
    assert all(output.extra_fields["agenthub_outcome"] == "failure" for output in outputs)
    assert len(engine.calls) >= 4  # seat 1's moves; the oracle's are not the engine's
    assert len(built) == 1 and built[0].opponent == "tictactoe-oracle"  # the worker's first episode built the opponent


@pytest.mark.parametrize(
    ("settings", "refusal"),
    [
        ({"env": "tictactoe", "seat": [0, 1]}, "trains on 2 seats of each 'tictactoe' episode, but verl takes"),
        ({"env": "trail", "seat": 1}, "env 'trail' is single-player; seat= is for multi-player envs"),
        ({"env": "tictactoe", "seat": 1, "opponent": "randomm"}, "did you mean 'random'?"),
    ],
)
def test_seat_settings_that_do_not_fit_are_refused_before_anything_is_written(
    settings: dict[str, Any], refusal: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(refusal)):
        task_rows_for(VerlConfig(**settings))


def test_loop_settings_carry_the_seats_and_the_servers_started_for_the_run() -> None:
    from agenthub.training import ServerUrls

    config = VerlConfig(env="tictactoe", seat=1, opponent="random", opponent_kwargs={"seed": 3}, backend="ray")
    launch = plan(config, Path("/run"), ServerUrls(["http://10.0.0.2:4000"], "tok"))
    [entry] = launch.agent_loop
    settings = LoopSettings.from_kwargs({k: v for k, v in entry.items() if k not in ("name", "_target_")})
    assert settings.urls == ["http://10.0.0.2:4000"] and settings.token == "tok"
    assert (settings.seat, settings.opponent, settings.opponent_kwargs) == (1, "random", {"seed": 3})


def test_backend_keys_are_checked_with_the_settings() -> None:
    with pytest.raises(ConfigError, match="backend=ray starts env servers on every Ray node itself"):
        validate_config(VerlConfig, {"env": "trail", "backend": "ray", "url": "http://x:1"})
    with pytest.raises(ConfigError, match="add backend=ray to run on it"):
        validate_config(VerlConfig, {"env": "trail", "address": "auto"})


def test_backend_ray_places_the_env_servers_on_the_ray_nodes_for_the_run() -> None:
    check_servers_on_one_node_ray(lambda: run_env_servers(VerlConfig(env="trail", backend="ray", capacity=4)), "trail")
    with run_env_servers(VerlConfig(env="trail")) as none:
        assert none is None  # backend=local: each agent-loop worker starts its own, as before
