"""Token-by-token comparisons of stored trajectories with what vLLM answered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agenthub import Outcome, TokenTrace, Trajectory


def masked(trace: TokenTrace, mask: int) -> tuple[list[int], list[float]]:
    """The trace's ids and logprobs where ``response_mask == mask``."""
    pairs = [
        (i, lp) for i, lp, m in zip(trace.response_ids, trace.logprobs, trace.response_mask, strict=True) if m == mask
    ]
    return [i for i, _ in pairs], [lp for _, lp in pairs]


def turn_prefixes(trace: TokenTrace) -> list[list[int]]:
    """The context the model conditioned on before each of its turns: the trace cut before each masked run."""
    context = list(trace.prompt_ids)
    cuts: list[list[int]] = []
    previous = 0
    for token, mask in zip(trace.response_ids, trace.response_mask, strict=True):
        if mask == 1 and previous == 0:
            cuts.append(list(context))
        context.append(token)
        previous = mask
    return cuts


def canonical(tokenizer: Any, token_ids: Sequence[int]) -> bool:
    """Whether ``token_ids`` are what the tokenizer writes for their own decoded text (special tokens kept)."""
    text = tokenizer.decode(list(token_ids), skip_special_tokens=False)
    return list(tokenizer.encode(text, add_special_tokens=False)) == list(token_ids)


@dataclass
class ChatAnswer:
    """One vLLM chat completion, as the engine returned it."""

    prompt_ids: list[int]
    token_ids: list[int]
    logprobs: list[float]
    content: str


def chat_answer(answer: dict[str, Any]) -> ChatAnswer:
    choice = answer["choices"][0]
    return ChatAnswer(
        prompt_ids=list(answer["prompt_token_ids"]),
        token_ids=list(choice["token_ids"]),
        logprobs=[float(entry["logprob"]) for entry in choice["logprobs"]["content"]],
        content=choice["message"]["content"] or "",
    )


@dataclass
class Tally:
    turns: int = 0
    traces: int = 0
    multi_turn_traces: int = 0
    non_canonical_turns: int = 0


def check_agent_run(trajectories: Sequence[Trajectory], answers: Sequence[ChatAnswer], tokenizer: Any) -> Tally:
    """Every stored turn is one of vLLM's answers, ids and logprobs exact, and each answer is stored once
    (an answer the agent could not parse ends its episode as agent_error and is in no turn); every kept
    token trace holds exactly the turns' ids at its masked positions, and each turn's prompt was vLLM's."""
    tally = Tally()
    engine = Counter((tuple(a.token_ids), tuple(a.logprobs), a.content) for a in answers)
    stored: Counter[tuple[tuple[int, ...], tuple[float, ...], str]] = Counter()
    prompts = {tuple(a.prompt_ids) for a in answers}
    for trajectory in trajectories:
        for turn in trajectory.turns:
            assert turn.token_ids is not None and turn.logprobs is not None, f"turn without tokens: {turn}"
            text = turn.text if turn.text is not None else str(turn.action)  # text is kept when it differs
            stored[(tuple(turn.token_ids), tuple(turn.logprobs), text)] += 1
            tally.turns += 1
            tally.non_canonical_turns += not canonical(tokenizer, turn.token_ids)
        trace = trajectory.tokens
        if trace is None:
            continue
        tally.traces += 1
        tally.multi_turn_traces += len(trajectory.turns) > 1
        ids, logprobs = masked(trace, 1)
        assert ids == [t for turn in trajectory.turns for t in turn.token_ids or []], trajectory.key
        assert logprobs == [lp for turn in trajectory.turns for lp in turn.logprobs or []], trajectory.key
        for cut in turn_prefixes(trace):
            assert tuple(cut) in prompts, f"{trajectory.key}: a turn's context is no prompt vLLM was sent"
    extra = stored - engine
    assert not extra, f"{sum(extra.values())} stored turns are not what vLLM returned, e.g. {next(iter(extra))}"
    unstored = engine - stored
    errors = sum(t.outcome == Outcome.AGENT_ERROR for t in trajectories)
    assert sum(unstored.values()) == errors, f"{sum(unstored.values())} answers unstored, {errors} agent errors"
    return tally


def check_policy_run(trajectories: Sequence[Trajectory], answers: Sequence[tuple[list[int], dict[str, Any]]]) -> Tally:
    """For ``TokenPolicy`` over vLLM's completions: every answer vLLM gave sits in exactly one trajectory's
    trace, right after the prompt it was asked with, ids and logprobs exact and masked 1; every masked run
    of every trace is one of those answers; the stored turns carry the same ids."""
    tally = Tally()
    runs = 0
    for trajectory in trajectories:
        trace = trajectory.tokens
        assert trace is not None, f"{trajectory.key}: no token trace"
        tally.traces += 1
        tally.multi_turn_traces += len(trajectory.turns) > 1
        runs += len(turn_prefixes(trace))
        ids, _ = masked(trace, 1)
        turn_ids = [t for turn in trajectory.turns for t in turn.token_ids or []]
        # An episode that ended on an unplayable turn has sampled ids in its trace but no turn for them.
        assert ids[: len(turn_ids)] == turn_ids, trajectory.key
        tally.turns += len(trajectory.turns)
    assert runs == len(answers), f"{runs} sampled runs in the traces but vLLM gave {len(answers)} answers"
    for prompt, choice in answers:
        sampled = [int(t) for t in choice["token_ids"]]
        logprobs = [float(x) for x in choice["logprobs"]["token_logprobs"]]
        found = False
        for trajectory in trajectories:
            trace = trajectory.tokens
            assert trace is not None
            full = [*trace.prompt_ids, *trace.response_ids]
            start, end = len(prompt), len(prompt) + len(sampled)
            if full[:start] != prompt or full[start:end] != sampled:
                continue
            offset = start - len(trace.prompt_ids)
            assert trace.response_mask[offset : offset + len(sampled)] == [1] * len(sampled), trajectory.key
            assert trace.logprobs[offset : offset + len(sampled)] == logprobs, trajectory.key
            found = True
            break
        assert found, f"vLLM's answer {sampled[:8]}... to a {len(prompt)}-token prompt is in no trace"
    return tally
