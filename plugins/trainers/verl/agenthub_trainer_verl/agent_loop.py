"""``AgenthubAgentLoop``: verl's agent loop, played by the hub executor.

verl (``AgentLoopWorker``) builds one loop per sample from the YAML entry
that ``actor_rollout_ref.rollout.agent.agent_loop_config_path`` names, and
awaits ``run(sampling_params, **row)``. Here that runs one env episode:

1. the task comes from the dataset row (``extra_info.agenthub_task``), its turn
   limit from the horizon schedule at verl's ``global_steps`` (ScalingInter-RL;
   see :func:`training_step` for where each verl trainer puts it);
2. the model is verl's own inference engine, through ``server_manager.generate``
   with one request id for the whole episode (:mod:`.engine`), wrapped as a
   :class:`~agenthub.rollout.policy.TokenPolicy` with the model's tokenizer, so
   sampled tokens are never decoded and re-encoded;
3. the hub executor plays it against the env servers (retrying infra failures
   on a fresh session), and the trajectory becomes an ``AgentLoopOutput``
   (:mod:`.output`); infra failures are masked out, never trained on.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from types import FrameType
from typing import Any
from uuid import uuid4

from agenthub import (
    EnvInfo,
    EnvServerUnavailableError,
    EnvServiceError,
    HorizonSchedule,
    Outcome,
    ServerStartError,
    Task,
    Trajectory,
    get_plugin_host,
)
from agenthub.rollout import EpisodeRequest, Executor, FixedHorizon, SamplingParams, TokenPolicy, build_horizon
from agenthub.training import StepOutcomeLog
from verl.experimental.agent_loop import AgentLoopBase, AgentLoopOutput

from agenthub_trainer_verl.engine import VerlGenerate
from agenthub_trainer_verl.loop_settings import LoopSettings
from agenthub_trainer_verl.output import Limits, to_agent_loop_output
from agenthub_trainer_verl.pools import shared_pool, shared_seating
from agenthub_trainer_verl.rows import task_of_row

log = logging.getLogger("agenthub.verl")
STEP_LOG = StepOutcomeLog(max_context_key="response_length", emit=log.warning)
"""This worker's episodes by verl step: a step that mostly ended truncated or failed is said in the log."""

# What AgentLoopWorker always passes to the constructor; everything else comes from the YAML entry.
_VERL_ARGS = ("trainer_config", "server_manager", "tokenizer", "processor", "dataset_cls", "data_config")
_VERL_KWARGS = ("hf_model_type", "tools")
_ENTRY_KEYS = ("name",)  # the YAML entry's own name arrives as a keyword argument too


class InfraFailureError(RuntimeError):
    """With ``on_infra_failure: raise``: the episode failed for infrastructure reasons."""


class AgenthubAgentLoop(AgentLoopBase):  # type: ignore[misc]  # verl is untyped
    """One env episode per verl sample; settings are the YAML entry's keys (see :class:`LoopSettings`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        verl_kwargs = {k: kwargs.pop(k) for k in (*_VERL_ARGS, *_VERL_KWARGS) if k in kwargs}
        for key in _ENTRY_KEYS:
            kwargs.pop(key, None)
        self.settings = LoopSettings.from_kwargs(kwargs)
        super().__init__(*args, **verl_kwargs)
        self.limits = Limits(
            prompt_length=int(self.rollout_config.prompt_length),
            response_length=int(self.rollout_config.response_length),
            pad_token_id=_pad_id(self.tokenizer),
        )

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        settings = self.settings
        step = training_step(kwargs)
        task = task_of_row(kwargs)
        try:
            pool = await shared_pool(settings)
            info = await pool.info()
        except (EnvServiceError, EnvServerUnavailableError, ServerStartError) as exc:
            # No server answers at all (a worker's first episode): an infra failure like any other.
            return self._finish(unreachable(task, exc), VerlGenerate(self.server_manager, sampling_params), kwargs)
        if info.name != settings.env:
            raise ValueError(
                f"the env servers serve {info.name!r}, but the agent loop is set to env {settings.env!r}; "
                "fix `env` or `urls` in the agent-loop YAML"
            )
        task = task.model_copy(update={"max_turns": horizon(settings, info).max_turns(step)})
        generate = VerlGenerate(self.server_manager, sampling_params, request_id=uuid4().hex)
        policy = TokenPolicy(
            generate,
            self.tokenizer,
            _sampling(sampling_params, settings.max_tokens),
            max_context=self.limits.prompt_length + self.limits.response_length,
            # verl trains on response_length tokens after the prompt: the episode ends there (truncated), as
            # verl's own tool agent loop does, rather than earning reward for turns cut from training
            max_response=self.limits.response_length,
            system_prompt=settings.system_prompt,
            name="verl",
        )
        seated = shared_seating(settings, info)  # who plays the other seats; built by the worker's first episode
        seated.require_one_trajectory("verl")
        executor = Executor(
            pool,
            policy,
            concurrency=1,
            max_attempts=settings.max_attempts,
            episode_timeout_s=settings.episode_timeout_s,
            provenance={
                "trainer": "verl",
                "global_steps": step + 1,
                "request_id": generate.request_id,
                **seated.provenance(),
            },
            opponents=seated.opponents,
            seats=seated.seats,
        )
        # one trajectory: the episode's, or on a multi-player env the trained seat's
        [trajectory] = await executor.run_episode(EpisodeRequest(generate.request_id, task), info)
        STEP_LOG.add(trajectory, step=step + 1)
        return self._finish(trajectory, generate, kwargs)

    def _finish(self, trajectory: Trajectory, generate: VerlGenerate, row: dict[str, Any]) -> AgentLoopOutput:
        settings = self.settings
        output, report = to_agent_loop_output(
            trajectory,
            self.limits,
            metrics={"num_preempted": generate.num_preempted},
            engine_fields=generate.extra_fields or _weight_versions(row),
            logprobs_missing=generate.logprobs_missing,
        )
        if not report.trainable:
            task_id = trajectory.task.task_id
            log.warning("episode %s (task %s) not trained on: %s", generate.request_id, task_id, trajectory.error)
            if settings.on_infra_failure == "raise" and trajectory.outcome.is_infra_failure:
                raise InfraFailureError(
                    f"episode of task {task_id!r} ended in {trajectory.outcome.value}: {trajectory.error}"
                )
        return output


def unreachable(task: Task, error: Exception) -> Trajectory:
    """The trajectory of an episode that found no env server to play on."""
    return Trajectory(task=task, first_observation="", outcome=Outcome.ENV_ERROR, error=str(error))


def horizon(settings: LoopSettings, info: EnvInfo) -> HorizonSchedule:
    """The configured schedule, or the env's own turn limit at every step."""
    if settings.horizon is None:
        return FixedHorizon(turns=info.default_max_turns)
    return build_horizon(settings.horizon, get_plugin_host().horizon)


def training_step(row: Mapping[str, Any]) -> int:
    """verl's ``global_steps`` (1-based) as the schedule's 0-based step; call it before ``run`` first awaits.

    verl 0.9.1 gives it to the agent loop in one of two places:

    * the V1 trainer (``trainer.use_v1``, the default) puts ``global_steps`` in each sample's row;
    * the legacy ``RayPPOTrainer`` sets only ``gen_batch.meta_info["global_steps"]``, which
      ``AgentLoopWorker.generate_sequences`` turns into the ``trajectory`` argument of
      ``_run_agent_loop`` (``get_trajectory_info(meta_info["global_steps"], ...)``: ``step``),
      the coroutine that awaits ``run``; it reaches no argument of ``run``, so it is read there.
    """
    value = row.get("global_steps")
    if value is None:
        value = _legacy_trainer_step()
    return max(int(value) - 1, 0) if value is not None else 0


def _legacy_trainer_step() -> int | None:
    """``trajectory["step"]`` of the ``_run_agent_loop`` that awaits this loop (-1 there: no step given)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_run_agent_loop":
            trajectory = frame.f_locals.get("trajectory")
            step = trajectory.get("step") if isinstance(trajectory, Mapping) else None
            return int(step) if step is not None and int(step) >= 1 else None
        frame = frame.f_back
    return None


def _weight_versions(row: dict[str, Any]) -> dict[str, Any]:
    """Weight versions for a sample that never reached the engine (verl's V1 trainer reads them)."""
    step = row.get("global_steps")
    if step is None:
        return {}
    return {"global_steps": int(step), "min_global_steps": int(step), "max_global_steps": int(step)}


def _sampling(sampling_params: dict[str, Any], max_tokens: int) -> SamplingParams:
    """verl's sampling settings, as the executor records them; the engine gets verl's dict itself."""
    known = {k: v for k, v in sampling_params.items() if v is not None}
    known["temperature"] = float(known.get("temperature", 1.0))
    known["top_p"] = float(known.get("top_p", 1.0))
    known["max_tokens"] = max_tokens
    return SamplingParams.model_validate(known)


def _pad_id(tokenizer: Any) -> int:
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    return int(pad if pad is not None else 0)
