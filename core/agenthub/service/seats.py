"""Seats: how the service checks a multi-player step and turns a ``MultiPlayerEnvironment``'s
answers into protocol answers (``docs/protocol.md``, Seats).

A single-player env never reaches these functions except ``check_seat``, which refuses a
seat sent to it.
"""

from __future__ import annotations

from typing import Any

from agenthub.service.sessions import ServiceError


def check_seat(seat: int | None, players: int, on_turn: int | None) -> None:
    """Refuse a step whose ``seat`` does not fit the env (422) or is not the seat on turn (409).

    ``on_turn`` is None once the episode has ended: the step is then refused as ``episode_done``.
    """
    check_seat_fits(seat, players, on_turn)
    if on_turn is not None and seat is not None and seat != on_turn:
        raise ServiceError(
            409,
            "not_your_turn",
            f"it is seat {on_turn}'s turn, not seat {seat}'s; step as seat {on_turn}, "
            "the seat named by the last answer",
        )


def check_seat_fits(seat: int | None, players: int, on_turn: int | None) -> None:
    """Refuse (422) a step whose ``seat`` the env's document rules out: a seat sent to a single-player env,
    none sent to a multi-player one, or one that does not exist. Checked before a retried ``request_id``
    is answered from memory, so that a request the schema refuses is refused every time."""
    if players == 1:
        if seat is not None:
            raise ServiceError(
                422,
                "seat_not_expected",
                f"this env is single-player, so a step takes no seat (got seat {seat}); leave 'seat' out",
            )
        return
    if seat is None:
        turn = f"seat {on_turn} is on turn" if on_turn is not None else "the episode has ended"
        raise ServiceError(
            422,
            "seat_required",
            f"this env has {players} seats, so a step names the seat that acts: {turn}; "
            'send {"seat": N, "action": ...} with the seat named by the last answer',
        )
    if not 0 <= seat < players:
        raise ServiceError(422, "unknown_seat", f"seat {seat} does not exist; this env has seats 0 to {players - 1}")


def seat_reset(result: Any, players: int) -> tuple[str, dict[str, Any], int]:
    """A multi-player reset's ``(observation, info, seat)``, checked."""
    try:
        observation, info, seat = result
    except (TypeError, ValueError):
        raise _contract("reset must return (observation: str, info: dict, seat: int)") from None
    if not isinstance(observation, str) or not isinstance(info, dict):
        raise _contract("reset must return (observation: str, info: dict, seat: int)")
    return observation, info, _seat_in_range(seat, players, "reset")


def seat_reply(result: Any, acting: int, players: int) -> dict[str, Any]:
    """The JSON answer of a multi-player step by seat ``acting``, from the env's ``SeatStep``."""
    try:
        observations, rewards, terminated, truncated, info, seat = result
    except (TypeError, ValueError):
        raise _contract(
            "step must return a SeatStep (observations, rewards, terminated, truncated, info, seat)"
        ) from None
    if not isinstance(observations, dict) or not isinstance(rewards, dict) or not isinstance(info, dict):
        raise _contract("step's observations and rewards must be dicts keyed by seat, and info a dict")
    done = bool(terminated) or bool(truncated)
    per_seat = _rewards(rewards, players)
    texts = _observations(observations, players)
    next_seat = acting if done else _seat_in_range(seat, players, "step")
    needed = range(players) if done else [next_seat]
    missing = [s for s in needed if s not in texts]
    if missing:
        when = "once the episode has ended, every seat's" if done else "the seat on turn's"
        raise _contract(f"step must return {when} observation; missing seat(s) {missing}")
    reply: dict[str, Any] = {
        "observation": texts[next_seat],
        "reward": per_seat[str(acting)],
        "terminated": bool(terminated),
        "truncated": bool(truncated),
        "info": info,
        "seat": next_seat,
        "rewards": per_seat,
    }
    if done:
        reply["observations"] = {str(s): texts[s] for s in range(players)}
    return reply


def _rewards(rewards: dict[Any, Any], players: int) -> dict[str, float]:
    per_seat = dict.fromkeys(map(str, range(players)), 0.0)
    for key, value in rewards.items():
        seat = _seat_in_range(key, players, "step's rewards")
        try:
            per_seat[str(seat)] = float(value)
        except (TypeError, ValueError):
            raise _contract(f"step's reward for seat {seat} is {value!r}, not a number") from None
    return per_seat


def _observations(observations: dict[Any, Any], players: int) -> dict[int, str]:
    texts: dict[int, str] = {}
    for key, value in observations.items():
        seat = _seat_in_range(key, players, "step's observations")
        if not isinstance(value, str):
            raise _contract(f"step's observation for seat {seat} is {type(value).__name__}, not str")
        texts[seat] = value
    return texts


def _seat_in_range(seat: Any, players: int, where: str) -> int:
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players:
        raise _contract(f"{where} named seat {seat!r}; seats are the integers 0 to {players - 1}")
    return seat


def _contract(what: str) -> ServiceError:
    return ServiceError(500, "env_contract", f"the multi-player environment broke its contract: {what}")
