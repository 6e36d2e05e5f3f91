"""``wordle-oracle``: keeps the answers consistent with the feedback and guesses to split them.

It knows the answer list the environment draws from (it ships in this package),
never the answer itself: each turn it reads the feedback on its last guess from
the observation and drops the answers that would have given other feedback.
"""

from __future__ import annotations

import asyncio
import re

from agenthub import AgenthubError, AgentReply, EnvInfo, Observation, Task

from agenthub_env_wordle.rules import MAX_GUESSES
from agenthub_env_wordle.solver import best_guess, narrow
from agenthub_env_wordle.words import answers

# best_guess(answers(), words.guess_list()) for the shipped lists; tools/build_wordlists.py prints it (a minute's work).
OPENER = "raise"
# Up to this many candidates, any answer-list word may be the probe; more would make a turn slow.
# With 15 it wins all 2,114 tasks in 3.54 guesses on average, at about 40 ms of CPU a game.
WIDE_SEARCH_LIMIT = 15

_FEEDBACK = re.compile(r"^([bgy]) ([bgy]) ([bgy]) ([bgy]) ([bgy])\b")


def choose_guess(candidates: list[str], guesses_left: int) -> str:
    """The best candidate, or a better probe word when the candidates could not all be tried in time.

    Probing with words that cannot be the answer is what gets past families like
    batch/catch/hatch/latch/match/patch/watch, where guessing candidates one by one runs out of turns.
    """
    if len(candidates) <= guesses_left or len(candidates) > WIDE_SEARCH_LIMIT:
        return best_guess(candidates, candidates)
    return best_guess(candidates, [*candidates, *answers()])


class WordleOracleEpisode:
    def __init__(self) -> None:
        self.candidates = list(answers())
        self.last_guess: str | None = None
        self.guesses = 0

    async def act(self, observation: Observation) -> AgentReply:
        if self.last_guess is not None:
            found = _FEEDBACK.match(observation.text)
            if found is None:
                raise AgenthubError(
                    f"the wordle oracle expected feedback like 'b y g g b' on {self.last_guess!r}, "
                    f"got {observation.text[:120]!r}"
                )
            self.candidates = narrow(self.candidates, self.last_guess, "".join(found.groups()))
            if not self.candidates:
                raise AgenthubError(
                    "no answer of the shipped list fits the feedback; is the env using another word list?"
                )
        self.guesses += 1
        if self.last_guess is None:
            guess = OPENER
        else:
            # Scoring probes is CPU work; keep it off the event loop that drives other episodes.
            guess = await asyncio.to_thread(choose_guess, self.candidates, MAX_GUESSES - self.guesses + 1)
        self.last_guess = guess
        action = " ".join(guess)  # AgentGym's "s h i r e" form
        return AgentReply(action=action, text=action)


class WordleOracle:
    """Solves every wordle task within 6 guesses, 3.5 on average."""

    def start_episode(self, task: Task, env: EnvInfo) -> WordleOracleEpisode:
        if env.name != "wordle":
            raise AgenthubError(f"the wordle oracle only plays env 'wordle', not {env.name!r}")
        return WordleOracleEpisode()
