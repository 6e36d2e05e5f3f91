"""Play one episode of an agent against a remote environment session."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from agenthub._version import __version__
from agenthub.errors import EnvServerUnavailableError, EnvServiceError
from agenthub.protocols import Agent
from agenthub.service.client import EnvClient
from agenthub.types import PROTOCOL_VERSION, EnvInfo, Observation, Outcome, Task, TaskId, Trajectory, Turn

TurnCallback = Callable[[int, Turn], None]
StartCallback = Callable[[TaskId | None, str], None]


async def play_episode(
    client: EnvClient,
    agent: Agent,
    task: Task,
    *,
    env_info: EnvInfo | None = None,
    on_turn: TurnCallback | None = None,
    on_start: StartCallback | None = None,
) -> Trajectory:
    """Create a session for ``task``, let ``agent`` act until the episode ends or hits
    ``task.max_turns`` (default: the env's), close the session, return the trajectory.

    Environment and agent failures end the episode with ``env_error`` or
    ``agent_error``; they never become observation text.
    """
    info = env_info or await client.info()
    max_turns = task.max_turns or info.default_max_turns
    provenance = {
        "agenthub_version": __version__,
        "protocol": PROTOCOL_VERSION,
        "env": info.name,
        "env_version": info.version,
        "max_turns": max_turns,
    }
    session = await client.create_session(task.task_id, split=task.split, seed=task.seed, options=task.options)
    task = task.model_copy(update={"task_id": session.task_id})
    if on_start is not None:
        on_start(session.task_id, session.observation)
    turns: list[Turn] = []
    observation = Observation(text=session.observation, info=session.info)
    outcome, error = Outcome.TRUNCATED, None
    try:
        episode = agent.start_episode(task, info)
        while len(turns) < max_turns:
            try:
                reply = await episode.act(observation)
            except Exception as exc:  # any agent failure is its outcome, never a crash
                outcome, error = Outcome.AGENT_ERROR, f"the agent failed: {type(exc).__name__}: {exc}"
                break
            try:
                result = await session.step(reply.action)
            except (EnvServiceError, EnvServerUnavailableError) as exc:
                outcome, error = Outcome.ENV_ERROR, str(exc)
                break
            turn = Turn(
                action=reply.action,
                observation=result.observation,
                reward=result.reward,
                terminated=result.terminated,
                truncated=result.truncated,
                info=result.info,
            )
            turns.append(turn)
            if on_turn is not None:
                on_turn(len(turns), turn)
            if result.terminated:
                outcome = Outcome.SUCCESS if _won(turn) else Outcome.FAILURE
                break
            if result.truncated:
                outcome = Outcome.TRUNCATED
                break
            observation = Observation(text=result.observation, info=result.info)
    finally:
        # If the server is gone, its TTL reaper or its restart frees the session.
        with contextlib.suppress(EnvServiceError, EnvServerUnavailableError):
            await session.close()
    return Trajectory(
        task=task,
        first_observation=session.observation,
        turns=turns,
        reward=sum(t.reward for t in turns),
        outcome=outcome,
        error=error,
        provenance=provenance,
    )


def _won(turn: Turn) -> bool:
    won = turn.info.get("won")
    return bool(won) if won is not None else turn.reward > 0
