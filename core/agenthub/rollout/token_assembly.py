"""Token-faithful assembly of a multi-turn episode.

The sampled tokens go into ``response_ids`` exactly as the engine returned
them. Everything between two model turns (the end of the assistant message,
the env's observation as a user message, the next generation prompt) is
rendered by the tokenizer's *own* chat template: no model format is written
here. The template's pieces are found by rendering two throw-away
conversations and taking the difference, with a prefix check that refuses a
template that is not append-only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from agenthub.errors import AgenthubError
from agenthub.types import TokenTrace

Message = dict[str, str]


class TokenAssemblyError(AgenthubError):
    """The tokenizer's chat template cannot be extended turn by turn."""


class ContextLengthExceeded(AgenthubError):
    """The next turn would not fit the context; the executor ends the episode as truncated."""


@runtime_checkable
class ChatTokenizer(Protocol):
    """What the assembler needs of a tokenizer: a Hugging Face tokenizer has both."""

    def apply_chat_template(self, conversation: Any, /, **kwargs: Any) -> Any: ...

    def decode(self, token_ids: Any, /, **kwargs: Any) -> str: ...


def render(tokenizer: ChatTokenizer, messages: Sequence[Message], *, add_generation_prompt: bool) -> list[int]:
    """Token ids of ``messages`` under the tokenizer's chat template (transformers 4 or 5)."""
    out = tokenizer.apply_chat_template(
        list(messages), tokenize=True, add_generation_prompt=add_generation_prompt, return_dict=False
    )
    if isinstance(out, Mapping):  # a BatchEncoding
        out = out["input_ids"]
    ids = list(out)
    if ids and isinstance(ids[0], list):  # batched form
        ids = ids[0]
    return [int(i) for i in ids]


def _common_suffix(a: Sequence[int], b: Sequence[int]) -> list[int]:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return list(a[len(a) - n :])


class ChatTemplateDeltas:
    """The template's pieces around model turns, learned by rendering dummy conversations."""

    _USER = "u"
    _REPLIES = ("ok", "fine, thanks")  # different last characters: no shared token

    def __init__(self, tokenizer: ChatTokenizer, system_prompt: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.head: list[Message] = [{"role": "system", "content": system_prompt}] if system_prompt else []
        first, second = (
            render(tokenizer, [*self._base(), {"role": "assistant", "content": r}], add_generation_prompt=False)
            for r in self._REPLIES
        )
        # What the template writes after any assistant message: e.g. [<|im_end|>, "\n"].
        self.assistant_close = _common_suffix(first, second)
        if not self.assistant_close:
            raise TokenAssemblyError(
                "the chat template writes nothing after an assistant message, so the end of a model turn "
                "cannot be found; use a tokenizer whose template closes assistant turns"
            )
        self._closed_conversation = first
        # Some templates (Qwen3's) render the last assistant message unlike earlier ones (an empty think
        # block, reasoning kept only there). Then an env turn is what follows a *historical* assistant
        # message; sampled tokens are still never re-encoded.
        self.last_turn_differs = False
        self._check_append_only()

    def _check_append_only(self) -> None:
        """Fail now, not mid-episode, on a template that rewrites the conversation when a turn is added."""
        before = self._closed_conversation
        after = self._render_with_env(self._REPLIES[0], "probe")
        if after[: len(before)] == before:
            return
        self.last_turn_differs = True
        # Two exchanges, each assistant message in its historical form: the conversation must be the first
        # exchange's prompt, then the second reply and its close, then the env turn, appended in order.
        both = render(
            self.tokenizer,
            [
                *self._base(),
                {"role": "assistant", "content": self._REPLIES[0]},
                {"role": "user", "content": "probe"},
                {"role": "assistant", "content": self._REPLIES[1]},
                {"role": "user", "content": "second probe"},
            ],
            add_generation_prompt=True,
        )
        closing = [*self.assistant_close, *self.env_turn("second probe")]
        if both[: len(after)] != after or both[-len(closing) :] != closing:
            raise TokenAssemblyError(
                "the chat template rewrites earlier turns when a message is added (prefix check failed), so a "
                "multi-turn episode cannot be assembled token by token; use a template that only appends"
            )

    def _render_with_env(self, reply: str, observation: str) -> list[int]:
        return render(
            self.tokenizer,
            [
                *self._base(),
                {"role": "assistant", "content": reply},
                {"role": "user", "content": observation},
            ],
            add_generation_prompt=True,
        )

    def _base(self) -> list[Message]:
        return [*self.head, {"role": "user", "content": self._USER}]

    def prompt(self, first_observation: str) -> list[int]:
        """The episode's prompt: system prompt, the first observation, the generation prompt."""
        return render(
            self.tokenizer, [*self.head, {"role": "user", "content": first_observation}], add_generation_prompt=True
        )

    def close_model_turn(self, sampled: Sequence[int]) -> list[int]:
        """Template tokens to append after ``sampled`` so that the assistant message is closed.

        A model that stopped on its end-of-turn token gets only what follows
        it (e.g. a newline); one cut off by ``max_tokens`` gets the whole close.
        """
        end_token = self.assistant_close[0]
        if sampled and sampled[-1] == end_token:
            return self.assistant_close[1:]
        return list(self.assistant_close)

    def env_turn(self, observation: str) -> list[int]:
        """Tokens of the env's answer as a user message, plus the next generation prompt."""
        after = self._render_with_env(self._REPLIES[0], observation)
        if not self.last_turn_differs:
            before = self._closed_conversation
            if after[: len(before)] != before:
                raise TokenAssemblyError(
                    "the chat template rewrites earlier turns when a message is added (prefix check failed), so a "
                    "multi-turn episode cannot be assembled token by token; use a template that only appends"
                )
            return after[len(before) :]
        # What follows any (historical) assistant message's close: the same after two different replies.
        shared = _common_suffix(after, self._render_with_env(self._REPLIES[1], observation))
        close = self.assistant_close
        if shared[: len(close)] != close:
            raise TokenAssemblyError(
                "the chat template closes an earlier assistant message unlike the last one, so the env's turn "
                "cannot be placed after a sampled turn; use a template whose assistant messages end alike"
            )
        return shared[len(close) :]


class TokenAssembler:
    """Builds one episode's :class:`TokenTrace`, enforcing the context length."""

    def __init__(
        self,
        deltas: ChatTemplateDeltas,
        first_observation: str,
        *,
        max_context: int,
        max_response: int | None = None,
    ) -> None:
        self.deltas = deltas
        self.max_context = max_context
        # A trainer with a fixed response budget (verl's response_length) trains on no token past it:
        # an episode that went on would be paid for turns the model is never trained on.
        self.max_response = max_response
        self.trace = TokenTrace(prompt_ids=deltas.prompt(first_observation))
        if len(self.trace) >= max_context:
            raise ContextLengthExceeded(
                f"the prompt alone has {len(self.trace)} tokens, not less than max_context={max_context}"
            )

    @property
    def context_ids(self) -> list[int]:
        """What the model conditions on for its next turn."""
        return self.trace.prompt_ids + self.trace.response_ids

    def room(self) -> int:
        """Tokens the model may still generate."""
        room = self.max_context - len(self.trace)
        if self.max_response is not None:
            room = min(room, self.max_response - len(self.trace.response_ids))
        return room

    def add_model_turn(self, token_ids: Sequence[int], logprobs: Sequence[float] | None) -> None:
        if logprobs is not None and len(logprobs) != len(token_ids):
            raise TokenAssemblyError(
                f"the engine returned {len(token_ids)} tokens but {len(logprobs)} logprobs; they must align"
            )
        self._extend(token_ids, 1, logprobs)
        self._extend(self.deltas.close_model_turn(token_ids), 0, None)

    def add_env_turn(self, observation: str, *, reserve: int = 1) -> None:
        """Append the env's answer, or raise :class:`ContextLengthExceeded` if it and ``reserve``
        generated tokens would not fit; then the trace is left as it was."""
        delta = self.deltas.env_turn(observation)
        if len(self.trace) + len(delta) + reserve > self.max_context:
            raise ContextLengthExceeded(
                f"the env's answer ({len(delta)} tokens) would overflow max_context={self.max_context} "
                f"({len(self.trace)} tokens used)"
            )
        used = len(self.trace.response_ids)
        if self.max_response is not None and used + len(delta) + reserve > self.max_response:
            raise ContextLengthExceeded(
                f"the env's answer ({len(delta)} tokens) would overflow max_response={self.max_response} "
                f"({used} response tokens used)"
            )
        self._extend(delta, 0, None)

    def _extend(self, ids: Sequence[int], mask: int, logprobs: Sequence[float] | None) -> None:
        self.trace.response_ids.extend(int(i) for i in ids)
        self.trace.response_mask.extend([mask] * len(ids))
        self.trace.logprobs.extend([0.0] * len(ids) if logprobs is None else [float(x) for x in logprobs])
