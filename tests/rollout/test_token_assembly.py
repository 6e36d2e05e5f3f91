"""Token fidelity: sampled ids kept exactly, env turns from the tokenizer's own template, masks, logprobs."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from agenthub import LocalServer, Outcome, Task, Trajectory
from agenthub.rollout.executor import Executor, episode_requests
from agenthub.rollout.policy import SamplingParams, TokenPolicy
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.token_assembly import ChatTemplateDeltas, TokenAssemblyError, render
from agenthub.testing.tiny_tokenizer import CHAT_TEMPLATES, build_tokenizer

from .engines import GuessSearchEngine

pytestmark = pytest.mark.anyio
SYSTEM = "Play the game. Answer with one action."


@pytest.fixture(scope="module", params=sorted(CHAT_TEMPLATES))
def tokenizer(request: pytest.FixtureRequest) -> Any:
    return build_tokenizer(request.param)


@pytest.fixture(scope="module")
def guess_url() -> Iterator[str]:
    with LocalServer("guess") as server:
        yield server.url


async def play(url: str, policy: TokenPolicy, tasks: list[Task]) -> list[Trajectory]:
    async with EnvPool.from_urls([url]) as pool:
        return await Executor(pool, policy, concurrency=4).run(episode_requests(tasks))


def conversation(trajectory: Trajectory) -> list[dict[str, str]]:
    """The episode as chat messages, as the model saw it."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": trajectory.first_observation}]
    for index, turn in enumerate(trajectory.turns):
        messages.append({"role": "assistant", "content": str(turn.action)})
        if index < len(trajectory.turns) - 1:
            messages.append({"role": "user", "content": turn.observation})
    return messages


async def test_sampled_tokens_are_kept_exactly_and_env_turns_use_the_template(tokenizer: Any, guess_url: str) -> None:
    engine = GuessSearchEngine(tokenizer)
    policy = TokenPolicy(engine, tokenizer, SamplingParams(max_tokens=16), system_prompt=SYSTEM, max_context=1024)
    [trajectory] = await play(guess_url, policy, [Task(env="guess", task_id=11)])
    assert trajectory.outcome is Outcome.SUCCESS and len(trajectory.turns) >= 3
    trace = trajectory.tokens
    assert trace is not None
    ids, mask, logprobs = trace.response_ids, trace.response_mask, trace.logprobs
    # The model's tokens, in order, are exactly what the engine sampled ...
    assert [i for i, m in zip(ids, mask, strict=True) if m] == [t for g in engine.returned for t in g.token_ids]
    # ... with their logprobs; every other position is 0.0 and masked out.
    sampled_logprobs = [x for g in engine.returned for x in g.logprobs or []]
    assert [x for x, m in zip(logprobs, mask, strict=True) if m] == sampled_logprobs
    assert all(x == 0.0 for x, m in zip(logprobs, mask, strict=True) if not m)
    assert 0 < sum(mask) < len(mask)
    # Each turn records its own sampled ids and logprobs too.
    assert [t for turn in trajectory.turns for t in turn.token_ids or []] == [
        t for g in engine.returned for t in g.token_ids
    ]
    assert [x for turn in trajectory.turns for x in turn.logprobs or []] == sampled_logprobs
    # The whole sequence is what the tokenizer's own template renders for the conversation, each model
    # turn as it renders a past one (Qwen3's adds a think block to the last assistant message only).
    full = trace.prompt_ids + ids
    history = [*conversation(trajectory), {"role": "user", "content": "next"}]
    assert render(tokenizer, history, add_generation_prompt=False)[: len(full)] == full
    if not ChatTemplateDeltas(tokenizer).last_turn_differs:
        assert full == render(tokenizer, conversation(trajectory), add_generation_prompt=False)
    # Each generation was conditioned on the trace so far (the prefix the trainer will score).
    for prompt in engine.calls:
        assert full[: len(prompt)] == prompt


async def test_a_turn_cut_by_max_tokens_gets_the_whole_close_from_the_template(tokenizer: Any, guess_url: str) -> None:
    engine = GuessSearchEngine(tokenizer, stop=False)
    policy = TokenPolicy(engine, tokenizer, SamplingParams(max_tokens=16), system_prompt=SYSTEM)
    [trajectory] = await play(guess_url, policy, [Task(env="guess", task_id=5)])
    trace = trajectory.tokens
    assert trace is not None and all(g.finish_reason == "length" for g in engine.returned)
    close = ChatTemplateDeltas(tokenizer, SYSTEM).assistant_close
    first = len(engine.returned[0].token_ids)
    assert trace.response_ids[first : first + len(close)] == close
    assert trace.response_mask[first : first + len(close)] == [0] * len(close)
    full = trace.prompt_ids + trace.response_ids
    history = [*conversation(trajectory), {"role": "user", "content": "next"}]  # every model turn a past one
    assert render(tokenizer, history, add_generation_prompt=False)[: len(full)] == full


async def test_the_context_guard_truncates_before_overflow(tokenizer: Any, guess_url: str) -> None:
    engine = GuessSearchEngine(tokenizer)
    prompt_len = len(ChatTemplateDeltas(tokenizer, SYSTEM).prompt("x" * 0))
    limit = prompt_len + 60  # room for the first observation and about one more turn
    policy = TokenPolicy(engine, tokenizer, SamplingParams(max_tokens=16), system_prompt=SYSTEM, max_context=limit)
    trajectories = await play(guess_url, policy, [Task(env="guess", task_id=t) for t in (1, 7, 13)])
    for trajectory in trajectories:
        assert trajectory.tokens is not None
        assert len(trajectory.tokens) <= limit
        assert trajectory.outcome in (Outcome.TRUNCATED, Outcome.SUCCESS)
        assert trajectory.error is None
    assert any(t.outcome is Outcome.TRUNCATED for t in trajectories)


async def test_an_engine_that_overruns_max_tokens_is_an_agent_error(tokenizer: Any, guess_url: str) -> None:
    def chatty(prompt_ids: list[int], sampling: SamplingParams) -> tuple[list[int], list[float], str]:
        ids = tokenizer.encode("guess 8 " * 40, add_special_tokens=False)
        return ids, [-1.0] * len(ids), "length"

    policy = TokenPolicy(chatty, tokenizer, SamplingParams(max_tokens=4))
    [trajectory] = await play(guess_url, policy, [Task(env="guess", task_id=2)])
    assert trajectory.outcome is Outcome.AGENT_ERROR and not trajectory.trainable
    assert trajectory.error is not None and "more than max_tokens=4" in trajectory.error


def test_a_template_that_rewrites_earlier_turns_is_refused_up_front() -> None:
    tokenizer = build_tokenizer("chatml")
    # Shows only the last two messages, as some "thinking" templates drop history.
    tokenizer.chat_template = (
        "{% for m in messages[-2:] %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
    )
    with pytest.raises(TokenAssemblyError, match="prefix check failed"):
        TokenPolicy(GuessSearchEngine(tokenizer), tokenizer)


async def test_without_a_system_prompt_the_policy_uses_the_envs_instructions(guess_url: str) -> None:
    tokenizer = build_tokenizer("chatml")
    engine = GuessSearchEngine(tokenizer)
    [trajectory] = await play(guess_url, TokenPolicy(engine, tokenizer), [Task(env="guess", task_id=4)])
    assert trajectory.tokens is not None
    prompt = tokenizer.decode(trajectory.tokens.prompt_ids)
    assert prompt.startswith("<|im_start|>system\nYou are playing a number-guessing game.")


def test_a_response_budget_ends_the_episode_where_the_trainer_stops_training(tokenizer: Any) -> None:
    """verl trains on ``response_length`` tokens after the prompt; the assembler never goes past them."""
    from agenthub.rollout.token_assembly import ContextLengthExceeded, TokenAssembler

    deltas = ChatTemplateDeltas(tokenizer, "rules")
    assembler = TokenAssembler(deltas, "first", max_context=10_000, max_response=12)
    assert assembler.room() == 12
    turn = tokenizer.encode("guess 8", add_special_tokens=False)
    assembler.add_model_turn(turn, None)
    used = len(assembler.trace.response_ids)
    assert assembler.room() == 12 - used
    with pytest.raises(ContextLengthExceeded, match="would overflow max_response=12"):
        assembler.add_env_turn("Too low. The secret number is between 9 and 16.")
    assert len(assembler.trace.response_ids) == used  # the trace is left as it was


def test_qwen3s_template_is_assembled_turn_by_turn_without_re_encoding() -> None:
    """Qwen3 renders the last assistant message with a think block and earlier ones without: an env turn is
    what follows a past assistant message, appended after the sampled tokens as they are."""
    tokenizer = build_tokenizer("qwen3")
    deltas = ChatTemplateDeltas(tokenizer, "rules")
    assert deltas.last_turn_differs
    assert (
        tokenizer.decode(deltas.env_turn("Too low.")) == "<|im_start|>user\nToo low.<|im_end|>\n<|im_start|>assistant\n"
    )
    # A reply with its own reasoning is kept as sampled, think block included, and the episode goes on from it.
    sampled = tokenizer.encode("<think>\nlow half\n</think>\n\nguess 4", add_special_tokens=False)
    from agenthub.rollout.token_assembly import TokenAssembler

    assembler = TokenAssembler(deltas, "Guess a number.", max_context=1024)
    assembler.add_model_turn([*sampled, deltas.assistant_close[0]], None)
    assembler.add_env_turn("Too low.")
    assert assembler.trace.response_ids[: len(sampled)] == sampled
    text = tokenizer.decode(assembler.context_ids)
    assert text.endswith("guess 4<|im_end|>\n<|im_start|>user\nToo low.<|im_end|>\n<|im_start|>assistant\n")


def test_the_old_module_name_still_imports_with_a_warning_saying_where_to_import_from() -> None:
    sys.modules.pop("agenthub.rollout.tokens", None)
    with pytest.warns(DeprecationWarning, match="import ChatTemplateDeltas, render, .* from agenthub.rollout"):
        old = importlib.import_module("agenthub.rollout.tokens")
    assert old.render is render and old.ChatTemplateDeltas is ChatTemplateDeltas
