"""``env=reasoning_gym:NAME``: any of reasoning-gym's procedural generators served as an agenthub env.

The task id is an index into one dataset, ``reasoning_gym.create_dataset(NAME, seed=SEED,
size=...)``, built once per env with ``env_kwargs.seed`` (default 0). reasoning-gym derives
item ``i`` from ``Random(seed + i)``, so an index is as reproducible as a seed, and building
the dataset once keeps generators whose constructor loads word lists or tables cheap per
episode. The observation is the generator's question; the reward is its own
``dataset.score_answer(answer, entry)`` (0.0 to 1.0), and a score of 1.0 wins.

An episode is one answer by default. ``env_kwargs.attempts=N`` allows N answers: after
one that scores below 1.0 the env says the score and how many attempts are left. Other
``env_kwargs`` (``config.KEY=VALUE``) go to the generator's config (difficulty, sizes).
A reply's answer is the text inside its last ``<answer>...</answer>``, or the whole reply.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Mapping
from typing import Any

from agenthub.errors import AgenthubError, ConfigError
from agenthub.protocols import StepTuple
from agenthub.specs import AgentSpec, EnvSpec
from agenthub.types import Action, AgentReply, EnvInfo, Observation, Task, TaskId, TaskSplit

PREFIX = "reasoning_gym:"
SPLITS = {"train": TaskSplit.range(0, 100_000), "test": TaskSplit.range(100_000, 101_000)}
DATASET_SIZE = 101_000
"""Covers every split; reasoning-gym's datasets are virtual, so the size costs nothing."""
ORACLE = "reasoning-gym-oracle"
INSTALL_HINT = "pip install 'agenthub[reasoning-gym]' (reasoning-gym 0.1.25)"


def _reasoning_gym() -> Any:
    try:
        return importlib.import_module("reasoning_gym")
    except ImportError as exc:
        raise ConfigError(f"env=reasoning_gym:NAME needs reasoning-gym ({exc}); {INSTALL_HINT}") from None


def generator_names() -> list[str]:
    """Every generator reasoning-gym registers (importing it takes seconds)."""
    return sorted(_reasoning_gym().factory.DATASETS)


def make_dataset(name: str, seed: int = 0, config: Mapping[str, Any] | None = None) -> Any:
    """reasoning-gym's dataset ``name``, explained when the name or a config key is wrong."""
    rg = _reasoning_gym()
    if name not in rg.factory.DATASETS:
        raise ConfigError(
            f"reasoning-gym has no generator {name!r}; choose one of: {', '.join(generator_names())}"
        ) from None
    try:
        return rg.create_dataset(name, seed=seed, size=DATASET_SIZE, **dict(config or {}))
    except (TypeError, ValueError, AssertionError) as exc:
        raise ConfigError(
            f"reasoning_gym:{name} rejected its config {dict(config or {})} ({type(exc).__name__}: {exc}); "
            f"set env_kwargs.config.KEY only for fields of its config class"
        ) from None


def extract_answer(reply: str) -> str:
    """The text in the reply's last ``<answer>`` tags, else the whole reply, stripped."""
    from reasoning_gym.utils import extract_answer as tagged

    found = tagged(reply)
    return (found if found is not None else reply).strip()


class ReasoningGymEnv:
    """One reasoning-gym generator behind the agenthub ``Environment`` protocol."""

    def __init__(self, name: str, *, seed: int = 0, attempts: int = 1, config: Mapping[str, Any] | None = None):
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ConfigError(f"reasoning_gym:{name}: attempts must be an integer >= 1, got {attempts!r}")
        self.name = name
        self.attempts = attempts
        self.dataset = make_dataset(name, seed, config)
        self._entry: dict[str, Any] | None = None
        self._left = 0

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        index = task_id if task_id is not None else seed
        if index is None:
            index = 0
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < DATASET_SIZE:
            raise ValueError(
                f"reasoning_gym:{self.name} task ids are integers from 0 to {DATASET_SIZE - 1} (an index into "
                f"the generator's seeded dataset), got {index!r}"
            )
        self._entry = self.dataset[index]
        self._left = self.attempts
        return str(self._entry["question"]), {"attempts_left": self._left}

    def step(self, action: Action) -> StepTuple:
        if self._entry is None or self._left == 0:
            return "The episode is over. Reset to play again.", 0.0, True, False, {"attempts_left": 0}
        reply = action if isinstance(action, str) else ""
        score = float(self.dataset.score_answer(extract_answer(reply), self._entry))
        self._left -= 1
        won = score >= 1.0
        if won or self._left == 0:
            self._left = 0
            text = "Correct." if won else f"Your answer scored {score:.2f} out of 1. No attempts are left."
            return text, score, True, False, {"score": score, "won": won, "attempts_left": 0}
        plural = "s" if self._left > 1 else ""
        text = f"Your answer scored {score:.2f} out of 1. Try again: {self._left} attempt{plural} left."
        return text, 0.0, False, False, {"score": score, "attempts_left": self._left}

    def close(self) -> None:
        self._entry = None


def reasoning_gym_env_spec(name: str) -> EnvSpec:
    """The EnvSpec for ``reasoning_gym:NAME`` (``name`` with or without the prefix)."""
    generator = name.removeprefix(PREFIX)
    make_dataset(generator)  # fail here, with the list of names, rather than at the first session
    return EnvSpec(
        name=PREFIX + generator,
        factory=lambda **kwargs: ReasoningGymEnv(generator, **kwargs),
        splits=SPLITS,
        # one answer, or as many as env_kwargs.attempts allows; the episode ends by itself
        default_max_turns=100,
        description=f"reasoning-gym's {generator} generator; reward: its own scorer",
        version=f"reasoning-gym-{importlib.metadata.version('reasoning-gym')}",
        oracle=ORACLE,
        instructions=(
            "Solve the problem. Reply with your final answer inside <answer></answer> tags, in the format "
            "the problem asks for; if you are told your answer was wrong, try again."
        ),
    )


class ReasoningGymOracleEpisode:
    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def act(self, observation: Observation) -> AgentReply:
        action = f"<answer>{self.answer}</answer>"
        return AgentReply(action=action, text=action)


class ReasoningGymOracle:
    """Answers with the generator's own reference answer, rebuilt from the task id.

    It rebuilds the dataset the env serves, so give it the env's ``seed`` and ``config``
    if they are not the defaults.
    """

    def __init__(self, seed: int = 0, config: Mapping[str, Any] | None = None) -> None:
        self.seed = seed
        self.config = dict(config or {})
        self._datasets: dict[str, Any] = {}

    def start_episode(self, task: Task, env: EnvInfo) -> ReasoningGymOracleEpisode:
        if not env.name.startswith(PREFIX):
            raise AgenthubError(f"the reasoning-gym oracle only plays reasoning_gym:NAME envs, not {env.name!r}")
        generator = env.name.removeprefix(PREFIX)
        if generator not in self._datasets:
            self._datasets[generator] = make_dataset(generator, self.seed, self.config)
        index = task.task_id if task.task_id is not None else task.seed
        if not isinstance(index, int):
            raise AgenthubError(f"the reasoning-gym oracle needs an integer task id, got {index!r}")
        return ReasoningGymOracleEpisode(str(self._datasets[generator][index]["answer"]))


ORACLE_SPEC = AgentSpec(
    name=ORACLE,
    factory=ReasoningGymOracle,
    description="Answers reasoning_gym:NAME tasks with the generator's reference answer.",
)
