"""What the checks before launch hand the oracle's play, single-player (:mod:`launch_single`) or seated
(:mod:`launch_seats`): the env's server and task, its oracle, the report to fill and the model's measures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the play modules import these already; this one only names them
    from agenthub.protocols import Agent
    from agenthub.rollout.token_assembly import ChatTemplateDeltas
    from agenthub.service.client import EnvClient
    from agenthub.training.launch_report import LaunchReport, TokenLimits
    from agenthub.types import EnvInfo, Task


@dataclass(frozen=True)
class OraclePlay:
    """The oracle on ``task`` of the env ``client`` serves, measured with ``tokenizer`` against ``limits``."""

    client: EnvClient
    info: EnvInfo
    task: Task
    oracle: Agent
    report: LaunchReport
    limits: TokenLimits
    deltas: ChatTemplateDeltas
    tokenizer: Any
    max_turns: int
