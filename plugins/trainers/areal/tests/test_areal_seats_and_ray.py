"""``seat=``/``opponent=`` (issue 20) and ``backend=ray`` (issue 21) for ``agenthub run trainer=areal``.

The workflow plays seat 1 of a real ``tictactoe`` server against the oracle with a stand-in engine that
places its mark in the first free cell; ``backend=ray`` starts the env servers on a one-node Ray started
here (``agenthub.testing.one_node_ray``)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from agenthub import ConfigError, LocalServer, Task
from agenthub.config import validate_config
from agenthub.rollout import EnvPool, RunStore
from agenthub.testing import check_servers_on_one_node_ray
from agenthub.training import ServerUrls
from areal.api.cli_args import GenerationHyperparameters
from areal.api.io_struct import ModelRequest, ModelResponse
from standin_engine import StandInEngine

from agenthub_trainer_areal.config import ArealConfig
from agenthub_trainer_areal.entry import workflow_kwargs
from agenthub_trainer_areal.experiment import hub_section
from agenthub_trainer_areal.trainer import ArealTrainer, run_env_servers
from agenthub_trainer_areal.workflow import HubWorkflow, task_row


class FirstFreeCell(StandInEngine):
    """The stand-in engine, answering a tictactoe board with a mark in its first free cell."""

    async def agenerate(self, req: ModelRequest) -> ModelResponse:
        text = self.tokenizer.decode(req.input_ids)
        board = text[text.rindex("The board:") :].split("Your move")[0].replace("The board:", "")
        cell = re.search(r"[1-9]", board)
        assert cell is not None
        tokens = [
            *self.tokenizer.encode(f"place {cell.group()}", add_special_tokens=False),
            self.tokenizer.eos_token_id,
        ]
        return ModelResponse(
            input_tokens=list(req.input_ids),
            output_tokens=tokens,
            output_logprobs=[-0.1] * len(tokens),
            output_versions=[self.version] * len(tokens),
            stop_reason="stop",
            tokenizer=req.tokenizer,
        )


def test_the_workflow_trains_on_seat_1s_episode_and_reward_against_the_oracle(tokenizer: Any, tmp_path: Path) -> None:
    store = RunStore.create({"test": True}, root=tmp_path, run_id="run")
    store.close()

    async def go() -> dict[str, Any] | None:
        with LocalServer("tictactoe") as server:
            async with EnvPool.from_urls([server.url]) as pool:
                workflow = HubWorkflow(
                    env="tictactoe",
                    tokenizer=tokenizer,
                    gconfig=GenerationHyperparameters(max_new_tokens=8, temperature=1.0),
                    max_context=2048,
                    pool=pool,
                    run_dir=str(store.path),
                    seat=1,
                    opponent="oracle",
                )
                try:
                    return await workflow.arun_episode(
                        FirstFreeCell(tokenizer), task_row(Task(env="tictactoe", task_id=0, split="train"))
                    )
                finally:
                    await workflow.close()

    out = asyncio.run(go())
    assert out is not None
    [trajectory] = RunStore.existing(tmp_path / "run").trajectories()  # seat 1's only
    assert trajectory.seat == 1 and trajectory.seat_result == "loss"
    assert trajectory.provenance["opponent"] == "tictactoe-oracle"
    assert out["rewards"].tolist() == [-1.0] == [trajectory.reward]  # seat 1's return, not the oracle's +1


def test_the_seat_settings_reach_every_rollout_worker(tmp_path: Path) -> None:
    config = ArealConfig(env="tictactoe", seat=1, opponent="random", opponent_kwargs={"seed": 5}, backend="ray")
    hub = hub_section(config, tmp_path, ServerUrls(["http://10.0.0.2:4000"], "tok"))
    assert hub.url == ["http://10.0.0.2:4000"] and hub.token == "tok"  # the servers started for the run
    kwargs = workflow_kwargs(type("C", (), {"tokenizer_path": "t", "gconfig": None})(), hub)
    assert (kwargs["seat"], kwargs["opponent"], kwargs["opponent_kwargs"]) == (1, "random", {"seed": 5})


@pytest.mark.parametrize(
    ("settings", "refusal"),
    [
        ({"env": "tictactoe", "seat": [0, 1]}, "trains on 2 seats of each 'tictactoe' episode, but AReaL takes"),
        ({"env": "trail", "opponent": "random"}, "env 'trail' is single-player; opponent= is for multi-player envs"),
        ({"env": "tictactoe", "seat": 5}, "env 'tictactoe' has seats 0 to 1; seat=5 does not exist"),
    ],
)
def test_seat_settings_that_do_not_fit_are_refused_before_anything_starts(
    settings: dict[str, Any], refusal: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=re.escape(refusal)):
        ArealTrainer().run({**settings, "runs_dir": str(tmp_path)}, dry_run=True)
    assert not list(tmp_path.iterdir())


def test_backend_keys_are_checked_with_the_settings() -> None:
    with pytest.raises(ConfigError, match="backend=ray starts env servers on every Ray node itself"):
        validate_config(ArealConfig, {"backend": "ray", "url": "http://x:1"})
    with pytest.raises(ConfigError, match="add backend=ray to run on it"):
        validate_config(ArealConfig, {"address": "auto"})


def test_backend_ray_places_the_env_servers_on_the_ray_nodes_for_the_run() -> None:
    check_servers_on_one_node_ray(
        lambda: run_env_servers(ArealConfig(env="trail", backend="ray", concurrency=1)), "trail"
    )
    with run_env_servers(ArealConfig(env="trail")) as none:
        assert none is None  # backend=local: each rollout worker starts its own, as before
