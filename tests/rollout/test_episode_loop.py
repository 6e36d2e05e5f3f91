"""The one episode loop: ``play_episode`` (``agenthub play``) and the executor (``eval``, the
trainers) end every episode the same way, on real env servers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from agenthub import (
    AgentReply,
    EnvClient,
    EnvInfo,
    LocalServer,
    Observation,
    Outcome,
    ServiceSettings,
    Task,
    ThreadedServer,
    Trajectory,
    get_plugin_host,
    play_episode,
)
from agenthub.rollout.episode_loop import not_evaluated, terminal_outcome
from agenthub.rollout.executor import EpisodeRequest, Executor
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.token_assembly import ContextLengthExceeded

pytestmark = pytest.mark.anyio

Play = Callable[[str, Any, Task], Awaitable[Trajectory]]


async def with_play_episode(url: str, agent: Any, task: Task) -> Trajectory:
    async with EnvClient(url) as client:
        return await play_episode(client, agent, task)


async def with_executor(url: str, agent: Any, task: Task) -> Trajectory:
    async with EnvPool.from_urls([url]) as pool:
        return await Executor(pool, agent, max_attempts=1).run_one(EpisodeRequest("0/0", task))


BOTH_PATHS = pytest.mark.parametrize("play", [with_play_episode, with_executor], ids=["play_episode", "executor"])


@pytest.fixture(scope="module")
def guess_url() -> Iterator[str]:
    with LocalServer("guess") as server:
        yield server.url


class SampledGuesses:
    """Guesses 1, 2, ... as a model would: the reply's text, token ids and logprobs, then a full
    context after ``fits`` turns (what :class:`~agenthub.rollout.policy.TokenPolicy` raises)."""

    def __init__(self, fits: int = 2, action_bytes: int = 0) -> None:
        self.fits = fits
        self.action_bytes = action_bytes

    def start_episode(self, task: Task, env: EnvInfo) -> SampledGuesses:
        self.turn = 0
        return self

    async def act(self, observation: Observation) -> AgentReply:
        self.turn += 1
        if self.turn > self.fits:
            raise ContextLengthExceeded("the next turn needs 4097 tokens; the context holds 4096")
        action = f"guess {self.turn}" + " " * self.action_bytes
        return AgentReply(
            action=action, text=f"<think>low first</think>{action}", token_ids=[7, self.turn], logprobs=[-0.5, -0.25]
        )


@BOTH_PATHS
async def test_a_full_context_is_a_truncated_episode_that_keeps_what_was_sampled(guess_url: str, play: Play) -> None:
    # play_episode called this agent_error (not trainable) and dropped the text, ids and logprobs.
    trajectory = await play(guess_url, SampledGuesses(fits=2), Task(env="guess", task_id=500))
    assert trajectory.outcome is Outcome.TRUNCATED and trajectory.trainable and trajectory.error is None
    assert [t.action for t in trajectory.turns] == ["guess 1", "guess 2"]
    assert [t.text for t in trajectory.turns] == ["<think>low first</think>guess 1", "<think>low first</think>guess 2"]
    assert [t.token_ids for t in trajectory.turns] == [[7, 1], [7, 2]]
    assert [t.logprobs for t in trajectory.turns] == [[-0.5, -0.25], [-0.5, -0.25]]


@BOTH_PATHS
async def test_an_action_the_env_refuses_is_the_agents_error(play: Play) -> None:
    # play_episode blamed the env (env_error) for a reply too large for the server to take.
    settings = ServiceSettings(max_body_bytes=1024)
    with ThreadedServer(get_plugin_host().env("guess"), settings) as server:
        trajectory = await play(server.url, SampledGuesses(action_bytes=4096), Task(env="guess", task_id=1))
    assert trajectory.outcome is Outcome.AGENT_ERROR and trajectory.turns == []
    assert trajectory.error is not None and "the env rejected the action" in trajectory.error


@BOTH_PATHS
async def test_a_task_id_the_env_refuses_ends_the_episode_as_env_error(guess_url: str, play: Play) -> None:
    # play_episode raised here, where the executor stores the failure; both now store it.
    trajectory = await play(guess_url, SampledGuesses(), Task(env="guess", task_id="seven"))
    assert trajectory.outcome is Outcome.ENV_ERROR and trajectory.turns == []
    assert trajectory.error is not None and "create session" in trajectory.error


@BOTH_PATHS
async def test_both_paths_record_the_same_provenance(guess_url: str, play: Play) -> None:
    trajectory = await play(guess_url, SampledGuesses(fits=1), Task(env="guess", task_id=3, max_turns=1, seed=4))
    provenance = trajectory.provenance
    assert provenance["env"] == "guess" and provenance["task_id"] == 3 and provenance["seed"] == 4
    assert provenance["max_turns"] == 1 and provenance["endpoint"] == guess_url and provenance["protocol"] == 1
    assert trajectory.duration_s is not None and trajectory.outcome is Outcome.TRUNCATED


@pytest.mark.parametrize(
    ("reward", "info", "outcome"),
    [
        (1.0, {}, Outcome.SUCCESS),
        (0.0, {}, Outcome.FAILURE),
        (-1.0, {}, Outcome.FAILURE),
        (0.0, {"won": True}, Outcome.SUCCESS),  # the env's word wins over the reward
        (1.0, {"won": False}, Outcome.FAILURE),
        (0.5, {"won": None}, Outcome.SUCCESS),  # None is "not said": the reward decides
        (0.0, {"not_evaluated": ["fuzzy_match: no judge"]}, Outcome.ENV_ERROR),  # neither won nor lost
        (1.0, {"not_evaluated": ["no judge"], "won": True}, Outcome.ENV_ERROR),  # unscored wins over all
        (0.0, {"not_evaluated": []}, Outcome.FAILURE),  # nothing left unscored
    ],
)
def test_the_outcome_rule(reward: float, info: dict[str, Any], outcome: Outcome) -> None:
    assert terminal_outcome(reward, info) is outcome


def test_an_unscored_end_says_why() -> None:
    assert not_evaluated({"not_evaluated": ["fuzzy_match: no judge", "program_html: page gone"]}) == (
        "the env could not score this episode: fuzzy_match: no judge; program_html: page gone"
    )
    assert not_evaluated({"not_evaluated": []}) is None and not_evaluated({"won": False}) is None
