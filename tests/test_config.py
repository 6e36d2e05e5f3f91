from __future__ import annotations

from pathlib import Path

import pytest

from agenthub.config import build_config, parse_overrides
from agenthub.errors import ConfigError
from agenthub.service.settings import ServiceSettings


def test_overrides_parse_yaml_values_and_dotted_keys() -> None:
    parsed = parse_overrides(["port=8001", "rounds=[10, 20, 30]", "env_kwargs.high=32", "name=guess", "flag=true"])
    assert parsed == {"port": 8001, "rounds": [10, 20, 30], "env_kwargs": {"high": 32}, "name": "guess", "flag": True}


def test_override_without_equals_says_how() -> None:
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_overrides(["port"])


def test_misspelt_key_gets_a_suggestion() -> None:
    with pytest.raises(ConfigError, match="unknown key 'prot'; did you mean 'port'"):
        build_config(ServiceSettings, ["prot=8000"])


def test_wrong_type_names_the_key() -> None:
    with pytest.raises(ConfigError, match="max_sessions"):
        build_config(ServiceSettings, ["max_sessions=lots"])


def test_file_then_overrides(tmp_path: Path) -> None:
    config_file = tmp_path / "serve.yaml"
    config_file.write_text("port: 9000\nmax_sessions: 4\n")
    settings = build_config(ServiceSettings, ["max_sessions=8"], config_file=config_file)
    assert (settings.port, settings.max_sessions) == (9000, 8)


def test_missing_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        build_config(ServiceSettings, config_file=tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        build_config(ServiceSettings, config_file=bad)
