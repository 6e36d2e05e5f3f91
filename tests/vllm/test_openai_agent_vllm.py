"""``agenthub eval agent=openai`` against a real vLLM, token by token.

The tiny model's random weights sample token sequences the tokenizer would never write for the same
text (``ab`` as ``a`` + ``b``), which is what exposes a re-encode: stand-in engines that answer
with the canonical encoding of a word cannot.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agenthub import Trajectory
from agenthub.cli.main import main
from agenthub.testing.vllm_server import SERVED_NAME, VLLMServer

from .checks import Tally, chat_answer, check_agent_run
from .recording import RecordingProxy

EPISODES = {"n": 16, "k": 4}  # 64 sampled episodes of the built-in trail env


def eval_through(proxy: RecordingProxy, runs: Path, max_tokens: int) -> list[Trajectory]:
    code = main(
        [
            "eval",
            "env=trail",
            "agent=openai",
            f"agent.base_url={proxy.base_url}",
            f"agent.model={SERVED_NAME}",
            "agent.logprobs=true",
            "agent.temperature=1.0",
            f"agent.max_tokens={max_tokens}",
            # The whole reply is the move (trail reads it leniently): random text still plays several turns.
            "agent.action_format=raw",
            f"n={EPISODES['n']}",
            f"k={EPISODES['k']}",
            "concurrency=16",
            f"runs_dir={runs}",
            "run_id=vllm",
            "progress=false",
        ]
    )
    assert code == 0
    lines = (runs / "vllm" / "trajectories.jsonl").read_text().splitlines()
    return [Trajectory.model_validate(json.loads(line)) for line in lines]


def run_and_check(vllm_server: VLLMServer, tokenizer: Any, runs: Path, max_tokens: int = 24) -> Tally:
    with RecordingProxy(vllm_server.url) as proxy:
        trajectories = eval_through(proxy, runs, max_tokens)
    answers = [chat_answer(e.answer) for e in proxy.chat_answers()]
    assert len(trajectories) == EPISODES["n"] * EPISODES["k"]
    assert answers, "no chat completion went through the proxy"
    return check_agent_run(trajectories, answers, tokenizer)


@pytest.mark.timeout(900)
def test_eval_keeps_vllms_sampled_ids_and_logprobs_exactly(
    vllm_server: VLLMServer, tokenizers: dict[str, Any], tmp_path: Path
) -> None:
    tally = run_and_check(vllm_server, tokenizers["chatml"], tmp_path)
    print(f"openai agent over vLLM, 24 tokens a turn: {tally}")  # shown with -s: how much the check covered
    # Not vacuous: many turns, and turns a decode + re-encode would have changed. vLLM tokenizes each reply
    # again in the next prompt, so such a turn ends the episode's trace: only single-turn traces are kept here.
    assert tally.turns >= 64 and tally.traces >= 8
    assert tally.non_canonical_turns >= 5, tally


@pytest.mark.timeout(900)
def test_multi_turn_traces_follow_vllms_own_rendering_of_the_conversation(
    vllm_server: VLLMServer, tokenizers: dict[str, Any], tmp_path: Path
) -> None:
    """One token a turn is mostly canonical, so vLLM's next prompt extends the last and the agent keeps the
    trace across turns: the tokens it puts between turns must be exactly those of vLLM's next prompt."""
    tally = run_and_check(vllm_server, tokenizers["chatml"], tmp_path, max_tokens=1)
    print(f"openai agent over vLLM, 1 token a turn: {tally}")
    assert tally.multi_turn_traces >= 8, tally


@pytest.mark.timeout(900)
def test_a_re_encoding_agent_is_caught(
    vllm_server: VLLMServer, tokenizers: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above fails on an agent that decodes the reply and encodes it again (the bug it guards)."""
    import agenthub_agent_openai.agent as agent_module
    from agenthub_agent_openai.completion import Completion, read_completion

    tokenizer = tokenizers["chatml"]

    def re_encoding(payload: Any) -> Completion:
        completion = read_completion(payload)
        assert completion.token_ids is not None and completion.logprobs is not None
        text = tokenizer.decode(completion.token_ids, skip_special_tokens=False)
        ids = list(tokenizer.encode(text, add_special_tokens=False))
        logprobs = (completion.logprobs + [0.0] * len(ids))[: len(ids)]  # kept aligned, as a careless patch would
        return Completion(**{**completion.__dict__, "token_ids": ids, "logprobs": logprobs})

    monkeypatch.setattr(agent_module, "read_completion", re_encoding)
    with pytest.raises(AssertionError, match="stored turns are not what vLLM returned"):
        run_and_check(vllm_server, tokenizer, tmp_path)
