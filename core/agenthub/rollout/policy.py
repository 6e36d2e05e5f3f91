"""Token-level policies: a caller's ``generate`` function turned into an :class:`~agenthub.Agent`.

A trainer hands the executor ``generate(prompt_ids, sampling)``, backed by
its own inference engine, and the tokenizer of the model being trained. The
executor needs nothing else: the episode keeps a :class:`TokenAssembler`, and
the env sees the decoded text of each sampled turn.

**Fault injection.** A trainer's tests check that its adapter catches an engine that breaks the
token-in/token-out contract (e.g. a turn decoded and encoded again). The policy is built deep inside the
trainer, so :func:`inject_generation_fault` is the seam: while its ``with`` block runs, every
:class:`TokenPolicy` in this process passes each engine answer through the fault before it enters the
trace. It is for tests; nothing in a run installs one.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenthub.errors import AgenthubError
from agenthub.rollout.token_assembly import ChatTemplateDeltas, ChatTokenizer, ContextLengthExceeded, TokenAssembler
from agenthub.types import Action, AgentReply, EnvInfo, Observation, Task, TokenTrace


class SamplingParams(BaseModel):
    """Sampling settings passed through to the engine and recorded in provenance."""

    model_config = ConfigDict(extra="allow")

    temperature: float = Field(default=1.0, ge=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_tokens: int = Field(default=256, ge=1)


@dataclass(frozen=True)
class Generation:
    """One model turn from the engine: the sampled ids, their logprobs, why it stopped."""

    token_ids: list[int]
    logprobs: list[float] | None
    finish_reason: str


GenerateResult = Generation | tuple[Sequence[int], Sequence[float] | None, str]
GenerateFn = Callable[[list[int], SamplingParams], Awaitable[GenerateResult] | GenerateResult]
"""``generate(prompt_ids, sampling) -> (token_ids, logprobs, finish_reason)``, sync or async."""

ActionParser = Callable[[str], Action]


class GenerationError(AgenthubError):
    """The engine's answer broke the token-in/token-out contract."""


GenerationFault = Callable[[Generation, list[int], SamplingParams], Generation]
"""``fault(generation, prompt_ids, sampling) -> generation``: what a test makes of the engine's answer."""

_faults: list[GenerationFault] = []  # process-wide: a trainer may run its policy on another thread or loop


@contextlib.contextmanager
def inject_generation_fault(fault: GenerationFault) -> Iterator[None]:
    """While the block runs, every :class:`TokenPolicy` turn's engine answer passes through ``fault``.

    Example (a test's engine that re-encodes its text, which the trainer's checks must catch)::

        def re_encoding(generation, prompt_ids, sampling):
            ids = tokenizer.encode(tokenizer.decode(generation.token_ids))[: sampling.max_tokens]
            return Generation(ids, None, generation.finish_reason)

        with inject_generation_fault(re_encoding):
            run_the_trainer()

    Faults nest (the innermost applies last); the answer is still held to ``max_tokens`` afterwards.
    """
    _faults.append(fault)
    try:
        yield
    finally:
        _faults.remove(fault)


async def call_generate(generate: GenerateFn, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
    result = generate(prompt_ids, sampling)
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, Generation):
        return result
    try:
        token_ids, logprobs, finish_reason = result
    except (TypeError, ValueError) as exc:
        raise GenerationError(
            f"generate() must return Generation or (token_ids, logprobs, finish_reason), got {type(result).__name__}"
        ) from exc
    return Generation([int(t) for t in token_ids], None if logprobs is None else list(logprobs), str(finish_reason))


class TokenPolicy:
    """An Agent whose episodes sample token ids through ``generate`` and keep a faithful trace.

    Example::

        policy = TokenPolicy(engine.generate, tokenizer, SamplingParams(max_tokens=64), max_context=2048)
        trajectory = await executor.run_one(request)   # trajectory.tokens is the TokenTrace
    """

    def __init__(
        self,
        generate: GenerateFn,
        tokenizer: ChatTokenizer,
        sampling: SamplingParams | None = None,
        *,
        max_context: int = 4096,
        max_response: int | None = None,
        system_prompt: str | None = None,
        parse_action: ActionParser | None = None,
        name: str = "token-policy",
    ) -> None:
        self.generate = generate
        self.tokenizer = tokenizer
        self.sampling = sampling or SamplingParams()
        self.max_context = max_context
        self.max_response = max_response
        self.parse_action = parse_action or str.strip
        self.name = name
        self.system_prompt = system_prompt
        self._deltas: dict[str | None, ChatTemplateDeltas] = {}
        self.deltas_for(system_prompt)  # check the template now, not mid-run

    def deltas_for(self, system_prompt: str | None) -> ChatTemplateDeltas:
        """The template's pieces with this system prompt (one per env's instructions, cached)."""
        if system_prompt not in self._deltas:
            self._deltas[system_prompt] = ChatTemplateDeltas(self.tokenizer, system_prompt)
        return self._deltas[system_prompt]

    def describe(self) -> dict[str, Any]:
        """What provenance records about this policy."""
        described = {"policy": self.name, "sampling": self.sampling.model_dump(), "max_context": self.max_context}
        if self.max_response is not None:
            described["max_response"] = self.max_response
        return described

    def start_episode(self, task: Task, env: EnvInfo) -> TokenEpisode:
        # The policy's own system prompt wins; else the env's instructions, as served in /v1/info.
        return TokenEpisode(self, self.deltas_for(self.system_prompt or env.instructions))


class TokenEpisode:
    """One episode's conversation in tokens."""

    def __init__(self, policy: TokenPolicy, deltas: ChatTemplateDeltas) -> None:
        self.policy = policy
        self.deltas = deltas
        self.assembler: TokenAssembler | None = None

    @property
    def token_trace(self) -> TokenTrace | None:
        return self.assembler.trace if self.assembler is not None else None

    async def act(self, observation: Observation) -> AgentReply:
        policy = self.policy
        if self.assembler is None:
            self.assembler = TokenAssembler(
                self.deltas, observation.text, max_context=policy.max_context, max_response=policy.max_response
            )
        else:
            self.assembler.add_env_turn(observation.text)
        # Keep room for the template's close of this turn, so the trace never passes max_context.
        room = self.assembler.room() - len(self.deltas.assistant_close)
        if room < 1:
            limit = f"max_context={policy.max_context}" + (
                f" and max_response={policy.max_response}" if policy.max_response is not None else ""
            )
            raise ContextLengthExceeded(f"no room left to generate within {limit}")
        sampling = policy.sampling.model_copy(update={"max_tokens": min(policy.sampling.max_tokens, room)})
        generation = await call_generate(policy.generate, self.assembler.context_ids, sampling)
        for fault in tuple(_faults):
            generation = fault(generation, list(self.assembler.context_ids), sampling)
        if len(generation.token_ids) > sampling.max_tokens:
            raise GenerationError(
                f"generate() returned {len(generation.token_ids)} tokens, more than max_tokens={sampling.max_tokens}"
            )
        self.assembler.add_model_turn(generation.token_ids, generation.logprobs)
        text = policy.tokenizer.decode(generation.token_ids, skip_special_tokens=True)
        return AgentReply(
            action=policy.parse_action(text),
            text=text,
            token_ids=list(generation.token_ids),
            logprobs=None if generation.logprobs is None else list(generation.logprobs),
        )
