"""What the checks before launch report: the trainer's token limits, the findings, and the refusal.

Shared by the single-player checks (:mod:`launch_single`) and the seat checks
(:mod:`launch_seats`); :func:`agenthub.training.check_launch` fills a
:class:`LaunchReport` and the trainer decides when to refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agenthub.errors import ConfigError
from agenthub.types import TaskId


def from_scratch_note() -> str:
    """What a model trained from scratch learns on a CPU, from every installed env's ``EnvSpec.cpu_recipe``."""
    from agenthub.plugins import get_plugin_host  # the plugin host loads every plugin: only when refusing

    specs = sorted(get_plugin_host().envs, key=lambda spec: spec.name)
    recipes = [f"{spec.name}: {spec.cpu_recipe}" for spec in specs if spec.cpu_recipe]
    if not recipes:
        return (
            "No installed env has a measured CPU recipe for a model trained from scratch: "
            "train a pretrained model (model=)."
        )
    return (
        "What a model trained from scratch learns on a CPU, as measured: "
        + "; ".join(recipes)
        + ". For other envs (30 steps of each measured in docs/benchmarks.md), train a pretrained model (model=)."
    )


"""Said with a refusal for context: an env whose prompts need a large context is beyond the built-in tiny model."""


class LaunchRefused(ConfigError):
    """The run would not train: each problem names the setting to change."""

    def __init__(self, report: LaunchReport) -> None:
        self.report = report
        super().__init__(report.refusal())


@dataclass(frozen=True)
class TokenLimits:
    """A trainer's token limits and the names its users set them by.

    ``max_context`` bounds prompt plus every turn (TRL, the hub's executor);
    ``max_prompt``/``max_response`` are a split budget (verl's
    ``data.max_prompt_length`` and ``data.max_response_length``). Leave out
    what the trainer does not have. ``horizon_key`` names the setting that caps
    an episode's turns.
    """

    max_tokens: int
    max_context: int | None = None
    max_prompt: int | None = None
    max_response: int | None = None
    max_tokens_key: str = "max_tokens"
    max_context_key: str = "max_context"
    max_prompt_key: str = "prompt_length"
    max_response_key: str = "response_length"
    horizon_key: str = "horizon"
    model_positions: int | None = None
    """The most positions the model reads (its config's ``max_position_embeddings``), when known: the checks
    never advise a ``max_context`` past it, since the model could not be run with it."""


@dataclass(frozen=True)
class Finding:
    """One thing the checks found: the setting it concerns, what was measured and what to do."""

    key: str
    message: str
    refuse: bool


@dataclass
class LaunchReport:
    """What the checks measured on the split, and what they found."""

    env: str
    task_id: TaskId | None = None
    played_with: str | None = None
    prompt_tokens: int | None = None
    prompt_task: TaskId | None = None
    prompts_measured: int | None = None
    """First prompts measured: the whole split, or as many tasks spread evenly over it."""
    action_tokens: int | None = None
    longest_action: str | None = None
    action_task: TaskId | None = None
    """The task whose oracle said the longest action: the one played again with every action cut."""
    episode_tokens: int | None = None
    episode_task: TaskId | None = None
    """The task of the oracle's episode that needs the most context (``episode_tokens``, ``oracle_turns``)."""
    oracle_turns: int | None = None
    oracle_outcome: str | None = None
    cut_outcome: str | None = None
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None
    multi_player: bool = False
    """The env has seats: the oracle played every seat, and ``oracle_turns`` counts the game's steps."""
    advice: dict[str, int] = field(default_factory=dict)
    """The settings, by their users' names, that pass every refusal here together (empty when none refused)."""
    context_refused: bool = False
    """A context limit was refused: the env's prompts or episodes are long for the model's context."""

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.refuse]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if not f.refuse]

    def refusal(self) -> str:
        lines = [f"refused before launch ({self._where()}):"]
        lines += [f"  - {f.key}: {f.message}" for f in self.problems]
        if self.advice:
            together = " ".join(f"{key}={value}" for key, value in self.advice.items())
            lines.append(f"Settings with which the oracle's measured episodes fit: {together}.")
        if self.context_refused:
            lines.append(from_scratch_note())
        lines.append("Change the settings named above and run again (--dry-run repeats these checks).")
        return "\n".join(lines)

    def summary(self) -> str:
        """One line for the console: what was measured, or why nothing was."""
        if self.skipped:
            return f"checks before launch: not run ({self.skipped})"
        verdict = "refused" if self.problems else "passed"
        over = f" of {self.prompts_measured} tasks" if self.prompts_measured else ""
        measured = [f"longest first prompt{over} {self.prompt_tokens} tokens (task {self.prompt_task})"]
        if self.action_tokens is not None:
            measured.append(f"longest action {self.action_tokens} tokens")
        if self.episode_tokens is not None:
            episode = "a seat's side of a finished game" if self.multi_player else "the longest winning episode"
            measured.append(f"{episode} {self.episode_tokens} tokens in {self.oracle_turns} turns")
        return f"checks before launch {verdict} ({self._where()}: {', '.join(measured)})"

    def _where(self) -> str:
        played = f", played with {self.played_with}" if self.played_with else ""
        return f"env {self.env!r}, task {self.task_id}{played}"

    def raise_if_refused(self) -> None:
        if self.problems:
            raise LaunchRefused(self)
