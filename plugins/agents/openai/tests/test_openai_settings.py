"""Settings: validated at construction, errors that name the key, and the API key kept out of everything."""

from __future__ import annotations

import json

import pytest
from agenthub import ConfigError, get_plugin_host
from agenthub.config import parse_overrides

from agenthub_agent_openai import OpenAIAgent, OpenAISettings

SECRET = "sk-test-0123456789abcdef"


def test_the_plugin_registers_agent_openai_and_make_builds_it_from_key_value_settings() -> None:
    spec = get_plugin_host().agent("openai")
    overrides = parse_overrides(
        ["model=Qwen/Qwen2.5-7B-Instruct", "temperature=0.7", 'stop=["Observation:"]', "extra_body={top_k: 20}"]
    )
    agent = spec.make(**overrides)
    assert isinstance(agent, OpenAIAgent)
    settings = agent.settings
    assert settings.model == "Qwen/Qwen2.5-7B-Instruct" and settings.temperature == 0.7
    assert settings.stop == ["Observation:"] and settings.extra_body == {"top_k": 20}
    assert settings.sampling() == {"temperature": 0.7, "stop": ["Observation:"]}


def test_a_misspelt_setting_is_named_with_a_suggestion_and_the_valid_keys() -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAIAgent(temprature=0.5)
    message = str(caught.value)
    assert "unknown setting 'temprature'" in message and "did you mean 'temperature'?" in message
    assert "max_concurrency" in message  # the valid keys are listed


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("temperature", -1, "temperature: Input should be greater than or equal to 0 (got -1)"),
        ("top_p", 1.5, "top_p: Input should be less than or equal to 1"),
        ("max_concurrency", 0, "max_concurrency: Input should be greater than or equal to 1"),
        ("action_format", "json", "action_format: Input should be 'auto', 'tool_call', 'react' or 'raw'"),
        ("base_url", "localhost:8000/v1", "base_url: must start with http:// or https://"),
        ("max_history_turns", 0, "max_history_turns: Input should be greater than or equal to 1"),
    ],
    ids=["temperature", "top_p", "max_concurrency", "action_format", "base_url", "max_history_turns"],
)
def test_a_bad_value_names_the_setting_and_what_was_given(setting: str, value: object, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAIAgent(**{setting: value})
    assert expected in str(caught.value)


def test_a_key_passed_as_api_key_env_is_refused_without_being_echoed() -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAIAgent(api_key_env=SECRET)
    assert "NAME of an environment variable" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_a_key_in_extra_headers_is_refused_without_being_echoed() -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAIAgent(extra_headers={"Authorization": f"Bearer {SECRET}"})
    assert "api_key_env" in str(caught.value) and SECRET not in str(caught.value)


def test_a_named_key_variable_that_is_unset_fails_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTHUB_TEST_MISSING_KEY", raising=False)
    with pytest.raises(ConfigError, match="export AGENTHUB_TEST_MISSING_KEY=<your key>"):
        OpenAIAgent(api_key_env="AGENTHUB_TEST_MISSING_KEY")


def test_a_key_that_could_pass_for_a_variable_name_is_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("hf_abcdefghijklmnop1234", raising=False)
    with pytest.raises(ConfigError) as caught:
        OpenAIAgent(api_key_env="hf_abcdefghijklmnop1234")
    assert "not set or empty; export NAME=<your key>" in str(caught.value)
    assert "hf_abcdefghijklmnop1234" not in str(caught.value)


def test_the_default_key_variable_may_be_unset_for_local_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert OpenAIAgent().client._headers().get("Authorization") is None


def test_the_key_never_appears_in_provenance_or_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTHUB_TEST_KEY", SECRET)
    agent = OpenAIAgent(api_key_env="AGENTHUB_TEST_KEY", extra_headers={"X-Team": "rl"}, model="m")
    described = json.dumps(agent.describe())
    assert SECRET not in described and SECRET not in repr(agent) and SECRET not in repr(agent.client)
    assert agent.describe()["openai"]["api_key_env"] == "AGENTHUB_TEST_KEY"
    assert agent.describe()["openai"]["extra_headers"] == ["X-Team"]  # names only: values may be secret
    assert agent.client._headers()["Authorization"] == f"Bearer {SECRET}"


def test_a_custom_key_header_carries_the_bare_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTHUB_TEST_KEY", SECRET)
    agent = OpenAIAgent(api_key_env="AGENTHUB_TEST_KEY", api_key_header="api-key")
    headers = agent.client._headers()
    assert headers["api-key"] == SECRET and "Authorization" not in headers


def test_base_url_is_normalised_to_the_api_root() -> None:
    assert OpenAISettings(base_url="http://h:8000/v1/").base_url == "http://h:8000/v1"
    assert OpenAISettings(base_url="http://h:8000/v1/chat/completions").base_url == "http://h:8000/v1"


def test_settings_and_keyword_overrides_combine() -> None:
    agent = OpenAIAgent(OpenAISettings(model="a", temperature=0.2), temperature=0.9)
    assert agent.settings.model == "a" and agent.settings.temperature == 0.9
    assert OpenAISettings(stop="END").stop == ["END"]
