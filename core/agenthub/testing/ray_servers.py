"""``backend=ray`` in a trainer plugin's tests: env servers that Ray places on its nodes, on a one-node Ray here.

With ``backend=ray`` a run's env servers are Ray actors on the cluster's nodes, listening on the node's
address behind a token of the run's, and stopped when the run ends. :func:`one_node_ray` starts a Ray of
one node and one CPU on this machine (so the servers' actor takes all of it), :func:`ray_cpus_back` waits
for that CPU to come back once the servers are gone, and :func:`check_servers_on_one_node_ray` does the
whole check on a trainer's own way of starting a run's servers. Needs ``ray``: without it the test is
skipped. A cluster of several nodes is tested in the root suite (tests/rollout/test_ray_cluster.py).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

if TYPE_CHECKING:
    from agenthub.training import ServerUrls

# Ray 2.55 warns at every start that it will stop zeroing accelerator variables; "0" keeps today's behaviour.
_ACCEL_OVERRIDE = "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO"


@contextlib.contextmanager
def one_node_ray() -> Iterator[Any]:
    """A new one-node Ray on this machine (one CPU, no dashboard, a small object store), shut down after.

    Yields the ``ray`` module; skips the test where ray is not installed.
    """
    ray: Any = pytest.importorskip("ray")
    previous = os.environ.get(_ACCEL_OVERRIDE)
    os.environ[_ACCEL_OVERRIDE] = "0"
    ray.init(
        address="local", num_cpus=1, include_dashboard=False, log_to_driver=False, object_store_memory=80 * 1024**2
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        if previous is None:
            os.environ.pop(_ACCEL_OVERRIDE, None)
        else:
            os.environ[_ACCEL_OVERRIDE] = previous


def ray_cpus_back(ray: Any, cpus: float = 1.0, wait_s: float = 10.0) -> float | None:
    """Ray's free CPUs as soon as they are ``cpus`` again, else what Ray reports after ``wait_s``.

    Ray reports a stopped actor's CPU back within moments, not at once; the caller asserts the value.
    """
    deadline = time.monotonic() + wait_s
    while (free := ray.available_resources().get("CPU")) != cpus and time.monotonic() < deadline:
        time.sleep(0.1)
    return None if free is None else float(free)


def check_servers_on_one_node_ray(
    start: Callable[[], contextlib.AbstractContextManager[ServerUrls | None]], env: str
) -> None:
    """Run ``start()`` (a trainer's own start of a run's env servers, with ``backend=ray``) on a one-node Ray.

    Fails unless it gives one server, on the Ray node's address, that answers ``env``'s ``/v1/info`` to
    the run's token, and unless Ray has its CPU back once the block ends (the servers stopped with the run).
    """
    with one_node_ray() as ray:
        node_ip = ray.util.get_node_ip_address()
        with start() as servers:
            if servers is None or not servers.token:
                raise AssertionError(
                    f"backend=ray gave {servers!r}: the run must get its servers' URLs and their token"
                )
            if len(servers) != 1 or not servers[0].startswith(f"http://{node_ip}:"):
                raise AssertionError(
                    f"expected one server, listening on the Ray node's address {node_ip} (which the cluster reaches), "
                    f"got {list(servers)}"
                )
            headers = {"Authorization": f"Bearer {servers.token}"}
            name = httpx.get(f"{servers[0]}/v1/info", headers=headers).json()["name"]
            if name != env:
                raise AssertionError(f"the server on the Ray node serves {name!r}, expected {env!r}")
        free = ray_cpus_back(ray)
    if free != 1.0:
        raise AssertionError(
            f"Ray has {free} of its 1 CPU free after the run: the servers' actor must be stopped when the run ends"
        )
