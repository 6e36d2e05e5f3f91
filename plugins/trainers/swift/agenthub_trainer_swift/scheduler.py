"""``AgenthubScheduler``: swift's ``MultiTurnScheduler`` whose episodes are agenthub env sessions.

Two paths, as swift runs schedulers:

* **server mode** (``swift rollout --multi_turn_scheduler agenthub``, vLLM async
  engine): swift calls :meth:`AgenthubScheduler.run` once per episode; the hub
  executor plays the whole episode through a :class:`TokenPolicy` whose
  ``generate`` is swift's engine, token in and token out
  (:mod:`.generate`), and the trajectory comes back as one ``RolloutOutput``
  (:mod:`.outputs`);
* **colocate / transformers mode** (``swift rlhf`` without a rollout server):
  swift samples each turn itself and calls the per-turn hooks here:
  ``on_trajectory_start`` opens an env session per episode and puts the first
  observation in the messages, ``on_turn_end`` steps the session with the
  decoded sample and says when the episode is done, ``step`` adds the env's
  answer as the next user message. Sampled tokens stay token-backed in
  swift's messages; env messages are template tokens with label -100, out of
  the loss.

Infra failures (env_error, agent_error, timeout) are never trained on: their
tokens get an all-zero loss mask and ``agenthub_env_reward`` gives them their
group's mean reward, hence no advantage (see the README).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

from agenthub import EnvInfo, Outcome, Task, Trajectory, Turn
from agenthub.config import MultiPlayerConfig
from agenthub.rollout import (
    EnvPool,
    EpisodeFailure,
    EpisodeRequest,
    Executor,
    Generation,
    NoHealthyEndpointError,
    RunStore,
    SamplingParams,
    TokenPolicy,
    not_evaluated,
    terminal_outcome,
)
from agenthub.training import StepOutcomeLog, seating
from swift.rollout import MultiTurnScheduler

from agenthub_trainer_swift.generate import REQUEST_CONFIG, SwiftEngineGenerate, sampled_logprobs
from agenthub_trainer_swift.horizon import StepClock, schedule
from agenthub_trainer_swift.outputs import prompt_messages, rollout_infos, rollout_output
from agenthub_trainer_swift.sessions import EnvSessions, TurnEpisode
from agenthub_trainer_swift.settings import SchedulerSettings

log = logging.getLogger("agenthub.swift")

TASK_COLUMN = "agenthub_task"
"""The dataset column that carries each row's task (JSON); swift passes it to the scheduler in ``data_dict``."""

SCHEDULER_NAME = "agenthub"

_FINISH: contextvars.ContextVar[list[str]] = contextvars.ContextVar("agenthub_swift_finish_reasons")


def task_of(infer_request: Any) -> Task:
    """The task a dataset row carries in its ``agenthub_task`` column."""
    data = getattr(infer_request, "data_dict", None) or {}
    raw = data.get(TASK_COLUMN)
    if raw is None:
        raise ValueError(
            f"the dataset row has no {TASK_COLUMN!r} column, so the agenthub scheduler does not know which task "
            "to play; build the dataset with `agenthub run trainer=swift --dry-run` (see the README)"
        )
    return Task.model_validate_json(raw) if isinstance(raw, str) else Task.model_validate(raw)


def unplayed(task: Task, key: str, error: str) -> Trajectory:
    """The trajectory of an episode whose env could not even be reached."""
    return Trajectory(task=task, first_observation="", outcome=Outcome.ENV_ERROR, error=error, key=key)


def episode_key(infer_request: Any) -> str:
    uuid = getattr(infer_request, "uuid", None)
    return str(uuid) if uuid else f"request-{id(infer_request)}"


def players(settings: SchedulerSettings) -> MultiPlayerConfig:
    """Who plays a multi-player env's seats: the ``seat``, ``opponent`` and ``opponent_kwargs`` of the run's
    config in its store (``agenthub run trainer=swift mode=server seat=1 opponent=oracle``); else the policy
    plays every seat and is trained on seat 0."""
    if settings.store is None:
        return MultiPlayerConfig()
    config = RunStore.existing(settings.store).config()
    return MultiPlayerConfig.model_validate(
        {k: config[k] for k in ("seat", "opponent", "opponent_kwargs") if k in config}
    )


class _ServerRollout:
    """The hub executor that server-mode ``run()`` plays episodes with, bound to one event loop."""

    def __init__(self, settings: SchedulerSettings, engine: Any, tokenizer: Any) -> None:
        self.pool = EnvPool.from_urls(settings.urls, token=settings.token, capacity=settings.capacity)
        self.pool.start()
        self.generate = SwiftEngineGenerate(engine)
        self.policy = TokenPolicy(
            self._generate,
            tokenizer,
            SamplingParams(max_tokens=settings.max_tokens),
            max_context=settings.max_context,
            system_prompt=settings.system_prompt,
            name="swift",
        )
        self.settings = settings
        self.executor: Executor | None = None

    async def ready(self) -> tuple[Executor, EnvInfo]:
        """The executor, made on the first episode: a multi-player env's seats need the env's info."""
        info = await self.pool.info()
        if self.executor is None:
            seated = seating(players(self.settings), info)
            seated.require_one_trajectory("ms-swift's GRPO")
            self.executor = Executor(
                self.pool,
                self.policy,
                max_attempts=self.settings.max_attempts,
                episode_timeout_s=self.settings.episode_timeout_s,
                provenance={"trainer": "swift", **seated.provenance()},
                opponents=seated.opponents,
                seats=seated.seats,
            )
        return self.executor, info

    async def _generate(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        generation = await self.generate(prompt_ids, sampling)
        reasons = _FINISH.get(None)
        if reasons is not None:
            reasons.append(generation.finish_reason)
        return generation

    async def info(self) -> EnvInfo:
        return await self.pool.info()


class AgenthubScheduler(MultiTurnScheduler):  # type: ignore[misc]
    """Plays agenthub env episodes in swift GRPO; registered as ``--multi_turn_scheduler agenthub``."""

    def __init__(
        self,
        infer_engine: Any = None,
        max_turns: int | None = None,
        *args: Any,
        tokenizer: Any = None,
        template: Any = None,
        settings: SchedulerSettings | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(infer_engine, max_turns, *args, tokenizer=tokenizer, template=template, **kwargs)
        self.settings = settings or SchedulerSettings.load()
        self.store = RunStore.existing(self.settings.store) if self.settings.store else None
        self.step_log = StepOutcomeLog(window=self.settings.episodes_per_step, emit=log.warning)
        self.horizon = schedule(self.settings.horizon) if self.settings.horizon is not None else None
        self.clock = StepClock(self.settings.episodes_per_step)
        self._servers: dict[int, _ServerRollout] = {}
        self._sessions: EnvSessions | None = None
        self._episodes: dict[str, TurnEpisode] = {}

    # -- both modes ----------------------------------------------------------------

    def _with_horizon(self, tasks: list[Task]) -> list[Task]:
        """Each task's turn limit at its step (swift's --max_turns caps it: swift stops there)."""
        if self.horizon is None:
            return tasks
        limited = []
        for task, step in zip(tasks, self.clock.steps(len(tasks)), strict=True):
            turns = self.horizon.max_turns(step)
            limited.append(task.model_copy(update={"max_turns": min(turns, self.max_turns or turns)}))
        return limited

    def _record(self, trajectory: Trajectory) -> None:
        if self.store is not None:
            self.store.write(trajectory)
        self.step_log.add(trajectory)
        if not trajectory.trainable:
            outcome, error = trajectory.outcome.value, trajectory.error
            log.warning("episode %s: %s (%s); not trained on", trajectory.key, outcome, error)

    def _end_token_id(self) -> int:
        tokenizer = self.tokenizer
        for value in (getattr(tokenizer, "eos_token_id", None), getattr(tokenizer, "pad_token_id", None)):
            if value is not None:
                return int(value)
        return 0

    def _decode(self, ids: Any) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=False))

    # -- server mode: the whole episode ----------------------------------------------

    def _server(self) -> _ServerRollout:
        loop = asyncio.get_running_loop()
        server = self._servers.get(id(loop))
        if server is None:
            if self.tokenizer is None:
                raise RuntimeError(
                    "the agenthub scheduler has no tokenizer; swift passes its template's tokenizer when the "
                    "scheduler is made by `swift rollout` or `swift rlhf`, else pass tokenizer=..."
                )
            server = self._servers[id(loop)] = _ServerRollout(self.settings, self.infer_engine, self.tokenizer)
        return server

    async def run(self, infer_request: Any, request_config: Any, **kwargs: Any) -> Any:
        """One whole episode with the hub executor; swift's ``RolloutOutput`` of it."""
        task = task_of(infer_request)
        if self.horizon is not None:
            [task] = self._with_horizon([task])
        else:
            limit = self.settings.max_turns or self.max_turns or task.max_turns
            if limit is not None:
                task = task.model_copy(update={"max_turns": limit})
        server = self._server()
        key = episode_key(infer_request)
        reasons: list[str] = []
        config_token, finish_token = REQUEST_CONFIG.set(request_config), _FINISH.set(reasons)
        try:
            executor, info = await server.ready()
            # one trajectory: the episode's, or on a multi-player env the trained seat's
            [trajectory] = await executor.run_episode(EpisodeRequest(key, task), info)
        except NoHealthyEndpointError as exc:  # no server answers at all: an env_error like any other
            info, trajectory = None, unplayed(task, key, str(exc))
        finally:
            REQUEST_CONFIG.reset(config_token)
            _FINISH.reset(finish_token)
        self._record(trajectory)
        return rollout_output(
            trajectory,
            system_prompt=self.settings.system_prompt or (info.instructions if info else None),
            fallback_messages=list(infer_request.messages),
            decode=self._decode,
            end_token_id=self._end_token_id(),
            finish_reason=reasons[-1] if reasons else None,
        )

    # -- colocate / transformers mode: one turn at a time -------------------------------

    def _env_sessions(self) -> EnvSessions:
        if self._sessions is None:
            self._sessions = EnvSessions(self.settings, cap=self.max_turns)
        return self._sessions

    async def on_trajectory_start(self, requests: list[Any]) -> None:
        sessions = self._env_sessions()
        tasks = self._with_horizon([task_of(r) for r in requests])
        episodes = await asyncio.gather(
            *(sessions.open(episode_key(r), t) for r, t in zip(requests, tasks, strict=True))
        )
        for request, episode in zip(requests, episodes, strict=True):
            self._episodes[episode.key] = episode
            if episode.session is not None:
                request.messages = prompt_messages(episode.system_prompt, episode.first_observation)

    def _action(self, response_choice: Any) -> str:
        ids = response_choice.token_ids
        if ids and self.tokenizer is not None:
            return str(self.tokenizer.decode(list(ids), skip_special_tokens=True)).strip()
        return str(response_choice.message.content or "").strip()

    async def on_turn_end(self, infer_request: Any, response_choice: Any, current_turn: int) -> dict[str, Any]:
        episode = self._episodes.get(episode_key(infer_request))
        if episode is None:
            raise RuntimeError(
                f"the agenthub scheduler has no env session for request {episode_key(infer_request)}; "
                "on_trajectory_start did not run for it (is --multi_turn_scheduler agenthub set on this side?)"
            )
        if not episode.failed:
            await self._step(episode, response_choice)
        if episode.outcome is None:
            return {"done": False}
        await self._env_sessions().close(episode)
        del self._episodes[episode.key]
        trajectory = episode.trajectory(self._env_sessions().info)
        self._record(trajectory)
        if episode.failed:
            return self._dropped(infer_request, response_choice, trajectory)
        return {"done": True, "rollout_infos": rollout_infos(trajectory)}

    async def _step(self, episode: TurnEpisode, response_choice: Any) -> None:
        action = self._action(response_choice)
        try:
            result = await self._env_sessions().step(episode, action)
        except EpisodeFailure as failure:
            episode.fail(failure)
            return
        episode.turns.append(
            Turn(
                action=action,
                observation=result.observation,
                reward=result.reward,
                terminated=result.terminated,
                truncated=result.truncated,
                info=result.info,
                token_ids=list(response_choice.token_ids or []) or None,
                logprobs=sampled_logprobs(response_choice),
            )
        )
        if result.terminated:
            episode.outcome = terminal_outcome(result.reward, result.info)
            episode.error = not_evaluated(result.info)  # an unscored end is stored with the env's reason
        elif result.truncated or len(episode.turns) >= episode.max_turns:
            episode.outcome = Outcome.TRUNCATED
        else:
            episode.pending_observation = result.observation

    def _dropped(self, infer_request: Any, response_choice: Any, trajectory: Trajectory) -> dict[str, Any]:
        """End an infra-failed episode with nothing trainable left in it.

        swift keeps earlier turns' ids and masks; it pairs them with assistant
        messages from the last one backwards, so leaving only this turn's
        assistant message (with an all-zero mask) leaves the earlier turns
        unpaired: they are not encoded at all.
        """
        messages = infer_request.messages
        first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), 0)
        last = messages[-1]
        messages[:] = [*messages[: first_user + 1], last] if last.get("role") == "assistant" else messages
        ids = list(response_choice.token_ids or []) or [self._end_token_id()]
        return {
            "done": True,
            "response_token_ids": ids,
            "response_loss_mask": [0] * len(ids),
            "rollout_logprobs": [],
            "rollout_infos": rollout_infos(trajectory),
        }

    def step(self, infer_request: Any, response_choice: Any, current_turn: int) -> dict[str, Any]:
        episode = self._episodes.get(episode_key(infer_request))
        if episode is not None and episode.pending_observation is not None:
            infer_request.messages.append({"role": "user", "content": episode.pending_observation})
            episode.pending_observation = None
        return {"infer_request": infer_request}

    def check_finished(self, infer_request: Any, response_choice: Any, current_turn: int) -> bool:
        # on_turn_end decides (the env ends episodes, not a model turn cut at max_tokens).
        episode = self._episodes.get(episode_key(infer_request))
        return episode is None or episode.outcome is not None
