"""``agenthub play env=NAME [agent=NAME task_id=... url=...]``: one episode, printed turn by turn."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenthub.config import build_config
from agenthub.plugins import get_plugin_host
from agenthub.rollout.episode_loop import play_episode
from agenthub.service.client import EnvClient
from agenthub.service.launcher import LocalServer
from agenthub.types import Task, TaskId, Turn


class PlayConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str = "guess"
    agent: str | None = Field(default=None, description="default (or 'oracle'): the env's oracle")
    agent_kwargs: dict[str, Any] = Field(default_factory=dict)
    task_id: TaskId | None = None
    split: str | None = None
    seed: int | None = None
    max_turns: int | None = Field(default=None, ge=1)
    url: str | None = Field(default=None, description="an already running server; default: start one")
    token: str | None = None


def run(args: argparse.Namespace) -> int:
    config = build_config(PlayConfig, args.overrides, config_file=args.config)
    host = get_plugin_host()
    spec = host.env(config.env)
    agent_spec = host.agent_for(spec, config.agent)
    agent_name = agent_spec.name
    agent = agent_spec.make(**config.agent_kwargs)
    task = Task(env=spec.name, task_id=config.task_id, split=config.split, seed=config.seed, max_turns=config.max_turns)
    with contextlib.ExitStack() as stack:
        url = config.url
        if url is None:
            server = stack.enter_context(
                LocalServer(spec.name, overrides={"token": config.token} if config.token else None)
            )
            url = server.url
        print(f"env {spec.name!r} at {url}, agent {agent_name!r}")
        trajectory = asyncio.run(_play(url, config.token, agent, task))
    print(f"\noutcome: {trajectory.outcome.value}   reward: {trajectory.reward:g}   turns: {len(trajectory.turns)}")
    if trajectory.error:
        print(f"error: {trajectory.error}")
    return 1 if trajectory.outcome.is_infra_failure else 0


async def _play(url: str, token: str | None, agent: Any, task: Task) -> Any:
    def show(number: int, turn: Turn) -> None:
        print(f"[{number}] > {turn.action}\n    {turn.observation}")

    async with EnvClient(url, token=token) as client:
        return await play_episode(client, agent, task, on_turn=show, on_start=_show_start)


def _show_start(task_id: TaskId | None, observation: str) -> None:
    print(f"task {task_id}\n    {observation}")
