"""No secret on disk or in logs: a run's config.yaml, run.json and metrics keep tokens and keys redacted, its
messages never echo them, and a resumed run is given them again (the token also from $AGENTHUB_TOKEN)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from agenthub.cli.main import main
from agenthub.cli.run_command import resolve_run_config
from agenthub.config import REDACTED, build_config, fill_secrets, is_secret_name, redact_secrets, redacted_keys
from agenthub.errors import ConfigError
from agenthub.redaction import scrub, secret_values
from agenthub.rollout.store import RunStore
from agenthub.service.launcher import LocalServer

SECRET = "tok-9f8e7d6c5b4a-never-on-disk"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("token", True),
        ("api_key", True),
        ("hf_token", True),
        ("X-Api-Key", True),
        ("clientSecret", True),
        ("db_password", True),
        ("Authorization", True),
        ("stop_token", False),  # a piece of vocabulary, not a credential
        ("tokenizer", False),
        ("max_tokens", False),
        ("api_key_env", False),  # the name of the variable that holds the key
        ("api_key_header", False),
        ("monkey", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_redaction_reaches_every_depth_and_leaves_the_rest() -> None:
    config = {
        "env": "guess",
        "token": SECRET,
        "max_tokens": 512,
        "agent_kwargs": {"tokenizer": "gpt2", "extra_headers": {"X-Api-Key": "hk"}, "api_key": None},
        "credentials": {"user": "ann", "hosts": ["a", "b"]},
    }
    redacted = redact_secrets(config)
    assert redacted == {
        "env": "guess",
        "token": REDACTED,
        "max_tokens": 512,
        "agent_kwargs": {"tokenizer": "gpt2", "extra_headers": {"X-Api-Key": REDACTED}, "api_key": None},
        "credentials": {"user": REDACTED, "hosts": [REDACTED, REDACTED]},
    }
    assert config["token"] == SECRET  # a copy: the caller's settings still work
    assert redacted_keys(redacted) == [
        "token",
        "agent_kwargs.extra_headers.X-Api-Key",
        "credentials.user",
        "credentials.hosts[0]",
        "credentials.hosts[1]",
    ]
    assert secret_values(config) == {SECRET, "hk", "ann", "a", "b"}
    assert scrub(f"401 from server with {SECRET}", {SECRET}) == f"401 from server with {REDACTED}"


def test_a_validation_error_never_echoes_a_secret() -> None:
    class Settings(BaseModel):
        api_key: int
        options: dict[str, int]

    with pytest.raises(ConfigError) as refused:
        build_config(Settings, [f"api_key={SECRET}", f"options.password={SECRET}"])
    assert SECRET not in str(refused.value) and "api_key" in str(refused.value)


def test_fill_secrets_takes_them_again_or_says_which_to_give(monkeypatch: pytest.MonkeyPatch) -> None:
    stored = {"env": "guess", "token": REDACTED, "agent_kwargs": {"api_key": REDACTED}}
    monkeypatch.delenv("AGENTHUB_TOKEN", raising=False)
    with pytest.raises(ConfigError) as refused:
        fill_secrets(stored, run_dir="runs/r", command="agenthub eval")
    message = str(refused.value)
    assert "token, agent_kwargs.api_key" in message and "--resume runs/r token=... agent_kwargs.api_key=..." in message
    assert "$AGENTHUB_TOKEN" in message
    monkeypatch.setenv("AGENTHUB_TOKEN", SECRET)
    given = {**stored, "agent_kwargs": {"api_key": "k2"}}
    assert fill_secrets(given, run_dir="runs/r", command="agenthub eval")["token"] == SECRET


def test_run_resume_needs_the_token_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = RunStore.create({"trainer": "trl", "env": "guess", "token": SECRET}, root=tmp_path, run_id="r")
    assert store.config()["token"] == REDACTED
    monkeypatch.delenv("AGENTHUB_TOKEN", raising=False)
    with pytest.raises(ConfigError, match=r"agenthub run --resume .* token=\.\.\."):
        resolve_run_config([], config_file=None, resume=str(store.path))
    assert resolve_run_config([f"token={SECRET}"], config_file=None, resume=str(store.path))["token"] == SECRET
    # a secret given again (or a new one) is no change to the stored config
    RunStore.resume(store.path, {"trainer": "trl", "env": "guess", "token": "another"})
    with pytest.raises(ConfigError, match="env: 'guess' -> 'maze'"):
        RunStore.resume(store.path, {"trainer": "trl", "env": "maze", "token": SECRET})


@pytest.fixture
def served() -> Iterator[str]:
    """A real `agenthub serve env=guess` that refuses every request without the token."""
    with LocalServer("guess", overrides={"token": SECRET}) as server:
        yield server.url


def hits(run_dir: Path) -> list[str]:
    """Every file under the run directory that holds the secret."""
    return [str(p) for p in run_dir.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


def test_an_eval_with_a_token_stores_and_prints_no_token_and_resumes_with_it_given_again(
    served: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.delenv("AGENTHUB_TOKEN", raising=False)
    runs = tmp_path / "runs"
    args = ["eval", "env=guess", f"url={served}", f"token={SECRET}", "n=3", f"runs_dir={runs}", "run_id=r"]
    assert main(args) == 0
    run_dir = runs / "r"
    assert {"config.yaml", "run.json", "trajectories.jsonl", "eval.json"} <= {p.name for p in run_dir.iterdir()}
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["token"] == REDACTED
    assert hits(run_dir) == []

    # resumed: refused without the token, saying how to give it; then with it, and from $AGENTHUB_TOKEN
    assert main(["eval", "--resume", str(run_dir)]) == 2
    refused = capsys.readouterr().err
    assert f"agenthub eval --resume {run_dir} token=..." in refused and "$AGENTHUB_TOKEN" in refused
    assert main(["eval", "--resume", str(run_dir), f"token={SECRET}"]) == 0
    monkeypatch.setenv("AGENTHUB_TOKEN", SECRET)
    assert main(["eval", "--resume", str(run_dir)]) == 0

    assert hits(run_dir) == []
    printed = capsys.readouterr()
    assert SECRET not in printed.out + printed.err + caplog.text
    assert "run saved in" in printed.out  # the captured output is the real one


def test_a_file_that_must_hold_a_secret_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    from agenthub.config import write_private_text

    path = tmp_path / "settings.json"
    path.write_text("old")
    path.chmod(0o644)  # an existing file is narrowed too
    write_private_text(path, '{"token": "s3cret"}')
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.read_text() == '{"token": "s3cret"}'
    fresh = tmp_path / "fresh.yaml"
    write_private_text(fresh, "token: s3cret\n")
    assert fresh.stat().st_mode & 0o777 == 0o600
