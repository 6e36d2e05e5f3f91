"""``seat=``/``opponent=`` (issue 20) and ``backend=ray`` (issue 21) for ``agenthub run trainer=swift``.

Server mode's scheduler plays seat 1 of a real ``tictactoe`` server against the oracle with a stand-in engine
that places its mark in the first free cell; ``backend=ray`` starts the env servers on a one-node Ray started
here (``agenthub.testing.one_node_ray``)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from agenthub import ConfigError, LocalServer, Task
from agenthub.config import validate_config
from agenthub.rollout import RunStore
from agenthub.testing import one_node_ray, ray_cpus_back
from engines import StandInEngine
from swift.infer_engine.protocol import RequestConfig, RolloutInferRequest

from agenthub_trainer_swift import trainer as trainer_module
from agenthub_trainer_swift.config import SwiftConfig
from agenthub_trainer_swift.launch import LaunchPlan
from agenthub_trainer_swift.scheduler import TASK_COLUMN, AgenthubScheduler
from agenthub_trainer_swift.settings import SchedulerSettings
from agenthub_trainer_swift.trainer import SwiftTrainer, check_seats


class FirstFreeCell(StandInEngine):
    """The stand-in engine, answering a tictactoe board with a mark in its first free cell."""

    def sample(self, context: list[int], max_tokens: int) -> tuple[list[int], list[float]]:
        text = self.tokenizer.decode(context, skip_special_tokens=True)
        board = text[text.rindex("The board:") :].split("Your move")[0].replace("The board:", "")
        cell = re.search(r"[1-9]", board)
        assert cell is not None
        ids = [*self.tokenizer.encode(f"place {cell.group()}", add_special_tokens=False), self.end]
        return ids, [-0.1] * len(ids)


def test_server_mode_trains_on_seat_1s_episode_and_reward_against_the_oracle(tokenizer: Any, tmp_path: Path) -> None:
    # the scheduler reads seat= and opponent= from the run's config in its store, as `agenthub run` writes it
    store = RunStore.create({"seat": 1, "opponent": "oracle"}, root=tmp_path, run_id="run")
    task = Task(env="tictactoe", task_id=0, split="train")
    request = RolloutInferRequest(
        messages=[{"role": "user", "content": "tictactoe"}], data_dict={TASK_COLUMN: task.model_dump_json()}, uuid="e0"
    )
    with LocalServer("tictactoe") as server:
        settings = SchedulerSettings(
            env="tictactoe", urls=[server.url], max_tokens=8, max_context=2048, store=str(store.path)
        )
        sched = AgenthubScheduler(infer_engine=FirstFreeCell(tokenizer), tokenizer=tokenizer, settings=settings)
        output = asyncio.run(sched.run(request, RequestConfig(temperature=1.0, max_tokens=8)))
    store.close()
    [trajectory] = RunStore.existing(store.path).trajectories()  # seat 1's only
    assert trajectory.seat == 1 and trajectory.seat_result == "loss" and trajectory.reward == -1.0
    assert trajectory.provenance["opponent"] == "tictactoe-oracle"
    assert output.rollout_infos["agenthub_reward"] == -1.0  # seat 1's return, not the oracle's +1


@pytest.mark.parametrize(
    ("settings", "refusal"),
    [
        ({"env": "tictactoe", "mode": "server", "seat": [0, 1]}, "trains on 2 seats of each 'tictactoe' episode"),
        ({"env": "tictactoe"}, "mode=colocate steps each episode's env session one model turn at a time"),
        ({"env": "trail", "mode": "server", "opponent": "random"}, "env 'trail' is single-player"),
    ],
)
def test_seat_settings_that_do_not_fit_are_refused_before_a_run(settings: dict[str, Any], refusal: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(refusal)):
        check_seats(SwiftConfig(**settings))


def test_config_keys_that_do_not_go_together_are_refused() -> None:
    with pytest.raises(ConfigError, match="seat= and opponent= need mode=server"):
        validate_config(SwiftConfig, {"env": "tictactoe", "seat": 1})
    with pytest.raises(ConfigError, match="backend=ray starts env servers on every Ray node itself"):
        validate_config(SwiftConfig, {"backend": "ray", "url": "http://x:1"})
    with pytest.raises(ConfigError, match="add backend=ray to run on it"):
        validate_config(SwiftConfig, {"address": "auto"})


def test_backend_ray_runs_on_env_servers_that_ray_placed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[list[str], str | None, int]] = []

    def execute(plan: LaunchPlan, config: SwiftConfig) -> int:  # instead of swift: ask the servers swift would
        [url] = plan.settings.urls
        headers = {"Authorization": f"Bearer {plan.settings.token}"}
        status = httpx.get(f"{url}/v1/info", headers=headers).status_code
        seen.append((plan.settings.urls, plan.settings.token, status))
        return 0

    monkeypatch.setattr(trainer_module, "execute", execute)
    with one_node_ray() as ray:
        node_ip = ray.util.get_node_ip_address()
        config = {"backend": "ray", "steps": 1, "runs_dir": str(tmp_path), "run_id": "r"}
        assert SwiftTrainer().run(config) == 0
        released = ray_cpus_back(ray)
    [(urls, token, status)] = seen
    assert urls[0].startswith(f"http://{node_ip}:") and token and status == 200  # the node's server, its token
    assert released == 1.0  # stopped when the run ended
    assert RunStore.existing(tmp_path / "r").config()["backend"] == "ray"
