"""verl's ``server_manager.generate`` as the executor's token-in/token-out ``generate``.

One :class:`VerlGenerate` serves one episode: every turn goes out under the
same ``request_id``, so verl's router keeps the episode on one inference
server and its prefix cache (the conversation so far) is reused turn after
turn. What the engine reports besides tokens (weight versions, preemptions)
is kept for the :class:`AgentLoopOutput`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import uuid4

from agenthub.rollout import Generation, SamplingParams

_FINISH = {"completed": "stop", "stop": "stop", "length": "length"}


class GenerationAbortedError(RuntimeError):
    """The engine aborted the request (weights changed mid-turn without partial rollout)."""


class VerlGenerate:
    """``generate(prompt_ids, sampling)`` over verl's ``server_manager`` for one episode.

    verl's ``sampling_params`` (temperature, top_p, top_k: the rollout's, the
    validation's, or greedy for ReMax baselines) are sent as given; the
    executor only sets ``max_tokens``, the turn's token budget.
    """

    def __init__(self, server_manager: Any, sampling_params: Mapping[str, Any], request_id: str | None = None) -> None:
        self.server_manager = server_manager
        self.sampling_params = dict(sampling_params)
        self.request_id = request_id or uuid4().hex
        self.calls = 0
        self.num_preempted = -1
        self.extra_fields: dict[str, Any] = {}
        self.logprobs_missing = False

    async def __call__(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        params = {**self.sampling_params, "max_tokens": sampling.max_tokens}
        output = await self.server_manager.generate(
            request_id=self.request_id, prompt_ids=list(prompt_ids), sampling_params=params
        )
        self.calls += 1
        self._record(output)
        stop_reason = getattr(output, "stop_reason", None)
        if stop_reason in ("aborted", "abort"):
            raise GenerationAbortedError(
                f"verl aborted request {self.request_id} after {len(output.token_ids)} tokens; the episode is not "
                "trained on (enable partial rollout in verl to resume aborted requests instead)"
            )
        logprobs = output.log_probs
        if not logprobs and output.token_ids:
            self.logprobs_missing = True  # calculate_log_probs=False: the output says None, never zeros
            logprobs = None
        finish = _FINISH.get(str(stop_reason), "stop" if stop_reason is None else str(stop_reason))
        return Generation([int(t) for t in output.token_ids], None if logprobs is None else list(logprobs), finish)

    def _record(self, output: Any) -> None:
        preempted = getattr(output, "num_preempted", None)
        if preempted is not None:
            self.num_preempted = (0 if self.num_preempted < 0 else self.num_preempted) + int(preempted)
        fields = dict(getattr(output, "extra_fields", None) or {})
        if not self.extra_fields:
            self.extra_fields.update(fields)  # the first turn's weight version is the episode's min
        elif fields.get("max_global_steps") is not None:
            self.extra_fields["max_global_steps"] = fields["max_global_steps"]
