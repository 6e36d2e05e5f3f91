"""Token-by-token checks of what a trainer was handed against what the engine sampled.

Every adapter ends in a framework's own sample type (verl's ``AgentLoopOutput``,
AReaL's tensor dict, OpenRLHF's samples, swift's rollout rows). A test turns
each into a :class:`SequenceView` (the prompt ids, then the response ids with
their loss mask and logprobs) and calls :func:`check_sampled_turns` with the
engine's record of what it was asked and what it answered: every answer must
sit in exactly one sequence, right after the exact prompt it was asked with,
its ids unchanged, masked 1 and with its logprobs; and every masked run of
every sequence must be one of those answers. A decode and re-encode anywhere
between engine and trainer breaks the first rule for any non-canonical answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SequenceView:
    """One training sequence as a trainer receives it: prompt ids, then the response with its mask."""

    prompt_ids: list[int]
    response_ids: list[int]
    response_mask: list[int]
    logprobs: list[float] | None = None  # aligned with response_ids (0 or anything where the mask is 0)
    name: str = ""


@dataclass(frozen=True)
class EngineAnswer:
    """One engine call: the prompt it was sent and the ids (and logprobs) it answered with."""

    prompt_ids: list[int]
    token_ids: list[int]
    logprobs: list[float] | None = None


@dataclass
class CheckTally:
    """What :func:`check_sampled_turns` matched."""

    sequences: int = 0
    multi_turn_sequences: int = 0
    answers: int = 0
    cut_answers: int = 0


def masked_runs(view: SequenceView) -> list[tuple[int, int]]:
    """``(start, end)`` offsets into ``response_ids`` of each maximal run of mask 1."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for offset, mask in enumerate([*view.response_mask, 0]):
        if mask and start is None:
            start = offset
        elif not mask and start is not None:
            runs.append((start, offset))
            start = None
    return runs


def check_sampled_turns(
    views: Sequence[SequenceView],
    answers: Sequence[EngineAnswer],
    *,
    logprob_tolerance: float = 1e-5,
    allow_cut_last: bool = False,
    allow_unused: int = 0,
) -> CheckTally:
    """Assert that ``views`` hold ``answers`` token by token (see the module docstring); returns a tally.

    Args:
        allow_cut_last: the last masked run of a sequence may be a prefix of its answer (a trainer that
            cuts the response at its length budget, as verl does).
        allow_unused: how many answers may be in no sequence (episodes a test expects to be dropped).
    """
    tally = CheckTally()
    claimed: dict[tuple[int, int], int] = {}  # (view, start offset) -> end offset
    unused = 0
    for view in views:
        if len(view.response_ids) != len(view.response_mask):
            raise AssertionError(f"{view.name}: {len(view.response_ids)} ids but {len(view.response_mask)} mask values")
        if view.logprobs is not None and len(view.logprobs) != len(view.response_ids):
            raise AssertionError(f"{view.name}: {len(view.logprobs)} logprobs for {len(view.response_ids)} ids")
        tally.sequences += 1
        tally.multi_turn_sequences += len(masked_runs(view)) > 1
    for answer in answers:
        if not _place(answer, views, claimed, tally, logprob_tolerance, allow_cut_last):
            unused += 1
            if unused > allow_unused:
                raise AssertionError(
                    f"the engine's answer {answer.token_ids[:8]}... to a {len(answer.prompt_ids)}-token prompt is "
                    "in no sequence (right after that prompt, ids exact): were its tokens re-encoded or dropped?"
                )
    for index, view in enumerate(views):
        for start, end in masked_runs(view):
            if claimed.get((index, start)) != end:
                raise AssertionError(
                    f"{view.name or index}: masked ids {view.response_ids[start:end][:8]}... at offset {start} are "
                    "no answer the engine gave"
                )
    return tally


def _place(
    answer: EngineAnswer,
    views: Sequence[SequenceView],
    claimed: dict[tuple[int, int], int],
    tally: CheckTally,
    tolerance: float,
    allow_cut_last: bool,
) -> bool:
    prompt, sampled = answer.prompt_ids, answer.token_ids
    for index, view in enumerate(views):
        full = [*view.prompt_ids, *view.response_ids]
        start = len(prompt) - len(view.prompt_ids)
        if start < 0 or (index, start) in claimed or full[: len(prompt)] != prompt:
            continue
        stored = view.response_ids[start : start + len(sampled)]
        cut = len(stored) < len(sampled) and allow_cut_last and start + len(stored) == len(view.response_ids)
        if stored != sampled and not (cut and stored == sampled[: len(stored)]):
            continue
        mask = view.response_mask[start : start + len(stored)]
        if mask != [1] * len(stored):
            raise AssertionError(f"{view.name or index}: the engine's ids at offset {start} are not all masked 1")
        if answer.logprobs is not None and view.logprobs is not None:
            got = view.logprobs[start : start + len(stored)]
            if not all(math.isclose(a, b, abs_tol=tolerance) for a, b in zip(got, answer.logprobs, strict=False)):
                raise AssertionError(
                    f"{view.name or index}: logprobs at offset {start} are {got[:4]}..., the engine's were "
                    f"{answer.logprobs[:4]}..."
                )
        claimed[(index, start)] = start + len(stored)
        tally.answers += 1
        tally.cut_answers += cut
        return True
    return False
