"""The executor's ``TokenPolicy`` with vLLM as its engine: ``/v1/completions`` with token-id prompts.

The trace must hold vLLM's sampled ids exactly (mask 1), and every prompt vLLM was sent must be
the trace so far: with the chatml template and with qwen3's, which renders the last assistant
message unlike earlier ones.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from agenthub import LocalServer, Task, Trajectory
from agenthub.rollout.executor import Executor, episode_requests
from agenthub.rollout.policy import Generation, SamplingParams, TokenPolicy
from agenthub.rollout.pool import EnvPool
from agenthub.testing.vllm_server import VLLMCompletions, VLLMServer

from .checks import canonical, check_policy_run

pytestmark = pytest.mark.anyio

TASKS = [Task(env="trail", task_id=10_000 + i) for i in range(16)]
SAMPLES = 4


def same_model(a: Path, b: Path) -> bool:
    digest = [hashlib.sha256((d / "model.safetensors").read_bytes()).hexdigest() for d in (a, b)]
    return digest[0] == digest[1]


async def play(policy: TokenPolicy) -> list[Trajectory]:
    with LocalServer("trail") as env:
        async with EnvPool.from_urls([env.url]) as pool:
            return await Executor(pool, policy, concurrency=16).run(episode_requests(TASKS, samples=SAMPLES))


@pytest.fixture(params=["chatml", "qwen3"])
def template(request: pytest.FixtureRequest, tiny_models: dict[str, Path], tokenizers: dict[str, Any]) -> str:
    name: str = request.param
    # vLLM serves the chatml directory; the qwen3 one differs only in its chat template (same vocabulary,
    # same seed, so the same weights), and a token-level policy renders the template itself.
    assert same_model(tiny_models[name], tiny_models["chatml"])
    assert tokenizers[name].get_vocab() == tokenizers["chatml"].get_vocab()
    return name


@pytest.mark.timeout(900)
async def test_token_policy_keeps_vllms_ids_exactly_and_every_prompt_is_the_trace_so_far(
    template: str, vllm_server: VLLMServer, tokenizers: dict[str, Any]
) -> None:
    tokenizer = tokenizers[template]
    generate = VLLMCompletions(vllm_server.base_url)
    policy = TokenPolicy(generate, tokenizer, SamplingParams(temperature=1.0, max_tokens=24), max_context=1024)
    try:
        trajectories = await play(policy)
    finally:
        await generate.aclose()
    tally = check_policy_run(trajectories, generate.answers)
    non_canonical = sum(not canonical(tokenizer, choice["token_ids"]) for _, choice in generate.answers)
    print(
        f"TokenPolicy over vLLM, {template}: {tally.turns} turns, {tally.multi_turn_traces} multi-turn traces of "
        f"{tally.traces}, {non_canonical} of {len(generate.answers)} answers non-canonical"
    )
    assert len(trajectories) == len(TASKS) * SAMPLES and tally.multi_turn_traces >= 8, tally
    assert non_canonical >= 5, f"only {non_canonical} of {len(generate.answers)} answers were non-canonical"


@pytest.mark.timeout(900)
async def test_a_policy_that_re_encodes_its_turns_is_caught(
    vllm_server: VLLMServer, tokenizers: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's patch: decode each sampled turn and encode it again before it enters the trace."""
    import agenthub.rollout.policy as policy_module

    tokenizer = tokenizers["chatml"]
    honest = policy_module.call_generate

    async def re_encoding(generate: Any, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        generation = await honest(generate, prompt_ids, sampling)
        ids = list(tokenizer.encode(tokenizer.decode(generation.token_ids), add_special_tokens=False))
        logprobs = ((generation.logprobs or []) + [0.0] * len(ids))[: len(ids)]
        return Generation(ids[: sampling.max_tokens], logprobs[: sampling.max_tokens], generation.finish_reason)

    monkeypatch.setattr(policy_module, "call_generate", re_encoding)
    generate = VLLMCompletions(vllm_server.base_url)
    policy = TokenPolicy(generate, tokenizer, SamplingParams(temperature=1.0, max_tokens=24), max_context=1024)
    try:
        trajectories = await play(policy)
    finally:
        await generate.aclose()
    with pytest.raises(AssertionError, match="is in no trace"):
        check_policy_run(trajectories, generate.answers)
