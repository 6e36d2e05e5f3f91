"""The seating of a trainer whose framework takes one trajectory per prompt and whose workers play the seats.

Such a trainer checks ``seat=``, ``opponent=`` and ``opponent.KEY=`` against the env before anything starts,
without building the opponent (its framework's workers build it from the settings handed on to them), and
refuses more than one trained seat: each prompt sample gives the framework one trajectory.
"""

from __future__ import annotations

from agenthub.config import MultiPlayerConfig
from agenthub.training.seating import Seating, seating
from agenthub.types import EnvInfo


def one_trained_seat(config: MultiPlayerConfig, info: EnvInfo, trainer: str) -> Seating:
    """``config``'s seating on the env ``info`` describes, checked, the opponent not built; raises for an
    opponent or seats the env lacks, or for more than one trained seat (``trainer`` names the framework)."""
    seated = seating(config, info, make_opponent=False)
    seated.require_one_trajectory(trainer)
    return seated
