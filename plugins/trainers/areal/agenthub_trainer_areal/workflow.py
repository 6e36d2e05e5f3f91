"""``HubWorkflow``: AReaL's ``RolloutWorkflow`` answered by the hub executor.

AReaL calls ``arun_episode(engine, data)`` once per episode (its
``GroupedRolloutWorkflow`` calls it ``gconfig.n_samples`` times for a GRPO
group and concatenates the rows). Here ``data`` is one task of the env (a
row of the dataset the entry script builds); the episode runs on the env's
servers through the hub executor, and every model turn is sampled by AReaL's
own inference engine (:mod:`.generate`), so the tokens AReaL trains on are
exactly the ones it sampled. The answer is :func:`.tensors.episode_tensors`.

Groups stay whole. AReaL normalises rewards in fixed-size groups
(``actor.reward_norm.group_size``) at fixed offsets of the batch, so a group
one member short would shift every later group. An episode that ends in an
infrastructure failure (after the executor's own retries on fresh sessions)
is therefore played again, as a new episode of the same task, up to
``resamples`` times; if it still fails, :class:`GroupDropped` is raised, which
``GroupedRolloutWorkflow``'s ``asyncio.gather`` passes up and AReaL's workflow
executor turns into the rejection of the *whole* group (another task takes its
place in the batch). Without a group (``gconfig.n_samples == 1``) the answer
is None instead, which AReaL rejects the same way.

The turn limit of each episode is the horizon schedule's value at the
engine's weight version, which AReaL advances once per training step
(ScalingInter-RL: ``horizon.kind=stepwise horizon.rounds=[5,10] horizon.every=50``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from agenthub import EnvInfo, HorizonSchedule, Outcome, Task, Trajectory, get_plugin_host
from agenthub.config import MultiPlayerConfig
from agenthub.rollout import (
    ChatTemplateDeltas,
    EnvPool,
    EpisodeRequest,
    Executor,
    FixedHorizon,
    RunStore,
    SamplingParams,
    build_horizon,
)
from agenthub.training import StepOutcomeLog, env_url_list, seating
from areal.api.workflow_api import RolloutWorkflow

from agenthub_trainer_areal.errors import ArealAdapterError
from agenthub_trainer_areal.generate import (
    ArealGenerate,
    ArealTokenPolicy,
    EpisodeGenerations,
    bind_episode,
    unbind_episode,
)
from agenthub_trainer_areal.tensors import episode_tensors

log = logging.getLogger("agenthub.areal")
STEP_LOG = StepOutcomeLog(emit=log.warning)
"""This worker's episodes by weight version (a training step): one that mostly ended truncated or failed is said."""

_TASK_FIELDS = frozenset(Task.model_fields)


def task_row(task: Task) -> dict[str, Any]:
    """A dataset row for ``task``: what ``arun_episode`` receives as ``data``."""
    return task.model_dump(mode="json", exclude_defaults=True)


def task_from_row(data: Mapping[str, Any]) -> Task:
    """The task in a dataset row; keys AReaL may add to a row are ignored."""
    if "env" not in data:
        raise ArealAdapterError(
            f"HubWorkflow got a data row without 'env' (keys: {sorted(data)}); its dataset rows must be tasks, "
            "as agenthub_trainer_areal.entry builds them (task_row(Task(env=..., task_id=..., split=...)))"
        )
    return Task.model_validate({k: v for k, v in data.items() if k in _TASK_FIELDS})


def turn_gconfig(gconfig: Any, tokenizer: Any) -> Any:
    """``gconfig`` that ends a model turn at the tokenizer's eos and pad (as AReaL's own workflows do)
    and at the chat template's end-of-turn token when that is a special token other than eos."""
    gconfig = gconfig.new_with_stop_and_pad_token_ids(tokenizer)
    end_of_turn = ChatTemplateDeltas(tokenizer).assistant_close[0]
    # A plain token (e.g. a newline) would cut turns short; special tokens are the named ones and the added ones.
    added = getattr(tokenizer, "added_tokens_decoder", {})
    special = set(tokenizer.all_special_ids) | {int(i) for i, t in added.items() if getattr(t, "special", False)}
    if end_of_turn in special and end_of_turn not in gconfig.stop_token_ids:
        gconfig = gconfig.new(stop_token_ids=[*gconfig.stop_token_ids, end_of_turn])
    return gconfig


class GroupDropped(ArealAdapterError):
    """An episode of a GRPO group failed every resample: AReaL rejects the whole group, never a part of it."""


class HubWorkflow(RolloutWorkflow):  # type: ignore[misc]  # AReaL is untyped
    """Runs one episode per ``arun_episode`` through the hub executor, sampling with AReaL's engine.

    Env servers: ``url`` (servers already running, e.g. a Kubernetes
    Service), else ``processes`` local servers of ``env`` started on the
    first episode, in the rollout worker's own event loop; or a ready
    ``pool``. ``run_dir``: an agenthub run directory to append every
    trajectory to (dropped ones included, marked with their outcome).
    ``resamples``: new episodes of the same task after an infrastructure
    failure, so that a GRPO group stays whole (see the module docstring).
    """

    def __init__(
        self,
        *,
        env: str,
        tokenizer: Any,
        gconfig: Any,
        max_context: int = 4096,
        horizon: int | Mapping[str, Any] | None = None,
        url: Sequence[str] | str | None = None,
        token: str | None = None,
        processes: int = 1,
        capacity: int = 64,
        max_attempts: int = 3,
        resamples: int = 2,
        episode_timeout_s: float | None = None,
        system_prompt: str | None = None,
        run_dir: str | None = None,
        pool: EnvPool | None = None,
        seat: int | list[int] | None = None,
        opponent: str | None = None,
        opponent_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(tokenizer, str):
            from areal.utils.hf_utils import load_hf_tokenizer

            tokenizer = load_hf_tokenizer(tokenizer)
        self.env = env
        self.tokenizer = tokenizer
        self.gconfig = turn_gconfig(gconfig, tokenizer)
        self.max_context = max_context
        self.horizon_config = horizon
        self.urls = env_url_list(url)
        self.token = token
        self.processes = processes
        self.capacity = capacity
        self.max_attempts = max_attempts
        if resamples < 0:
            raise ArealAdapterError(f"resamples={resamples} is negative; use 0 (no resample) or more")
        self.resamples = resamples
        self.group_size = int(getattr(gconfig, "n_samples", 1))
        self.episode_timeout_s = episode_timeout_s
        self.system_prompt = system_prompt
        self.store = RunStore.existing(run_dir) if run_dir else None
        # who plays a multi-player env's seats: built with the pool, in the rollout worker
        self.players = MultiPlayerConfig(seat=seat, opponent=opponent, opponent_kwargs=dict(opponent_kwargs or {}))
        self.pool = pool
        self._owns_pool = pool is None
        self.policy = ArealTokenPolicy(
            ArealGenerate(tokenizer),
            tokenizer,
            SamplingParams(
                temperature=self.gconfig.temperature, top_p=self.gconfig.top_p, max_tokens=self.gconfig.max_new_tokens
            ),
            max_context=max_context,
            system_prompt=system_prompt,
            name="areal",
        )
        self._executor: Executor | None = None
        self._info: EnvInfo | None = None
        self._horizon: HorizonSchedule | None = None
        self._ready: asyncio.Lock | None = None

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any] | None:
        task = task_from_row(data)
        executor, info, horizon = await self._hub()
        version = int(engine.get_version())
        task = task.model_copy(update={"max_turns": horizon.max_turns(version)})
        for sample in range(self.resamples + 1):
            trajectory, episode = await self._play(executor, info, task, engine, version)
            if trajectory.trainable:
                trace = trajectory.tokens
                versions = episode.token_versions(trace.response_mask) if trace is not None else []
                return episode_tensors(trajectory, versions)
            left = self.resamples - sample
            log.warning(
                "episode %s failed (%s): %s; %s",
                trajectory.key,
                trajectory.outcome.value,
                trajectory.error,
                f"playing the task again ({left} resamples left)" if left else "no resamples left",
            )
        if self.group_size > 1:
            # A shorter group would misalign AReaL's fixed-size group normalisation: drop all of it.
            raise GroupDropped(
                f"task {task.task_id} of env {task.env!r} failed {self.resamples + 1} times in a row "
                f"(last: {trajectory.outcome.value}: {trajectory.error}); AReaL drops its whole group of "
                f"{self.group_size}. If this repeats, check the env servers (url=/processes=) or raise "
                "max_attempts/resamples/episode_timeout_s"
            )
        return None

    async def _play(
        self, executor: Executor, info: EnvInfo, task: Task, engine: Any, version: int
    ) -> tuple[Trajectory, EpisodeGenerations]:
        """One episode of ``task`` (a new request id, so a new server-side generation), stored and counted."""
        episode = EpisodeGenerations(engine=engine, gconfig=self.gconfig)
        bound = bind_episode(episode)
        try:
            # one trajectory: the episode's, or on a multi-player env the trained seat's
            [trajectory] = await executor.run_episode(
                EpisodeRequest(f"v{version}/{task.task_id}/{episode.rid}", task), info
            )
        finally:
            unbind_episode(bound)
        if self.store is not None:
            self.store.write(trajectory)
        self._record_stats(trajectory)
        STEP_LOG.add(trajectory, step=version + 1)
        return trajectory, episode

    async def close(self) -> None:
        """Close the run's trajectory file and stop the env servers this workflow started.

        AReaL has no teardown hook for workflows: in a training run the rollout
        worker's exit does this (local env servers die with their parent).
        """
        if self.store is not None:
            self.store.close()
        if self.pool is not None and self._owns_pool:
            await self.pool.close()

    # -- the hub, made once per rollout worker, in its event loop ----------------------

    async def _hub(self) -> tuple[Executor, EnvInfo, HorizonSchedule]:
        if self._ready is None:
            self._ready = asyncio.Lock()
        async with self._ready:
            if self._executor is None:
                pool = self.pool or await self._open_pool()
                self.pool = pool
                pool.start()
                self._info = await pool.info()
                self._horizon = self._build_horizon(self._info)
                seated = seating(self.players, self._info)
                seated.require_one_trajectory("AReaL")  # its GRPO groups take one trajectory per episode
                self._executor = Executor(
                    pool,
                    self.policy,
                    max_attempts=self.max_attempts,
                    episode_timeout_s=self.episode_timeout_s,
                    provenance={"trainer": "areal", **seated.provenance()},
                    opponents=seated.opponents,
                    seats=seated.seats,
                )
        assert self._info is not None and self._horizon is not None
        return self._executor, self._info, self._horizon

    async def _open_pool(self) -> EnvPool:
        if self.urls:
            return EnvPool.from_urls(self.urls, token=self.token, capacity=self.capacity)
        overrides = {"token": self.token} if self.token else None
        return await EnvPool.launch(self.env, processes=self.processes, capacity=self.capacity, overrides=overrides)

    def _build_horizon(self, info: EnvInfo) -> HorizonSchedule:
        if self.horizon_config is None:
            return FixedHorizon(turns=info.default_max_turns)
        spec = self.horizon_config if isinstance(self.horizon_config, int) else dict(self.horizon_config)
        return build_horizon(spec, get_plugin_host().horizon)

    def _record_stats(self, trajectory: Trajectory) -> None:
        """Per-episode scalars in AReaL's stats tracker (logged with its rollout stats)."""
        from areal.infra import workflow_context
        from areal.utils import stats_tracker

        stats = stats_tracker.get(workflow_context.stat_scope())
        if trajectory.trainable:
            stats.scalar(
                reward=trajectory.reward,
                success=float(trajectory.outcome is Outcome.SUCCESS),
                turns=len(trajectory.turns),
                max_turns=trajectory.task.max_turns or 0,
            )
        else:
            stats.scalar(infra_failure=1.0)
