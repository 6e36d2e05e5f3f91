"""The agent executor OpenRLHF loads from ``--train.agent_func_path``, on the real ``trail`` env server.

Episodes run through the real OpenRLHF ``AgentExecutorBase`` subclass, loaded
the way OpenRLHF loads it (by file path, built with no arguments, settings
from ``AGENTHUB_OPENRLHF_SETTINGS``). Generation is the stand-in engine (see
``conftest.StandInEngine``; its answers are canonical encodings, so
re-tokenisation is tested against a sampling model in
``test_openrlhf_sampled_tokens.py``). Each response is checked token by token against
the trajectory the agent stored and the engine's own samples, then turned
into OpenRLHF's ``Experience`` by OpenRLHF's own
``SamplesGenerator._process_response_into_experience``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
from pathlib import Path
from typing import Any

import pytest
from agenthub import ConfigError, LocalServer, Outcome, Trajectory
from agenthub.rollout import RunStore
from openrlhf.utils.agent import AgentExecutorBase

from agenthub_trainer_openrlhf.agent import HubAgentExecutor
from agenthub_trainer_openrlhf.launch import agent_func_path, prompt_rows
from agenthub_trainer_openrlhf.settings import SETTINGS_ENV, AgentSettings

MAX_LEN = 200
PER_TURN = 4  # "right right right right" does not fit: some turns end with finish_reason "length"


def vllm_sampling_params(*, logprobs: int | None) -> Any:
    """The SamplingParams OpenRLHF's ``_dispatch_prompts_to_vllm`` builds (vLLM's class: the test shim's)."""
    from vllm import SamplingParams

    return SamplingParams(
        temperature=1.0, top_p=1.0, top_k=-1, max_tokens=64, min_tokens=1, skip_special_tokens=False, logprobs=logprobs
    )


def openrlhf_experience(response: dict[str, Any], max_len: int = MAX_LEN) -> Any:
    """OpenRLHF's own conversion of an agent response into a training ``Experience``."""
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator

    generator = SamplesGenerator.__new__(SamplesGenerator)  # the conversion uses no state
    return generator._process_response_into_experience(response, max_len=max_len)


def load_agent_module() -> Any:
    """``agent_func.py`` loaded as OpenRLHF's ``_load_agent_executor`` does (vllm_engine.py, 0.11.2)."""
    path = agent_func_path()
    assert path.endswith(".py")
    spec = importlib.util.spec_from_file_location("agent_module", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert issubclass(module.AgentExecutor, AgentExecutorBase)
    return module


async def play(agent: Any, engine: Any, prompts: list[str], params: Any, tokenizer: Any) -> list[dict[str, Any]]:
    try:
        return [await agent.execute(p, "", params, MAX_LEN, tokenizer, engine) for p in prompts]
    finally:
        await agent.aclose()


def stored(run_dir: Path) -> list[Trajectory]:
    return list(RunStore(run_dir).trajectories())


def test_responses_carry_exactly_the_sampled_tokens_logprobs_and_env_rewards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tokenizer: Any, trail_url: str, engine_class: Any
) -> None:
    settings = AgentSettings(env="trail", urls=[trail_url], max_tokens=PER_TURN, store=str(tmp_path))
    (tmp_path / "agent.json").write_text(settings.model_dump_json())
    monkeypatch.setenv(SETTINGS_ENV, str(tmp_path / "agent.json"))
    agent = load_agent_module().AgentExecutor()  # as OpenRLHF builds it: no arguments
    engine = engine_class(tokenizer, seed=1)
    prompts = [row["input"] for row in prompt_rows("trail", "train", list(range(8)), None)]

    responses = asyncio.run(play(agent, engine, prompts, vllm_sampling_params(logprobs=1), tokenizer))

    episodes = stored(tmp_path)
    assert len(episodes) == len(responses) == 8
    calls = iter(engine.calls)
    outcomes = set()
    for response, episode in zip(responses, episodes, strict=True):
        trace = episode.tokens
        assert trace is not None and episode.trainable
        outcomes.add(episode.outcome)
        tokens = response["observation_tokens"]
        assert tokens == trace.prompt_ids + trace.response_ids
        assert len(tokens) <= MAX_LEN
        ranges = response["action_ranges"]
        assert len(ranges) == len(episode.turns) >= 1  # one span per model turn
        sampled = {i for start, end in ranges for i in range(start, end)}
        masked = {len(trace.prompt_ids) + i for i, bit in enumerate(trace.response_mask) if bit}
        assert sampled == masked
        logprobs = response["rollout_log_probs"]
        assert len(logprobs) == len(tokens)
        for (start, end), turn in zip(ranges, episode.turns, strict=True):
            call = next(calls)
            assert call.prompt_ids == tokens[:start]  # vLLM saw exactly the sequence before this span
            assert tokens[start:end] == call.token_ids == turn.token_ids  # the span is vLLM's sample, unchanged
            assert logprobs[start:end] == call.logprobs  # each sampled token's logprob, in place
            assert call.max_tokens <= PER_TURN
            assert call.stop_token_ids == [tokenizer.convert_tokens_to_ids("<|im_end|>")]  # the template's turn end
        assert all(logprobs[i] == 0.0 for i in range(len(tokens)) if i not in sampled)
        # between two spans: the env's answer, in the chat template, never trained on
        if len(ranges) > 1:
            between = tokenizer.decode(tokens[ranges[0][1] : ranges[1][0]])
            assert episode.turns[0].observation in between and "<|im_start|>user" in between
        assert response["reward"] == episode.reward == pytest.approx(sum(t.reward for t in episode.turns))
        assert response["scores"] == episode.reward
        assert response["truncated"] == (call.finish_reason == "length")  # the last turn's finish reason
        assert response["extra_logs"]["agenthub_success"] == float(episode.outcome is Outcome.SUCCESS)
        assert response["extra_logs"]["agenthub_infra_failure"] == 0.0

        experience = openrlhf_experience(response)
        # OpenRLHF's action_mask and rollout logprobs are shifted by one: position t predicts token t + 1.
        expected_mask = [int(i in sampled) for i in range(1, len(tokens))]
        assert experience.action_mask[0].tolist() == expected_mask
        assert experience.sequences[0].tolist() == tokens
        assert experience.rollout_log_probs[0].tolist() == pytest.approx(logprobs[1:])
        assert experience.rewards.tolist() == pytest.approx([episode.reward])
        assert bool(experience.truncated[0]) == response["truncated"]
    assert next(calls, None) is None  # every engine call is in some response
    assert Outcome.SUCCESS in outcomes or Outcome.FAILURE in outcomes
    assert any(r["truncated"] for r in responses) or any(c.finish_reason == "length" for c in engine.calls)


def test_no_logprobs_unless_openrlhf_asks_for_them(
    tmp_path: Path, tokenizer: Any, trail_url: str, engine_class: Any
) -> None:
    agent = HubAgentExecutor(AgentSettings(env="trail", urls=[trail_url], max_tokens=PER_TURN))
    engine = engine_class(tokenizer, seed=2)
    prompts = [row["input"] for row in prompt_rows("trail", "train", [3, 4], 2)]
    responses = asyncio.run(play(agent, engine, prompts, vllm_sampling_params(logprobs=None), tokenizer))
    for response in responses:
        assert response["rollout_log_probs"] is None  # as OpenRLHF's own executors answer
        assert 1 <= len(response["action_ranges"]) <= 2  # the task's turn limit (horizon 2) held
        assert openrlhf_experience(response).rollout_log_probs is None


def infra_failures_are_never_trained_on(response: dict[str, Any], episode: Trajectory) -> None:
    assert not episode.trainable
    assert response["action_ranges"] == []
    assert response["reward"] == 0.0 and math.isnan(response["scores"])
    assert response["extra_logs"]["agenthub_infra_failure"] == 1.0
    experience = openrlhf_experience(response)
    assert experience.action_mask.sum().item() == 0  # OpenRLHF's loss leaves a fully masked sequence out
    assert math.isnan(experience.scores[0].item())  # fails every dynamic-filtering range: the group is dropped


def test_a_killed_env_server_gives_an_env_error_that_is_never_trained_on(
    tmp_path: Path, tokenizer: Any, engine_class: Any
) -> None:
    server = LocalServer("trail").start()
    settings = AgentSettings(
        env="trail", urls=[server.url], max_tokens=PER_TURN, max_attempts=2, unhealthy_wait_s=0.5, store=str(tmp_path)
    )
    agent = HubAgentExecutor(settings)
    engine = engine_class(tokenizer, seed=3)
    prompts = [row["input"] for row in prompt_rows("trail", "train", [5, 6], None)]
    params = vllm_sampling_params(logprobs=1)

    async def scenario() -> list[dict[str, Any]]:
        try:
            first = await agent.execute(prompts[0], "", params, MAX_LEN, tokenizer, engine)
            server.kill()  # the env server dies between two episodes
            second = await agent.execute(prompts[1], "", params, MAX_LEN, tokenizer, engine)
            return [first, second]
        finally:
            await agent.aclose()
            server.stop()

    first, second = asyncio.run(scenario())
    ok, failed = stored(tmp_path)
    assert ok.trainable and first["action_ranges"]
    assert failed.outcome is Outcome.ENV_ERROR and failed.attempts == 2
    assert second["extra_logs"]["agenthub_attempts"] == 2.0
    assert second["observation_tokens"] == tokenizer(text=prompts[1], add_special_tokens=False)["input_ids"]
    infra_failures_are_never_trained_on(second, failed)


def test_a_failing_engine_gives_an_agent_error_that_is_never_trained_on(
    tmp_path: Path, tokenizer: Any, trail_url: str, engine_class: Any
) -> None:
    agent = HubAgentExecutor(AgentSettings(env="trail", urls=[trail_url], max_tokens=PER_TURN, store=str(tmp_path)))
    engine = engine_class(tokenizer, seed=4, fail_calls=[0])
    prompts = [row["input"] for row in prompt_rows("trail", "train", [7], 3)]
    [response] = asyncio.run(play(agent, engine, prompts, vllm_sampling_params(logprobs=1), tokenizer))
    [episode] = stored(tmp_path)
    assert episode.outcome is Outcome.AGENT_ERROR and "crashed vLLM engine" in (episode.error or "")
    assert episode.tokens is not None and response["observation_tokens"] == episode.tokens.prompt_ids
    infra_failures_are_never_trained_on(response, episode)


def test_prompts_that_are_not_tasks_are_refused_in_words(tokenizer: Any, trail_url: str, engine_class: Any) -> None:
    agent = HubAgentExecutor(AgentSettings(env="trail", urls=[trail_url]))
    engine = engine_class(tokenizer)
    with pytest.raises(ConfigError, match=r"not an agenthub task.*prompts.jsonl"):
        asyncio.run(play(agent, engine, ["What is 2+2?"], vllm_sampling_params(logprobs=None), tokenizer))
    wrong_env = prompt_rows("guess", "train", [0], None)[0]["input"]
    with pytest.raises(ConfigError, match="env 'guess' but the env servers serve 'trail'"):
        asyncio.run(play(agent, engine, [wrong_env], vllm_sampling_params(logprobs=None), tokenizer))


def test_missing_settings_say_what_to_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(SETTINGS_ENV, raising=False)
    with pytest.raises(ConfigError, match=f"set {SETTINGS_ENV} to the agent.json"):
        HubAgentExecutor()
    monkeypatch.setenv(SETTINGS_ENV, str(tmp_path / "nowhere.json"))
    with pytest.raises(ConfigError, match="cannot be read"):
        HubAgentExecutor()
    monkeypatch.setenv(SETTINGS_ENV, '{"env": "trail", "urls": ["http://127.0.0.1:1"], "max_tokens": 0}')
    with pytest.raises(ConfigError, match=r"(?s)not valid agent settings.*max_tokens: Input should be greater"):
        HubAgentExecutor()


def test_a_rollout_share_that_mostly_failed_is_said_once_in_the_log(
    tokenizer: Any, trail_url: str, engine_class: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Every engine call fails: each episode ends agent_error; after a rollout's share (2 here) the log says so."""
    agent = HubAgentExecutor(AgentSettings(env="trail", urls=[trail_url], max_tokens=PER_TURN, episodes_per_step=2))
    engine = engine_class(tokenizer, seed=4, fail_calls=list(range(10)))
    prompts = [row["input"] for row in prompt_rows("trail", "train", [1, 2, 3], 1)]
    with caplog.at_level("WARNING", logger="agenthub.openrlhf"):
        asyncio.run(play(agent, engine, prompts, vllm_sampling_params(logprobs=1), tokenizer))
    said = [r.getMessage() for r in caplog.records if r.name == "agenthub.openrlhf"]
    assert len(said) == 1 and said[0].startswith("warning: step 1: 2 of 2 episodes ended truncated or failed")
    assert "2 the policy failed (agent_error)" in said[0]


def test_the_turn_limit_follows_the_rollouts_this_actor_played(
    tmp_path: Path, tokenizer: Any, trail_url: str, engine_class: Any
) -> None:
    """ScalingInter-RL without a step from OpenRLHF: 2 episodes per rollout, 1 turn in rollout 1, then 3."""
    horizon = {"kind": "stepwise", "rounds": [1, 3], "every": 1}
    settings = AgentSettings(
        env="trail", urls=[trail_url], max_tokens=PER_TURN, store=str(tmp_path), episodes_per_step=2, horizon=horizon
    )
    agent = HubAgentExecutor(settings)
    engine = engine_class(tokenizer, seed=5)
    prompts = [row["input"] for row in prompt_rows("trail", "train", [1, 2, 3, 4], None)]
    responses = asyncio.run(play(agent, engine, prompts, vllm_sampling_params(logprobs=1), tokenizer))
    episodes = stored(tmp_path)
    assert [e.task.max_turns for e in episodes] == [1, 1, 3, 3]
    for response, episode in zip(responses, episodes, strict=True):
        assert 1 <= len(response["action_ranges"]) == len(episode.turns) <= (episode.task.max_turns or 0)
