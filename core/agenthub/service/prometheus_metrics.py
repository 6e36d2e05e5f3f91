"""Prometheus metrics of one server, in a registry of its own (no process-global state)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, generate_latest


class ServiceMetrics:
    def __init__(self, env_name: str) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        labels = {"env": env_name}
        self.sessions_active = Gauge("agenthub_sessions_active", "Sessions held now.", registry=self.registry)
        self.sessions_created = Counter("agenthub_sessions_created", "Sessions created.", registry=self.registry)
        self.sessions_closed = Counter(
            "agenthub_sessions_closed", "Sessions ended, by reason.", ["reason"], registry=self.registry
        )
        self.steps = Counter("agenthub_steps", "Steps applied (retried steps count once).", registry=self.registry)
        self.step_seconds = Histogram(
            "agenthub_step_seconds",
            "Time spent in the environment's step.",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
            registry=self.registry,
        )
        self.errors = Counter("agenthub_errors", "Error answers, by code.", ["code"], registry=self.registry)
        self.info = Gauge("agenthub_env_info", "The environment this server runs.", ["env"], registry=self.registry)
        self.info.labels(**labels).set(1)

    def render(self) -> bytes:
        return generate_latest(self.registry)
