"""OpenRLHF's agent executor, answered by the hub executor.

OpenRLHF 0.11 calls ``execute(prompt, label, sampling_params, max_length,
hf_tokenizer, llm_engine, images)`` once per sample, ``n_samples_per_prompt``
times per prompt, concurrently on each vLLM actor's event loop. Here a prompt
is a task (its JSON, one row of the prompt data ``agenthub run`` wrote), and
each call plays one episode of it against the env servers through
:class:`~agenthub.rollout.executor.Executor`: sessions, retries of infra
failures on a fresh session, the horizon, the context-length guard. The
policy is :class:`~agenthub.rollout.policy.TokenPolicy` over OpenRLHF's own
vLLM engine (:class:`~agenthub_trainer_openrlhf.engine.EngineGenerate`), so
the tokens OpenRLHF trains on are exactly the ones vLLM sampled, and the
env's turns are rendered with the model's own chat template.

The horizon schedule (ScalingInter-RL) is read at a step this actor counts
from its rollouts, since OpenRLHF passes the executor none
(:mod:`agenthub_trainer_openrlhf.horizon`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import socket
from pathlib import Path
from typing import Any

from agenthub import ConfigError, EnvInfo, Task, Trajectory
from agenthub.rollout import (
    ChatTemplateDeltas,
    EnvPool,
    EpisodeRequest,
    Executor,
    RunStore,
    SamplingParams,
    TokenPolicy,
)
from agenthub.training import Seating, StepOutcomeLog, seating
from openrlhf.utils.agent import AgentExecutorBase
from pydantic import ValidationError

from agenthub_trainer_openrlhf.engine import EngineGenerate
from agenthub_trainer_openrlhf.horizon import RolloutSteps, schedule
from agenthub_trainer_openrlhf.response import openrlhf_response
from agenthub_trainer_openrlhf.settings import AgentSettings

_log = logging.getLogger("agenthub.openrlhf")


def parse_task(prompt: str, env: str) -> Task:
    """The task a prompt row carries; the prompt data must come from ``agenthub run trainer=openrlhf``."""
    try:
        task = Task.model_validate_json(prompt)
    except ValidationError:
        raise ConfigError(
            f"the prompt {prompt[:80]!r} is not an agenthub task; OpenRLHF must read the prompts.jsonl that "
            "`agenthub run trainer=openrlhf` wrote, with --data.input_key input and without --data.apply_chat_template"
        ) from None
    if task.env != env:
        raise ConfigError(f"the prompt is a task of env {task.env!r} but the env servers serve {env!r}")
    return task


def end_of_turn(tokenizer: Any) -> list[int]:
    """The template's end-of-turn token when it is a special token (a plain one, e.g. a newline, would cut turns)."""
    token = ChatTemplateDeltas(tokenizer).assistant_close[0]
    return [token] if token in set(tokenizer.all_special_ids) else []


class HubAgentExecutor(AgentExecutorBase):  # type: ignore[misc]  # OpenRLHF is untyped
    """``AgentExecutorBase`` whose ``execute`` runs one hub-executor episode.

    ``settings`` default to :meth:`AgentSettings.from_environment`, as OpenRLHF
    builds the class with no arguments. The env pool is opened on the first
    call, on the event loop of the actor that calls.
    """

    def __init__(self, settings: AgentSettings | None = None) -> None:
        self.settings = settings or AgentSettings.from_environment()
        self.store = RunStore(Path(self.settings.store)) if self.settings.store else None
        # One vLLM actor's episodes, a rollout's share at a time: a rollout that mostly truncated is said.
        self.step_log = StepOutcomeLog(window=self.settings.episodes_per_step, emit=_log.warning)
        self.horizon = schedule(self.settings.horizon) if self.settings.horizon is not None else None
        self.steps = RolloutSteps(self.settings.episodes_per_step)
        self._pool: EnvPool | None = None
        self._info: EnvInfo | None = None
        self._seating: Seating | None = None
        self._opening: asyncio.Lock | None = None
        self._count = itertools.count()
        # Unique across OpenRLHF's vLLM actors (processes, possibly on several nodes).
        self._key_prefix = f"{socket.gethostname()}-{os.getpid()}"

    async def _connect(self) -> tuple[EnvPool, EnvInfo]:
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None or self._info is None:
                s = self.settings
                pool = EnvPool.from_urls(
                    s.urls, token=s.token, capacity=s.capacity, unhealthy_wait_s=s.unhealthy_wait_s
                )
                pool.start()
                try:
                    info = await pool.info()
                except BaseException:
                    await pool.close()
                    raise
                if info.name != s.env:
                    await pool.close()
                    raise ConfigError(
                        f"the env servers at {', '.join(s.urls)} serve {info.name!r}, not {s.env!r}; "
                        "check url= or env= of `agenthub run trainer=openrlhf`"
                    )
                try:  # who plays which seat: checked at launch, built here (the opponent lives in this actor)
                    self._seating = seating(s, info)
                    self._seating.require_one_trajectory("OpenRLHF")
                except BaseException:
                    await pool.close()
                    raise
                self._pool, self._info = pool, info
            return self._pool, self._info

    async def aclose(self) -> None:
        """Close the env connections (OpenRLHF never does; its actors end with the process)."""
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
        if self.store is not None:
            self.store.close()

    async def run_episode(
        self, task: Task, sampling_params: Any, max_length: int, hf_tokenizer: Any, llm_engine: Any
    ) -> tuple[Trajectory, EngineGenerate]:
        """One episode of ``task`` through ``llm_engine``; the trajectory is also appended to the store."""
        pool, info = await self._connect()
        generate = EngineGenerate(llm_engine, sampling_params, end_of_turn(hf_tokenizer))
        per_turn = self.settings.max_tokens or getattr(sampling_params, "max_tokens", None) or max_length
        policy = TokenPolicy(
            generate,
            hf_tokenizer,
            SamplingParams(
                temperature=float(getattr(sampling_params, "temperature", 1.0)),
                top_p=float(getattr(sampling_params, "top_p", 1.0)),
                max_tokens=int(per_turn),
            ),
            max_context=max_length,  # OpenRLHF cuts every sequence at --data.max_len
            system_prompt=self.settings.system_prompt,
            name="openrlhf",
        )
        seated = self._seating
        assert seated is not None  # set with the pool
        executor = Executor(
            pool,
            policy,
            concurrency=1,
            max_attempts=self.settings.max_attempts,
            episode_timeout_s=self.settings.episode_timeout_s,
            provenance={"trainer": "openrlhf", **self.settings.provenance, **seated.provenance()},
            opponents=seated.opponents,
            seats=seated.seats,
        )
        request = EpisodeRequest(f"{self._key_prefix}/{next(self._count)}", task)
        [trajectory] = await executor.run_episode(request, info)  # a multi-player episode: the trained seat's
        if self.store is not None:
            self.store.write(trajectory)
        self.step_log.add(trajectory)
        return trajectory, generate

    async def execute(
        self,
        prompt: str,
        label: Any,
        sampling_params: Any,
        max_length: int,
        hf_tokenizer: Any,
        llm_engine: Any,
        images: Any = None,
    ) -> dict[str, Any]:
        if images:
            raise ConfigError("agenthub's OpenRLHF agent plays text envs; the prompt data must carry no images")
        task = parse_task(prompt, self.settings.env)
        step = self.steps.next_episode()
        if self.horizon is not None:
            task = task.model_copy(update={"max_turns": self.horizon.max_turns(step)})
        trajectory, generate = await self.run_episode(task, sampling_params, max_length, hf_tokenizer, llm_engine)
        # The final attempt's turns are the last generations made; its last one says if it hit its limit.
        truncated = bool(trajectory.turns) and bool(generate.finish_reasons) and generate.finish_reasons[-1] == "length"
        fallback = hf_tokenizer(text=prompt, add_special_tokens=False)["input_ids"][:max_length]
        return openrlhf_response(
            trajectory,
            prompt=prompt,
            label=label,
            images=images,
            fallback_ids=[int(t) for t in fallback],
            truncated=truncated,
            with_logprobs=generate.wants_logprobs,
        )
