"""Importing Ray, connecting to a cluster, and the errors the Ray backend raises."""

from __future__ import annotations

import socket
from types import ModuleType
from urllib.parse import urlsplit

from agenthub.errors import AgenthubError


class RayNotInstalledError(AgenthubError):
    """Ray is needed for this and is not installed."""


class RayBackendError(AgenthubError):
    """The Ray backend could not start, or lost every node worker before the run finished."""


class NodeWorkerSetupError(AgenthubError):
    """A node worker could not start its env servers or its agent; the message is the node's error.

    It carries only text, so that it always crosses back to the driver (some exceptions do not pickle).
    """


def import_ray() -> ModuleType:
    """``ray``, or an error that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise RayNotInstalledError(
            "the Ray backend needs Ray: pip install 'agenthub[ray]' "
            "(on one machine, backend=local, the default, needs no Ray)"
        ) from exc
    return ray


def connect(address: str | None, *, probe_timeout_s: float = 5.0) -> tuple[ModuleType, bool]:
    """Ray, connected to the cluster at ``address``; and whether this call connected (so owns the connection).

    ``address``: ``"auto"`` (the cluster started on this machine with ``ray start``), ``"HOST:PORT"`` (a
    head node's GCS), ``"ray://HOST:PORT"`` (Ray Client), or None (``$RAY_ADDRESS`` if set, else a new
    one-machine Ray). An address given explicitly is probed first, so that an unreachable one is said
    in seconds rather than after Ray's own long retries.
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray, False
    if address not in (None, "", "auto", "local"):
        _probe(address, probe_timeout_s)
    try:
        ray.init(address=address or None, log_to_driver=False)
    except (ConnectionError, TimeoutError, RuntimeError) as exc:
        raise RayBackendError(
            f"cannot connect to the Ray cluster at address={address!r}: {_first_line(exc)}; start one with "
            "`ray start --head` (then address=auto on that machine, or address=HEAD_IP:6379 elsewhere), "
            "or leave address out to start Ray on this machine only"
        ) from None
    return ray, True


def _probe(address: str, timeout_s: float) -> None:
    """Refuse an address whose host and port accept no TCP connection."""
    parts = urlsplit(address if "://" in address else f"gcs://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        raise RayBackendError(
            f"address={address!r} is not a Ray address; use auto, HOST:PORT (the head's GCS port, 6379 by "
            "default) or ray://HOST:PORT (Ray Client, 10001 by default)"
        )
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        raise RayBackendError(
            f"cannot reach the Ray cluster at address={address!r} ({host}:{port}: {exc.strerror or exc}); "
            "check that its head node is running (`ray status` on it) and that this machine may reach that port"
        ) from None


def reason(exc: BaseException) -> str:
    """The error as the user should read it: a worker's own exception in full, or the gist of Ray's."""
    cause = getattr(exc, "cause", None)  # a RayTaskError wraps what the worker raised
    if isinstance(cause, BaseException):
        return str(cause) if isinstance(cause, NodeWorkerSetupError) else f"{type(cause).__name__}: {cause}"
    return f"{type(exc).__name__}: {_first_line(exc)}" if str(exc).strip() else type(exc).__name__


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
