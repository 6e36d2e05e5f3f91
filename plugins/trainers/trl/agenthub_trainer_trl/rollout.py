"""TRL's ``rollout_func``, answered by the hub executor.

``GRPOTrainer`` hands the rollout function its slice of prompts, each repeated
``num_generations`` times in a row (one GRPO group). Here a prompt is a task
(its JSON); each one becomes one episode, played by the model being trained
through :class:`~agenthub.rollout.policy.TokenPolicy`, so the tokens TRL trains
on are exactly the ones sampled. The answer is, per episode:

* ``prompt_ids``: system prompt and first observation, in the model's chat template;
* ``completion_ids``: every model turn as sampled, with the env's answers between them;
* ``env_mask``: 1 on sampled tokens, 0 on env and template tokens (TRL leaves 0s out of the loss);
* ``logprobs``: the sampling logprobs, aligned with ``completion_ids``;
* ``env_reward``, ``success``, ``turns``, ``max_turns`` (and ``kl_start``, see :mod:`.kl`): forwarded to
  the reward function, which logs them.

On a multi-player env each episode is played by the model on its seat (and, in self-play, on the
others) and by the opponent on the rest; the answer holds the trained seat's trajectory of each
episode (:func:`agenthub.training.seating`), and only that seat's trajectories are stored.

Episodes that failed for infrastructure reasons get reward None (TRL gives
them no advantage) and an all-zero mask: they are never trained on. Every
trajectory is also written to the run's store.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthub import Agent, HorizonSchedule, Outcome, Task, Trajectory
from agenthub.rollout import EnvPool, EpisodeRequest, Executor, GenerateFn, RunStore, SamplingParams, TokenPolicy
from agenthub.training import StepWarnings

from agenthub_trainer_trl.kl import StartKL


def task_prompt(task: Task) -> str:
    """The dataset's prompt for ``task``: the task itself, which the rollout turns into an episode."""
    return task.model_dump_json(exclude_defaults=True)


@dataclass
class StepStats:
    """What one rollout did, for logs and metrics."""

    step: int
    max_turns: int
    outcomes: dict[str, int] = field(default_factory=dict)
    success_rate: float | None = None
    mean_turns: float | None = None
    mean_reward: float | None = None


def rollout_batch(trajectories: Sequence[Trajectory], *, pad_token_id: int) -> dict[str, list[Any]]:
    """TRL's rollout answer for ``trajectories`` (in prompt order)."""
    batch: dict[str, list[Any]] = {
        key: []
        for key in (
            "prompt_ids",
            "completion_ids",
            "logprobs",
            "env_mask",
            "env_reward",
            "success",
            "turns",
            "max_turns",
        )
    }
    for trajectory in trajectories:
        trace = trajectory.tokens
        usable = trajectory.trainable and trace is not None and bool(trace.response_ids)
        if trace is not None and trace.response_ids:
            prompt, completion, logprobs = trace.prompt_ids, trace.response_ids, trace.logprobs
            mask = trace.response_mask if usable else [0] * len(completion)
        else:  # no model turn at all (e.g. the env failed at reset): one masked pad token, never trained
            prompt = trace.prompt_ids if trace is not None and trace.prompt_ids else [pad_token_id]
            completion, logprobs, mask = [pad_token_id], [0.0], [0]
        batch["prompt_ids"].append(list(prompt))
        batch["completion_ids"].append(list(completion))
        batch["logprobs"].append(list(logprobs))
        batch["env_mask"].append(list(mask))
        batch["env_reward"].append(trajectory.reward if usable else None)
        batch["success"].append(float(trajectory.outcome is Outcome.SUCCESS) if usable else None)
        batch["turns"].append(len(trajectory.turns))
        batch["max_turns"].append(trajectory.task.max_turns)
    return batch


def request_key(trajectory: Trajectory) -> str:
    """The key of the request that played ``trajectory``: a seat's trajectory adds ``/seat<N>`` to it."""
    key = trajectory.key or ""
    suffix = f"/seat{trajectory.seat}"
    return key[: -len(suffix)] if trajectory.seat is not None and key.endswith(suffix) else key


def step_stats(step: int, max_turns: int, trajectories: Sequence[Trajectory]) -> StepStats:
    stats = StepStats(step=step, max_turns=max_turns)
    for t in trajectories:
        stats.outcomes[t.outcome.value] = stats.outcomes.get(t.outcome.value, 0) + 1
    trainable = [t for t in trajectories if t.trainable]
    if trainable:
        stats.success_rate = sum(t.outcome is Outcome.SUCCESS for t in trainable) / len(trainable)
        stats.mean_turns = statistics.fmean(len(t.turns) for t in trainable)
        stats.mean_reward = statistics.fmean(t.reward for t in trainable)
    return stats


@dataclass(kw_only=True, eq=False)
class HubRollout:
    """The ``rollout_func`` passed to ``GRPOTrainer``: one hub-executor episode per prompt.

    ``make_generate(trainer)`` builds the token-in/token-out function over the
    trainer's model on the first call (the trainer does not exist before).
    The event loop lives in ``runner`` for the whole run, so env connections
    and servers are reused from step to step. ``opponents`` and ``seats`` (multi-player
    envs): as :class:`Executor` takes them, one seat kept.
    """

    runner: asyncio.Runner
    pool: EnvPool
    tokenizer: Any
    make_generate: Callable[[Any], GenerateFn]
    horizon: HorizonSchedule
    sampling: SamplingParams
    max_context: int
    system_prompt: str | None
    store: RunStore | None
    concurrency: int = 64
    max_attempts: int = 3
    episode_timeout_s: float | None = None
    key_suffix: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)
    start_kl: StartKL | None = None
    opponents: Mapping[int, Agent] = field(default_factory=dict)
    seats: Container[int] | None = None
    executor: Executor | None = field(default=None, init=False)
    history: list[StepStats] = field(default_factory=list, init=False)
    # a random model starts out mostly truncated on trail and grows out of it: said only once it persists
    warnings: StepWarnings = field(default_factory=lambda: StepWarnings(patience=5), init=False)
    pad_token_id: int = field(init=False)
    _calls: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        tokenizer = self.tokenizer
        self.pad_token_id = int(
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        )

    def executor_for(self, trainer: Any) -> Executor:
        """The executor that plays this run's episodes with ``trainer``'s model (built on first use)."""
        if self.executor is None:
            policy = TokenPolicy(
                self.make_generate(trainer),
                self.tokenizer,
                self.sampling,
                max_context=self.max_context,
                system_prompt=self.system_prompt,
                name="trl",
            )
            self.executor = Executor(
                self.pool,
                policy,
                concurrency=self.concurrency,
                max_attempts=self.max_attempts,
                episode_timeout_s=self.episode_timeout_s,
                provenance=self.provenance,
                opponents=self.opponents,
                seats=self.seats,
            )
        return self.executor

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        step = int(trainer.state.global_step)
        max_turns = self.horizon.max_turns(step)
        executor = self.executor_for(trainer)
        self._calls += 1
        requests = []
        for i, prompt in enumerate(prompts):
            task = Task.model_validate_json(prompt).model_copy(update={"max_turns": max_turns})
            requests.append(EpisodeRequest(f"{step}/{self._calls}/{i}{self.key_suffix}", task))
        finished = self.runner.run(self._collect(executor, requests))
        # one trajectory per request: a multi-player episode's kept seat is keyed "<request key>/seat<N>"
        by_key = {request_key(t): t for t in finished}
        if len(by_key) != len(finished):
            raise RuntimeError("more than one trajectory per episode reached the rollout; train one seat (seat=N)")
        ordered = [by_key[r.key] for r in requests]
        # TRL's global_step counts finished optimizer steps; this batch trains step + 1, the number the
        # live line and the summary show for it.
        self.history.append(step_stats(step + 1, max_turns, ordered))
        if warning := self.warnings.check(step + 1, ordered):
            print(warning, file=sys.stderr, flush=True)
        batch = rollout_batch(ordered, pad_token_id=self.pad_token_id)
        if self.start_kl is not None:
            traces = [t.tokens if t.trainable else None for t in ordered]
            batch["kl_start"] = self.start_kl.per_episode(traces)
        return batch

    async def _collect(self, executor: Executor, requests: list[EpisodeRequest]) -> list[Trajectory]:
        done: list[Trajectory] = []
        async for trajectory in executor.stream(requests):
            if self.store is not None:
                self.store.write(trajectory)
            done.append(trajectory)
        return done
