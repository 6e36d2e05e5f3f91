"""What the trainers that launch a framework (areal, verl, openrlhf, swift) share from ``agenthub.training``:
``run``'s order, a dry run's head, the settings handed on to the workers, ``backend=ray``'s env servers, the
step of an episode counted from the episodes started, the one trained seat, the default policy."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ConfigDict, Field, ValidationError

from agenthub import ConfigError, get_plugin_host
from agenthub.config import MultiPlayerConfig, RolloutBackendConfig
from agenthub.training import (
    DEFAULT_POLICY,
    EpisodeSteps,
    FrameworkMissing,
    FrameworkNeeds,
    FrameworkTrainer,
    LaunchReport,
    one_trained_seat,
    policy_field,
    print_dry_run_head,
    ray_env_servers,
    worker_settings,
)


class TrainerConfig(RolloutBackendConfig, MultiPlayerConfig):
    model_config = ConfigDict(extra="forbid")

    env: str = "guess"
    model: str = policy_field("the framework loads it")
    token: str | None = None
    processes: int = 1
    max_attempts: int = 3
    only_here: int = 7
    runs_dir: str = "runs"
    run_id: str | None = None
    resume: str | None = None


class WorkerSettings(MultiPlayerConfig):
    env: str
    urls: list[str]
    token: str | None = None
    max_attempts: int = Field(default=1, ge=1)
    store: str


def test_worker_settings_carry_the_same_named_settings_and_take_what_the_run_decides() -> None:
    config = TrainerConfig(seat=1, opponent="random", token="t", max_attempts=5)
    settings = worker_settings(config, WorkerSettings, urls=["http://a"], store="/runs/r")
    assert settings.model_dump() == {
        "seat": 1,
        "opponent": "random",
        "opponent_kwargs": {},
        "env": "guess",
        "urls": ["http://a"],
        "token": "t",
        "max_attempts": 5,
        "store": "/runs/r",
    }
    assert worker_settings(config, WorkerSettings, urls=[], store="s", token="servers'").token == "servers'"
    with pytest.raises(ValidationError, match="store"):  # a field the run must decide, forgotten
        worker_settings(config, WorkerSettings, urls=[])


def test_episode_steps_count_episodes_per_step_and_refuse_zero() -> None:
    steps = EpisodeSteps(3)
    assert [steps.next_episode() for _ in range(7)] == [0, 0, 0, 1, 1, 1, 2]
    with pytest.raises(ValueError, match="episodes_per_step=0 must be at least 1"):
        EpisodeSteps(0)


def test_a_dry_run_head_is_yaml_without_secrets_then_what_becomes_of_the_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    print_dry_run_head(TrainerConfig(token="s3cret"), tmp_path / "new")
    out = capsys.readouterr().out
    assert "s3cret" not in out
    assert yaml.safe_load(out)["model"] == DEFAULT_POLICY  # the comment line keeps it YAML
    assert out.endswith(f"# run directory {tmp_path / 'new'}: a new id each run (run_id= fixes it)\n")

    print_dry_run_head(TrainerConfig(run_id="fixed"), tmp_path / "fixed")
    assert "# run directory" not in capsys.readouterr().out

    resumed = TrainerConfig(resume=str(tmp_path / "old"))
    print_dry_run_head(resumed, tmp_path / "old", resuming=" from its last checkpoint")
    assert capsys.readouterr().out.endswith(f"# would resume {tmp_path / 'old'} from its last checkpoint\n")
    print_dry_run_head(resumed, tmp_path / "old")  # a trainer with nothing to say of resuming
    assert "# " not in capsys.readouterr().out


def test_one_trained_seat_checks_the_seats_without_building_the_opponent() -> None:
    tictactoe = get_plugin_host().env("tictactoe").info()
    seated = one_trained_seat(MultiPlayerConfig(seat=1, opponent="random"), tictactoe, "verl")
    assert seated.seats == frozenset({1}) and seated.opponents == {}
    with pytest.raises(ConfigError, match=r"seat=\[0, 1\] .* verl takes one trajectory per prompt"):
        one_trained_seat(MultiPlayerConfig(seat=[0, 1]), tictactoe, "verl")


def test_without_backend_ray_the_workers_start_their_own_env_servers() -> None:
    with ray_env_servers(TrainerConfig(), max_sessions=4) as servers:
        assert servers is None


def test_the_default_policy_is_named_in_the_model_setting() -> None:
    field = TrainerConfig.model_fields["model"]
    assert field.default == DEFAULT_POLICY
    assert (
        field.description
        == f"the policy: a model directory or hub id (the framework loads it); default: {DEFAULT_POLICY}"
    )


class Recorded:
    """A framework trainer's parts, recording what was called in which order."""

    def __init__(self, needs: FrameworkNeeds, misfit: bool = False) -> None:
        self.calls: list[str] = []
        self.needs = needs
        self.misfit = misfit

    def trainer(self) -> FrameworkTrainer[TrainerConfig]:
        return FrameworkTrainer(
            TrainerConfig,
            self.framework_needs,
            self.launch_checks,
            self.print_dry_run,
            self.launch,
            refuse_misfits=self.refuse_misfits,
        )

    def framework_needs(self, settings: TrainerConfig) -> FrameworkNeeds:
        self.calls.append("needs")
        return self.needs

    def launch_checks(self, settings: TrainerConfig, *, dry_run: bool) -> LaunchReport:
        self.calls.append(f"checks(dry_run={dry_run})")
        return LaunchReport(env=settings.env, task_id=1, prompt_tokens=10, prompt_task=1, findings=[])

    def print_dry_run(self, settings: TrainerConfig) -> int:
        self.calls.append("dry run")
        return 0

    def launch(self, settings: TrainerConfig) -> int:
        self.calls.append(f"launch {settings.env}")
        return 3

    def refuse_misfits(self, settings: TrainerConfig) -> None:
        self.calls.append("misfits")
        if self.misfit:
            raise ConfigError("env 'guess' has no seat 1")


NEEDS_NOTHING = FrameworkNeeds(trainer="test", framework="test")


@pytest.mark.parametrize(
    ("dry_run", "calls", "code"),
    [
        (True, ["misfits", "dry run"], 0),
        (False, ["misfits", "needs", "checks(dry_run=False)", "launch guess"], 3),
    ],
)
def test_a_framework_trainer_checks_before_it_launches(
    dry_run: bool, calls: list[str], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = Recorded(NEEDS_NOTHING)
    assert parts.trainer().run({"env": "guess"}, dry_run=dry_run) == code
    assert parts.calls == calls


def test_a_framework_trainer_refuses_before_anything_starts() -> None:
    parts = Recorded(NEEDS_NOTHING, misfit=True)
    with pytest.raises(ConfigError, match="no seat 1"):
        parts.trainer().run({"env": "guess"}, dry_run=True)
    with pytest.raises(ConfigError, match="nope"):  # settings are validated first
        parts.trainer().run({"env": "guess", "nope": 1})
    missing = Recorded(FrameworkNeeds(trainer="test", framework="nothing", modules={"agenthub_no_such_module": "x"}))
    with pytest.raises(FrameworkMissing, match="agenthub_no_such_module"):
        missing.trainer().run({})
    assert missing.calls == ["misfits", "needs"]  # neither the launch checks nor the launch
