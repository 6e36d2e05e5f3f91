"""Token by token: OpenRLHF trains on exactly the tokens a model sampled, through OpenRLHF's own engine actor.

The rollout runs as OpenRLHF runs it: ``RolloutRayActor.generate_responses``
(OpenRLHF's code) plays ``n_samples_per_prompt`` concurrent ``execute`` calls
of the agent it loaded from ``--train.agent_func_path``, with the actor itself
as ``llm_engine``; the agent's turns go through the actor's own ``generate``
into vLLM, here :class:`conftest.SampledVLLM`, which samples a tiny real model
(not a tokenizer's encoding of a word), so most turns would change if decoded
and encoded again. The env is the real ``trail`` server on loopback. Each
response becomes a training ``Experience`` by OpenRLHF's own
``SamplesGenerator._process_response_into_experience``, and every sampled turn
must be in one of them, right after the exact prompt it was sampled for, with
its ids, loss mask and logprobs (:func:`agenthub.testing.token_checks.check_sampled_turns`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agenthub.rollout import Generation, SamplingParams, inject_generation_fault
from agenthub.testing import EngineAnswer, SequenceView, build_tiny_model, check_sampled_turns, is_canonical

from agenthub_trainer_openrlhf.launch import agent_func_path, prompt_rows
from agenthub_trainer_openrlhf.settings import SETTINGS_ENV, AgentSettings

MAX_LEN = 400  # --data.max_len: long enough that OpenRLHF cuts no sequence here
PER_TURN = 10  # tokens per model turn: many turns end at the limit, many at <|im_end|>
N = 2  # --rollout.n_samples_per_prompt
TASKS = [0, 1, 2, 3]  # 8 episodes
TURNS = 3  # the tasks' turn limit


@pytest.fixture(scope="module", params=["chatml", "qwen3"])
def model_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random model with its tokenizer and chat template (Qwen2's ChatML, or Qwen3's), built here."""
    return build_tiny_model(tmp_path_factory.mktemp(f"tiny-{request.param}"), template=request.param)


@pytest.fixture
def agent_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trail_url: str) -> Path:
    """The agent.json ``agenthub run`` writes, named in the environment OpenRLHF's engine actors inherit."""
    settings = AgentSettings(env="trail", urls=[trail_url], max_tokens=PER_TURN)
    path = tmp_path / "agent.json"
    path.write_text(settings.model_dump_json())
    monkeypatch.setenv(SETTINGS_ENV, str(path))
    return path


def openrlhf_sampling_params() -> Any:
    """The SamplingParams OpenRLHF's ``_dispatch_prompts_to_vllm`` builds by default (logprobs: IS correction on)."""
    from vllm import SamplingParams as VLLMSamplingParams  # the test shim's, with vLLM's fields and defaults

    return VLLMSamplingParams(
        temperature=1.0, top_p=1.0, top_k=-1, max_tokens=64, min_tokens=1, skip_special_tokens=False, logprobs=1
    )


def rollout(model_dir: Path, seed: int, sampled_vllm: Any, max_len: int = MAX_LEN) -> tuple[list[Any], Any]:
    """One rollout of ``TASKS`` through OpenRLHF's engine actor: the training samples, and the vLLM double."""
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator
    from openrlhf.trainer.ray.vllm_engine import _load_agent_executor

    llm_class, actor_of = sampled_vllm
    llm = llm_class(model_dir, seed=seed)
    executor = _load_agent_executor(agent_func_path())  # as the actor's __init__ loads it: by path, no arguments
    actor = actor_of(llm, executor)
    params = openrlhf_sampling_params()

    async def play() -> list[dict[str, Any]]:
        # OpenRLHF sends every prompt of a batch to its actors at once; each runs its N samples concurrently.
        try:
            groups = await asyncio.gather(
                *(
                    actor.generate_responses(row["input"], "", params, max_len, llm.tokenizer, num_samples=N)
                    for row in prompt_rows("trail", "train", TASKS, TURNS)
                )
            )
        finally:
            await executor.aclose()
        return [response for group in groups for response in group]

    responses = asyncio.run(play())
    generator = SamplesGenerator.__new__(SamplesGenerator)  # the conversion uses no state
    experiences = [generator._process_response_into_experience(r, max_len=max_len) for r in responses]
    return experiences, llm


def views(experiences: list[Any]) -> list[SequenceView]:
    """OpenRLHF's samples as the check reads them: its ``action_mask[t]`` and logprobs are those of token ``t + 1``."""
    out = []
    for number, experience in enumerate(experiences):
        sequence = [int(t) for t in experience.sequences[0].tolist()]
        assert experience.rollout_log_probs is not None
        out.append(
            SequenceView(
                prompt_ids=sequence[:1],
                response_ids=sequence[1:],
                response_mask=[int(m) for m in experience.action_mask[0].tolist()],
                logprobs=[float(v) for v in experience.rollout_log_probs[0].tolist()],
                name=f"experience {number}",
            )
        )
    return out


def answers(llm: Any) -> list[EngineAnswer]:
    return [EngineAnswer(call.prompt_ids, call.token_ids, call.logprobs) for call in llm.calls]


def test_openrlhf_trains_on_exactly_the_sampled_tokens_of_every_turn(
    model_dir: Path, agent_settings: Path, sampled_vllm: Any
) -> None:
    experiences, llm = rollout(model_dir, seed=1, sampled_vllm=sampled_vllm)

    # Nothing dropped or cut: every answer is in a sample (OpenRLHF's max_len cuts none here, no episode failed).
    tally = check_sampled_turns(views(experiences), answers(llm))
    assert tally.sequences == len(experiences) == N * len(TASKS)
    assert tally.answers == len(llm.calls) > len(experiences)
    assert tally.multi_turn_sequences >= 3, tally
    # The model's samples, not the tokenizer's: these would come back different from a decode and re-encode.
    changed = [c for c in llm.calls if not is_canonical(llm.tokenizer, c.token_ids, sorted(llm.eos))]
    assert len(changed) >= 3, f"{len(changed)} of {len(llm.calls)} turns are non-canonical"
    # The engine was asked as OpenRLHF asks, within the agent's turn budget, stopping at the template's turn end.
    end = llm.tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert all(c.max_tokens <= PER_TURN and c.min_tokens == 1 and c.stop_token_ids == [end] for c in llm.calls)
    assert all(c.token_ids[0] not in llm.eos for c in llm.calls)  # vLLM's min_tokens held: no empty turn
    assert {c.finish_reason for c in llm.calls} == {"stop", "length"}
    # OpenRLHF's length penalty reads `truncated`: the last turn's finish reason.
    for experience in experiences:
        sequence = experience.sequences[0].tolist()
        played = [
            c for c in llm.calls if sequence[: len(c.prompt_ids) + len(c.token_ids)] == c.prompt_ids + c.token_ids
        ]
        last = max(played, key=lambda c: len(c.prompt_ids))
        assert bool(experience.truncated[0]) == (last.finish_reason == "length")


def test_a_tight_max_len_shortens_turns_and_openrlhf_cuts_none(
    model_dir: Path, agent_settings: Path, sampled_vllm: Any
) -> None:
    """With --data.max_len near the episodes' length the agent shrinks and ends turns; OpenRLHF's cut finds nothing."""
    tight = 152  # the first prompt is ~95 tokens, the second ~140-160: second turns get little or no room
    experiences, llm = rollout(model_dir, seed=2, sampled_vllm=sampled_vllm, max_len=tight)

    # allow_cut_last stays off: a sampled turn cut by OpenRLHF's sequences[:max_len] would fail here.
    tally = check_sampled_turns(views(experiences), answers(llm))
    assert tally.answers == len(llm.calls) and tally.cut_answers == 0
    assert all(len(e.sequences[0]) <= tight for e in experiences)
    assert any(c.max_tokens < PER_TURN for c in llm.calls)  # a turn's budget was what room was left
    assert max(len(c.prompt_ids) + c.max_tokens for c in llm.calls) >= tight - 2  # the budget reached the limit


def test_a_policy_that_re_encodes_its_turns_is_caught(model_dir: Path, agent_settings: Path, sampled_vllm: Any) -> None:
    """The review's patch: each sampled turn decoded and encoded again before it enters the trace."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)  # the engine's tokenizer, as the directory loads it

    def re_encoding(generation: Generation, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        text = tokenizer.decode(generation.token_ids)
        ids = list(tokenizer.encode(text, add_special_tokens=False))[: sampling.max_tokens]
        logprobs = ((generation.logprobs or []) + [0.0] * len(ids))[: len(ids)]
        return Generation(ids, logprobs, generation.finish_reason)

    with inject_generation_fault(re_encoding):
        experiences, llm = rollout(model_dir, seed=1, sampled_vllm=sampled_vllm)
    with pytest.raises(AssertionError, match="re-encoded"):
        check_sampled_turns(views(experiences), answers(llm))
