"""``env_servers(..., backend=ray)``: a trainer's env servers placed on a Ray cluster's nodes (issue 21),
here a one-node Ray started in this process (one CPU), the way the TRL test starts it."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from agenthub import ConfigError
from agenthub.config import RolloutBackendConfig
from agenthub.training import ServerUrls, env_servers

ray = pytest.importorskip("ray")


def test_a_ray_the_run_started_itself_stops_with_it() -> None:
    """No Ray to join (address=local: a new one on this machine): the run's own Ray ends with its servers."""
    assert not ray.is_initialized()
    with env_servers(
        "guess", None, processes=1, max_sessions=2, backend=RolloutBackendConfig(backend="ray", address="local")
    ) as urls:
        assert ray.is_initialized() and len(urls) == 1
    assert not ray.is_initialized()


@pytest.fixture(scope="module")
def one_node() -> Iterator[None]:
    ray.init(
        address="local", num_cpus=1, include_dashboard=False, log_to_driver=False, object_store_memory=80 * 1024**2
    )
    try:
        yield
    finally:
        ray.shutdown()


def test_servers_run_on_the_ray_node_behind_a_token_and_stop_with_the_run(one_node: None) -> None:
    backend = RolloutBackendConfig(backend="ray")
    with env_servers("guess", None, processes=1, max_sessions=4, backend=backend) as urls:
        assert isinstance(urls, ServerUrls) and len(urls) == 1 and urls.token  # a new token: the servers listen wide
        assert ray.available_resources().get("CPU", 0) == 0  # the node's CPU is the server's while it runs
        headers = {"Authorization": f"Bearer {urls.token}"}
        assert httpx.get(f"{urls[0]}/v1/info", headers=headers).json()["name"] == "guess"
        assert httpx.get(f"{urls[0]}/v1/info").status_code == 401
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{urls[0]}/healthz", timeout=2)
    for _ in range(100):  # stopped, its actor gone: Ray reports its CPU back within moments
        if ray.available_resources().get("CPU") == 1.0:
            break
        time.sleep(0.1)
    assert ray.available_resources().get("CPU") == 1.0


def test_a_given_token_is_the_servers(one_node: None) -> None:
    with env_servers(
        "guess", None, processes=1, max_sessions=2, token="s3cret", backend=RolloutBackendConfig(backend="ray")
    ) as urls:
        assert urls.token == "s3cret"
        assert httpx.get(f"{urls[0]}/v1/info", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_backend_settings_that_do_not_go_together_are_refused_before_anything_starts() -> None:
    with pytest.raises(ConfigError, match="backend=ray starts env servers on every Ray node itself"):  # noqa: SIM117
        with env_servers(
            "guess", ["http://x:1"], processes=1, max_sessions=1, backend=RolloutBackendConfig(backend="ray")
        ):
            pytest.fail("started")
    with pytest.raises(ConfigError, match="add backend=ray to run on it"):  # noqa: SIM117
        with env_servers("guess", None, processes=1, max_sessions=1, backend=RolloutBackendConfig(address="auto")):
            pytest.fail("started")


def test_local_servers_answer_with_the_runs_token() -> None:
    with env_servers("guess", None, processes=1, max_sessions=2, token="t", backend=RolloutBackendConfig()) as urls:
        assert urls.token == "t" and urls[0].startswith("http://127.0.0.1:")
