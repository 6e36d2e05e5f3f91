"""``babyai-oracle``: minigrid's BabyAI bot, speaking AgentGym's text actions.

The oracle only sees observations, as any remote agent does. It rebuilds the
same game locally from the task id (levels are deterministic) and keeps two
local copies in step with the server:

- a *mirror*: a :class:`BabyAIEnv` that receives every action the oracle sends,
  so its observations must equal the server's (checked each turn);
- the *bot's world*: a minigrid env and a ``BabyAIBot`` advanced along the bot's
  own plan.

Each turn it looks ahead along the bot's plan and picks the available action
whose outcome equals the furthest state of that plan, so one "go to red ball 1"
can stand for many primitive moves; the bot's world then advances to that state.
"""

from __future__ import annotations

import copy
from typing import Any

from agenthub import AgenthubError, AgentReply, EnvInfo, Observation, Task
from minigrid.core.constants import DIR_TO_VEC
from minigrid.utils import baby_ai_bot

from agenthub_env_babyai.actions import CHECK_ACTIONS, FORWARD, LEFT, RIGHT, TOGGLE
from agenthub_env_babyai.env import BabyAIEnv, run_macro

LOOKAHEAD = 64
"""At most this many primitive steps of the bot's plan are compared against each turn."""

MAX_SEARCHES_PER_MOVE = 300
"""minigrid's bot can loop for ever in rare states (seen in UnlockToUnlock and GoToImpUnlock);
one move normally takes a handful of path searches."""


class BotStuckError(RuntimeError):
    """minigrid's bot searched too long for one move (it can loop forever on some levels)."""


class _BoundedBot(baby_ai_bot.BabyAIBot):
    """minigrid's bot, stopped with an error where it would search without end."""

    def replan(self, action_taken: Any = None) -> Any:
        self.searches = 0
        return super().replan(action_taken)  # type: ignore[no-untyped-call]

    def _shortest_path(self, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        if self.searches > MAX_SEARCHES_PER_MOVE:
            raise BotStuckError(f"no move found after {MAX_SEARCHES_PER_MOVE} path searches")
        return super()._shortest_path(*args, **kwargs)  # type: ignore[no-untyped-call]


# minigrid's bot is untyped; its only method used here is replan() -> action.
BabyAIBot: Any = _BoundedBot
StateKey = tuple[Any, ...]
AgentKey = tuple[Any, ...]


def agent_key(env: Any) -> AgentKey:
    """The cheap part of :func:`state_key`, to skip encoding the grid for most plan steps."""
    carried = env.carrying
    return (
        tuple(int(v) for v in env.agent_pos),
        int(env.agent_dir),
        None if carried is None else (carried.type, carried.color),
    )


def state_key(env: Any) -> StateKey:
    """What must agree for two copies of a game to be the same game, step counter aside."""
    return (*agent_key(env), env.grid.encode().tobytes(), _progress(env.instrs))


def _progress(instr: Any) -> tuple[Any, ...]:
    # The verifier's memory: which parts of a sequence are done, what was carried before.
    fields = []
    for attr in ("a_done", "b_done", "lastStepMatch"):
        if hasattr(instr, attr):
            fields.append(getattr(instr, attr))
    carried = getattr(instr, "preCarrying", None)
    fields.append(None if carried is None else (carried.type, carried.color))
    for child in ("instr_a", "instr_b"):
        if hasattr(instr, child):
            fields.append(_progress(getattr(instr, child)))
    return tuple(fields)


class BabyAIOracleEpisode:
    def __init__(self, task_id: int | str) -> None:
        self.task_id = task_id
        self.mirror = BabyAIEnv()
        self.expected, _ = self.mirror.reset(task_id=task_id)
        self.world = copy.deepcopy(self.mirror.minigrid_env)
        self.bot: Any = BabyAIBot(self.world)

    async def act(self, observation: Observation) -> AgentReply:
        if observation.text != self.expected:
            raise AgenthubError(
                f"the babyai oracle lost sync with the server on task {self.task_id!r}: the observation differs "
                "from its local replay. Serve and play with the same minigrid version, and let the oracle send "
                "every action of the episode itself."
            )
        try:
            action, bot_steps = self._choose()
            self.expected = self.mirror.step(action)[0]
            for _ in range(bot_steps):
                self.world.step(self.bot.replan())
        except AgenthubError:
            raise
        except Exception as exc:  # the bot asserts when it is stuck; that is an agent failure
            raise AgenthubError(
                f"minigrid's BabyAI bot gave up on task {self.task_id!r} ({type(exc).__name__}: {exc}); "
                "it cannot solve this game"
            ) from exc
        if bot_steps and state_key(self.world) != state_key(self.mirror.minigrid_env):
            raise AgenthubError(f"the babyai oracle's plan and the game diverged on task {self.task_id!r} ({action!r})")
        return AgentReply(action=action, text=action)

    def _choose(self) -> tuple[str, int]:
        """The action to send and how many of the bot's primitive steps it stands for."""
        macros = {n: p for n, p in self.mirror.macros.items() if n != CHECK_ACTIONS and p}
        env = self.mirror.minigrid_env
        start = ((int(env.agent_pos[0]), int(env.agent_pos[1])), int(env.agent_dir))
        # Where each macro would take the agent if every move succeeds; copying the game to
        # try a macro costs milliseconds, so only those that touch the bot's path are tried.
        passing = {name: _landings(start, primitives) for name, primitives in macros.items()}
        wanted = set().union(*passing.values())
        world, bot = copy.deepcopy((self.world, self.bot))
        on_path: dict[StateKey, int] = {}
        bot_fails = False  # the bot's own plan ends the mission unsolved (it toggles the wrong door, say)
        for step in range(1, min(LOOKAHEAD, 2 * max(map(len, macros.values())) + 8) + 1):
            primitive = bot.replan()
            if primitive == world.actions.done:
                break
            _, reward, terminated, truncated, _ = world.step(primitive)
            if agent_key(world)[:2] in wanted:
                on_path[state_key(world)] = step  # a later visit of the same state wins
            if terminated or truncated:
                bot_fails = terminated and float(reward) <= 0
                break
        landed = {(key[0], key[1]) for key in on_path}
        best: tuple[str, int] | None = None
        for name, primitives in macros.items():
            if passing[name].isdisjoint(landed):
                continue
            trial = copy.deepcopy(env)
            result = run_macro(trial, primitives)
            if result.terminated:
                if result.reward > 0:
                    return name, 0  # it wins; the bot's world is not needed any more
                continue  # it fails the mission (a Debug level's wrong move)
            reached = on_path.get(state_key(trial))
            if reached is not None and (best is None or reached > best[1]):
                best = (name, reached)
        if best is None and bot_fails:
            raise AgenthubError(
                f"minigrid's BabyAI bot cannot solve task {self.task_id!r}: its own plan (next move "
                f"{_bot_move(self.world, self.bot)}) ends the mission unsolved, so the oracle has no winning move "
                "to send; this is the bot's limit, not the action set's"
            )
        if best is None:
            raise AgenthubError(
                f"the babyai oracle cannot express the bot's next move ({_bot_move(self.world, self.bot)}) on task "
                f"{self.task_id!r} with the available actions {self.mirror.available_actions}; this game may be "
                "unsolvable with AgentGym's action set"
            )
        return best


def _landings(start: tuple[tuple[int, int], int], primitives: tuple[int, ...]) -> set[tuple[tuple[int, int], int]]:
    """Where the agent ends up after ``primitives``; for "toggle and go through", also where
    it stands to toggle, since opening the door may end the mission there."""
    (x, y), direction = start
    cells = set()
    for index, primitive in enumerate(primitives):
        if primitive == LEFT:
            direction = (direction - 1) % 4
        elif primitive == RIGHT:
            direction = (direction + 1) % 4
        elif primitive == FORWARD:
            dx, dy = DIR_TO_VEC[direction]
            x, y = x + int(dx), y + int(dy)
        if index == len(primitives) - 1 or (primitive == TOGGLE and index == len(primitives) - 2):
            cells.add(((x, y), direction))
    return cells


def _bot_move(world: Any, bot: Any) -> str:
    world, bot = copy.deepcopy((world, bot))
    try:
        return str(world.actions(bot.replan()).name)
    except Exception as exc:  # the bot's own failure is the better explanation
        return f"the bot gave up: {type(exc).__name__}: {exc}"


class BabyAIOracle:
    """Plays every BabyAI task that minigrid's bot can solve with AgentGym's actions."""

    def start_episode(self, task: Task, env: EnvInfo) -> BabyAIOracleEpisode:
        if env.name != "babyai":
            raise AgenthubError(f"the babyai oracle only plays env 'babyai', not {env.name!r}")
        if task.task_id is None:
            raise AgenthubError("the babyai oracle needs the episode's task id to rebuild its level; set Task.task_id")
        return BabyAIOracleEpisode(task.task_id)
