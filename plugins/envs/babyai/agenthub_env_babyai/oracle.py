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

from agenthub.errors import AgenthubError
from agenthub.types import AgentReply, EnvInfo, Observation, Task
from minigrid.utils.baby_ai_bot import BabyAIBot

from agenthub_env_babyai.actions import CHECK_ACTIONS
from agenthub_env_babyai.env import BabyAIEnv, run_macro

LOOKAHEAD = 64
"""At most this many primitive steps of the bot's plan are compared against each turn."""

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
        self.bot = BabyAIBot(self.world)

    async def act(self, observation: Observation) -> AgentReply:
        if observation.text != self.expected:
            raise AgenthubError(
                f"the babyai oracle lost sync with the server on task {self.task_id!r}: the observation differs "
                "from its local replay. Serve and play with the same minigrid version, and let the oracle send "
                "every action of the episode itself."
            )
        action, bot_steps = self._choose()
        self.expected = self.mirror.step(action)[0]
        for _ in range(bot_steps):
            self.world.step(self.bot.replan())
        if bot_steps and state_key(self.world) != state_key(self.mirror.minigrid_env):
            raise AgenthubError(f"the babyai oracle's plan and the game diverged on task {self.task_id!r} ({action!r})")
        return AgentReply(action=action, text=action)

    def _choose(self) -> tuple[str, int]:
        """The action to send and how many of the bot's primitive steps it stands for."""
        outcomes: dict[StateKey, str] = {}
        longest = 0
        for name, primitives in self.mirror.macros.items():
            if name == CHECK_ACTIONS or not primitives:
                continue
            trial = copy.deepcopy(self.mirror.minigrid_env)
            result = run_macro(trial, primitives)
            if result.terminated:
                if result.reward > 0:
                    return name, 0  # it wins; the bot's world is not needed any more
                continue  # it fails the mission (a Debug level's wrong move)
            outcomes.setdefault(state_key(trial), name)
            longest = max(longest, len(primitives))
        near = {key[:3] for key in outcomes}
        world, bot = copy.deepcopy((self.world, self.bot))
        best: tuple[str, int] | None = None
        # The bot may take a detour to a state a macro reaches directly, but not an endless one.
        for step in range(1, min(LOOKAHEAD, 2 * longest + 8) + 1):
            primitive = bot.replan()
            if primitive == world.actions.done:
                break
            _, _, terminated, truncated, _ = world.step(primitive)
            if agent_key(world) in near and (name := outcomes.get(state_key(world))) is not None:
                best = (name, step)
            if terminated or truncated:
                break
        if best is None:
            wanted = _bot_move(copy.deepcopy((self.world, self.bot)))
            raise AgenthubError(
                f"the babyai oracle cannot express the bot's next move ({wanted}) on task {self.task_id!r} with "
                f"the available actions {self.mirror.available_actions}; this level may be unsolvable with "
                "AgentGym's action set"
            )
        return best


def _bot_move(world_and_bot: tuple[Any, BabyAIBot]) -> str:
    world, bot = world_and_bot
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
