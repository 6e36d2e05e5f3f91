"""``env=reasoning_gym:NAME``: any of reasoning-gym's procedural generators served as an agenthub env.

The task id is an index into one dataset, ``reasoning_gym.create_dataset(NAME, seed=SEED,
size=SIZE)``, built once per env with ``env_kwargs.seed`` (default 0) and ``env_kwargs.size``
(default: 101,000, or the most the generator's own config validation accepts, e.g. 20,000 for
``word_ladder``, or 2,000 for ``acre``, which builds every item up front: ``EAGER_SIZES``).
reasoning-gym derives item ``i`` from ``Random(seed + i)``, so an index is as reproducible as a
seed, and building the dataset once keeps generators whose constructor loads word lists or tables
cheap per episode. The splits cover the default size: ``test`` is its last
1,000 ids (a tenth of a smaller dataset), ``train`` the rest. The observation is the generator's
question; the reward is its own ``dataset.score_answer(answer, entry)`` (0.0 to 1.0), and a score
of 1.0 wins.

An episode is one answer by default. ``env_kwargs.attempts=N`` allows N answers: after
one that scores below 1.0 the env says the score and how many attempts are left. Other
``env_kwargs`` (``config.KEY=VALUE``) go to the generator's config (difficulty, sizes).
A reply's answer is the text inside its last ``<answer>...</answer>``, or the whole reply,
found in one linear scan (reasoning-gym's own regex is quadratic on a reply full of ``<answer>``).

A generator that cannot serve here is refused when it is looked up, in one line that says why
(``NOT_SERVED``, ``DEFECTS``); a task whose item the generator fails to build is refused at reset
(HTTP 422); an answer that the generator's scorer raises on scores 0 (``info["unscored"]`` says why).
Python's global ``random`` is seeded per item around every call into the generator, as some draw
from it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.metadata
import random
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from agenthub.errors import AgenthubError, ConfigError, PluginError
from agenthub.protocols import StepTuple
from agenthub.specs import AgentSpec, EnvSpec
from agenthub.types import Action, AgentReply, EnvInfo, Observation, Task, TaskId, TaskSplit

PREFIX = "reasoning_gym:"
DEFAULT_SIZE = 101_000
"""Items asked of a generator that sets no lower limit; reasoning-gym's datasets are virtual, so it costs nothing."""
TEST_SIZE = 1_000
"""The ``test`` split: the last 1,000 ids (a tenth of a dataset smaller than 10,000)."""
MAX_ACTION_CHARS = 65_536
"""Longest reply the server passes to the env (``EnvSpec.max_action_chars``): a reasoning model's whole
reply, about 16,000 tokens, of which the env reads the answer in time linear in it."""
ANSWER_SLACK = 4
MIN_ANSWER_CHARS = 256
"""An answer goes to the generator's scorer (third-party code, some of it quadratic: sympy's parser in
``intermediate_integration`` takes 3.4 s on 8,192 letters) only if it is at most ``ANSWER_SLACK`` times
the reference answer's length, or ``MIN_ANSWER_CHARS``; a longer one scores 0, as no right answer is
that long."""
ORACLE = "reasoning-gym-oracle"
INSTALL_HINT = "pip install 'agenthub[reasoning-gym]' (reasoning-gym 0.1.25)"
EAGER_SIZES = {"acre": 2_000}
"""Generators that build every item when constructed: they are asked for fewer by default, so that
a server starts in a second or two (acre takes about 0.85 s per 1,000 items); ``env_kwargs.size`` may ask for more."""
DEFECTS: dict[str, dict[str, str]] = {
    "0.1.25": {
        "codeio": (
            "it fails to build about 1 task in 1,000 (task 98,068 of seed 0, which `agenthub check` picks with "
            "seed 456: TypeError: Object of type Integer is not JSON serializable), and it runs "
            "its dataset's code samples in the server process, some of which write files into its working directory"
        ),
    },
}
"""Generators refused by reasoning-gym version, with why: found by ``benchmarks/importer_tables.py``."""
NOT_SERVED = {
    "composite": (
        "it mixes other generators, named in config.datasets as DatasetSpec objects that env_kwargs cannot "
        "express; serve each generator as its own env and mix the envs in training instead"
    ),
}
"""Generators that are no single task source, in any version."""
_GLOBAL_RANDOM = threading.Lock()
"""Held while an item is built or scored with Python's global ``random`` seeded for it."""
_OPEN, _CLOSE = "<answer>", "</answer>"


class GeneratorUnavailableError(PluginError):
    """A reasoning-gym generator that cannot be served here; the message says why."""


def _one_line(text: object, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters: third-party messages can span screens."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _reasoning_gym() -> Any:
    try:
        return importlib.import_module("reasoning_gym")
    except ImportError as exc:
        raise ConfigError(f"env=reasoning_gym:NAME needs reasoning-gym ({exc}); {INSTALL_HINT}") from None


def generator_names() -> list[str]:
    """Every generator reasoning-gym registers (importing it takes seconds)."""
    return sorted(_reasoning_gym().factory.DATASETS)


def _config_class(name: str) -> Any:
    rg = _reasoning_gym()
    if name not in rg.factory.DATASETS:
        raise ConfigError(
            f"reasoning-gym has no generator {name!r}; choose one of: {', '.join(generator_names())}"
        ) from None
    if name in NOT_SERVED:
        raise GeneratorUnavailableError(f"reasoning_gym:{name} is not served: {NOT_SERVED[name]}")
    defect = DEFECTS.get(importlib.metadata.version("reasoning-gym"), {}).get(name)
    if defect is not None:
        raise GeneratorUnavailableError(
            f"reasoning_gym:{name} is not served: in reasoning-gym {importlib.metadata.version('reasoning-gym')} "
            f"{defect}; choose another generator"
        )
    return rg.factory.DATASETS[name][1]


def _validation_error(config_class: Any, size: int, config: Mapping[str, Any]) -> str | None:
    """What the generator's config validation says of ``size`` items with ``config``, or None if it accepts."""
    try:
        candidate = config_class(size=size, seed=0, **config)
        if hasattr(candidate, "validate"):
            candidate.validate()
    except (TypeError, ValueError, AssertionError) as exc:
        return f"{type(exc).__name__}: {_one_line(exc)}"
    return None


def max_size(name: str, config: Mapping[str, Any] | None = None) -> int:
    """The most items, up to ``DEFAULT_SIZE``, that the generator's own config validation accepts with ``config``.

    Found by bisection on the validation alone, which is cheap: ``word_ladder`` refuses more than 20,000.
    Raises ConfigError if the config is refused at any size.
    """
    config_class = _config_class(name)
    config = dict(config or {})
    for key in ("size", "seed"):
        if key in config:
            raise ConfigError(f"reasoning_gym:{name}: set the dataset's {key} with env_kwargs.{key}, not config.{key}")
    if _validation_error(config_class, DEFAULT_SIZE, config) is None:
        return DEFAULT_SIZE
    refusal = _validation_error(config_class, 1, config)
    if refusal is not None:
        fields = (
            ", ".join(f.name for f in dataclasses.fields(config_class))
            if dataclasses.is_dataclass(config_class)
            else "?"
        )
        raise ConfigError(
            f"reasoning_gym:{name} rejected its config {config} ({refusal}); set env_kwargs.config.KEY for the "
            f"fields of its config class ({fields})"
        )
    low, high = 1, DEFAULT_SIZE  # low is accepted, high is not
    while high - low > 1:
        middle = (low + high) // 2
        if _validation_error(config_class, middle, config) is None:
            low = middle
        else:
            high = middle
    return low


def default_size(name: str, config: Mapping[str, Any] | None = None) -> int:
    """The size asked when ``env_kwargs.size`` is not set: ``DEFAULT_SIZE`` or ``EAGER_SIZES``, within ``max_size``."""
    return min(EAGER_SIZES.get(name, DEFAULT_SIZE), max_size(name, config))


def splits(size: int) -> dict[str, TaskSplit]:
    """``test``: the last ``TEST_SIZE`` ids (a tenth of a smaller dataset); ``train``: the rest."""
    test = min(TEST_SIZE, max(1, size // 10))
    return {"train": TaskSplit.range(0, size - test), "test": TaskSplit.range(size - test, size)}


def make_dataset(name: str, seed: int = 0, config: Mapping[str, Any] | None = None, size: int | None = None) -> Any:
    """reasoning-gym's dataset ``name``, explained when the name, the size or a config key is wrong."""
    limit = max_size(name, config)
    if size is None:
        size = min(EAGER_SIZES.get(name, DEFAULT_SIZE), limit)
    elif isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= limit:
        refusal = _validation_error(_config_class(name), size, dict(config or {})) if isinstance(size, int) else None
        because = f"; its config validation says: {refusal}" if refusal else ""
        raise ConfigError(
            f"reasoning_gym:{name} serves from 1 to {limit} items with this config, env_kwargs.size={size!r} "
            f"asks for another number{because}"
        )
    try:
        return _reasoning_gym().create_dataset(name, seed=seed, size=size, **dict(config or {}))
    except (TypeError, ValueError, AssertionError) as exc:
        raise ConfigError(
            f"reasoning_gym:{name} rejected its config {dict(config or {})} ({type(exc).__name__}: {_one_line(exc)}); "
            f"set env_kwargs.config.KEY only for fields of its config class"
        ) from None
    except Exception as exc:  # a generator that cannot even be built here (missing data, a dependency)
        raise GeneratorUnavailableError(
            f"reasoning_gym:{name} could not be built here ({type(exc).__name__}: {_one_line(exc)})"
        ) from None


def item_seed(seed: int, index: int) -> int:
    """The global ``random``'s seed for item ``index`` of the dataset of ``seed``: one per item."""
    return seed * 1_000_003 + index


@contextlib.contextmanager
def seeded_global_random(seed: int) -> Iterator[None]:
    """Python's global ``random`` seeded with ``seed`` inside, as it was outside.

    Some generators draw from the global generator besides their own ``Random(seed + i)``
    (``list_functions`` built a different task 0 one time in 15): seeding it per item makes
    every item and score reproducible, and leaves other users of ``random`` undisturbed.
    """
    with _GLOBAL_RANDOM:
        outside = random.getstate()
        random.seed(seed)
        try:
            yield
        finally:
            random.setstate(outside)


def extract_answer(reply: str) -> str:
    """The text in the reply's last ``<answer>`` tags, else the whole reply, stripped.

    The same answer as ``reasoning_gym.utils.extract_answer`` (the last of its non-overlapping
    leftmost ``<answer>\\s?(.*?)\\s?</answer>`` matches), in one forward scan: each ``find``
    starts where the last one stopped, so no character is read twice.
    """
    found: tuple[int, int] | None = None
    position = 0
    while True:
        start = reply.find(_OPEN, position)
        if start < 0:
            break
        end = reply.find(_CLOSE, start + len(_OPEN))
        if end < 0:
            break
        found = (start + len(_OPEN), end)
        position = end + len(_CLOSE)
    return (reply[found[0] : found[1]] if found is not None else reply).strip()


class ReasoningGymEnv:
    """One reasoning-gym generator behind the agenthub ``Environment`` protocol."""

    def __init__(
        self,
        name: str,
        *,
        seed: int = 0,
        attempts: int = 1,
        size: int | None = None,
        config: Mapping[str, Any] | None = None,
    ):
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ConfigError(f"reasoning_gym:{name}: attempts must be an integer >= 1, got {attempts!r}")
        self.name = name
        self.attempts = attempts
        self.seed = seed
        self.dataset = make_dataset(name, seed, config, size)
        self._index = 0
        self.size = int(self.dataset.size)
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
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < self.size:
            raise ValueError(
                f"reasoning_gym:{self.name} task ids are integers from 0 to {self.size - 1} (an index into "
                f"the generator's seeded dataset of env_kwargs.size items), got {index!r}"
            )
        try:
            with seeded_global_random(item_seed(self.seed, index)):
                self._entry = self.dataset[index]
        except Exception as exc:  # the generator's own defect on this item: refuse the task, not the server
            raise ValueError(
                f"reasoning_gym:{self.name} could not build task {index} ({type(exc).__name__}: {_one_line(exc)}); "
                "choose another task id"
            ) from None
        self._index = index
        self._left = self.attempts
        return str(self._entry["question"]), {"attempts_left": self._left}

    def _score(self, answer: str) -> tuple[float, str | None]:
        """The generator's score of ``answer``, and why it could not score it (then 0.0)."""
        assert self._entry is not None
        limit = max(MIN_ANSWER_CHARS, ANSWER_SLACK * len(str(self._entry["answer"])))
        if len(answer) > limit:
            return 0.0, f"the answer is {len(answer):,} characters long; this task scores answers of up to {limit:,}"
        try:
            with seeded_global_random(item_seed(self.seed, self._index)):
                return float(self.dataset.score_answer(answer, self._entry)), None
        except Exception as exc:  # a scorer that chokes on a malformed answer: the answer is wrong, not the env
            return 0.0, f"{type(exc).__name__}: {_one_line(exc, 120)}"

    def step(self, action: Action) -> StepTuple:
        if self._entry is None or self._left == 0:
            return "The episode is over. Reset to play again.", 0.0, True, False, {"attempts_left": 0}
        reply = action if isinstance(action, str) else ""
        score, unscored = self._score(extract_answer(reply))
        self._left -= 1
        won = score >= 1.0
        said = "Your answer could not be read, so it scored 0" if unscored else f"Your answer scored {score:.2f}"
        extra = {"unscored": unscored} if unscored else {}
        if won or self._left == 0:
            self._left = 0
            text = "Correct." if won else f"{said} out of 1. No attempts are left."
            return text, score, True, False, {"score": score, "won": won, "attempts_left": 0, **extra}
        plural = "s" if self._left > 1 else ""
        text = f"{said} out of 1. Try again: {self._left} attempt{plural} left."
        return text, 0.0, False, False, {"score": score, "attempts_left": self._left, **extra}

    def close(self) -> None:
        self._entry = None


def reasoning_gym_env_spec(name: str) -> EnvSpec:
    """The EnvSpec for ``reasoning_gym:NAME`` (``name`` with or without the prefix).

    Refuses here, in one line, a generator that does not exist or cannot serve (``DEFECTS``), rather
    than at the first session.
    """
    generator = name.removeprefix(PREFIX)
    try:
        size = default_size(generator)
    except GeneratorUnavailableError:
        raise
    except ConfigError:
        if generator not in _reasoning_gym().factory.DATASETS:
            raise
        size = DEFAULT_SIZE  # its default config is refused (composite needs datasets): env_kwargs.config decides
    return EnvSpec(
        name=PREFIX + generator,
        factory=lambda **kwargs: ReasoningGymEnv(generator, **kwargs),
        splits=splits(size),
        # one answer, or as many as env_kwargs.attempts allows; the episode ends by itself
        default_max_turns=100,
        description=f"reasoning-gym's {generator} generator; reward: its own scorer",
        version=f"reasoning-gym-{importlib.metadata.version('reasoning-gym')}",
        oracle=ORACLE,
        max_action_chars=MAX_ACTION_CHARS,
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

    It rebuilds the dataset the env serves, so give it the env's ``seed``, ``size`` and ``config``
    if they are not the defaults.
    """

    def __init__(self, seed: int = 0, config: Mapping[str, Any] | None = None, size: int | None = None) -> None:
        self.seed = seed
        self.size = size
        self.config = dict(config or {})
        self._datasets: dict[str, Any] = {}

    def start_episode(self, task: Task, env: EnvInfo) -> ReasoningGymOracleEpisode:
        if not env.name.startswith(PREFIX):
            raise AgenthubError(f"the reasoning-gym oracle only plays reasoning_gym:NAME envs, not {env.name!r}")
        generator = env.name.removeprefix(PREFIX)
        if generator not in self._datasets:
            self._datasets[generator] = make_dataset(generator, self.seed, self.config, self.size)
        index = task.task_id if task.task_id is not None else task.seed
        if not isinstance(index, int):
            raise AgenthubError(f"the reasoning-gym oracle needs an integer task id, got {index!r}")
        with seeded_global_random(item_seed(self.seed, index)):
            entry = self._datasets[generator][index]
        return ReasoningGymOracleEpisode(str(entry["answer"]))


ORACLE_SPEC = AgentSpec(
    name=ORACLE,
    factory=ReasoningGymOracle,
    description="Answers reasoning_gym:NAME tasks with the generator's reference answer.",
)
