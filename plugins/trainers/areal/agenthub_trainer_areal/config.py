"""The settings of ``agenthub run trainer=areal``: validated here, before anything heavy is imported."""

from __future__ import annotations

from typing import Any, Literal

from agenthub.config import MultiPlayerConfig, RolloutBackendConfig, check_rollout_backend
from agenthub.training import DEFAULT_POLICY, EnvUrls
from pydantic import ConfigDict, Field, model_validator

DEFAULT_ENV = "trail"


RESUMABLE_CHANGES = frozenset({"steps", "save_steps", "resume", "backend", "address"})
"""Settings ``agenthub run --resume RUN_DIR`` may change; any other difference would make it a different run."""


class ArealConfig(RolloutBackendConfig, MultiPlayerConfig):
    """Everything ``agenthub run trainer=areal`` accepts; ``areal.KEY=V`` sets any other AReaL setting.

    ``backend=ray [address=...]``: the env servers start on the Ray cluster's nodes before AReaL, and every
    rollout worker plays on them (by default each worker starts its own). ``seat=``, ``opponent=``:
    multi-player envs, one trained seat per episode (each rollout worker builds the opponent).
    """

    model_config = ConfigDict(extra="forbid")

    trainer: Literal["areal"] = "areal"
    env: str = Field(default=DEFAULT_ENV, description="a registered env")
    model: str | None = Field(
        default=DEFAULT_POLICY,
        description=f"a model directory or hub id, default {DEFAULT_POLICY}; model=null: a tiny random model built in "
        "the run directory (a smoke test)",
    )
    tiny_model: dict[str, Any] = Field(default_factory=dict, description="settings for the built-in tiny model")
    split: str = "train"
    steps: int = Field(default=100, ge=1, description="training steps (AReaL's total_train_steps)")
    tasks_per_step: int = Field(default=32, ge=1, description="tasks per step (train_dataset.batch_size)")
    num_generations: int = Field(default=8, ge=1, description="episodes per task: the GRPO group (gconfig.n_samples)")
    learning_rate: float = Field(default=1.7e-5, gt=0)
    temperature: float = Field(default=1.0, gt=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_tokens: int = Field(default=512, ge=1, description="tokens per model turn (gconfig.max_new_tokens)")
    max_context: int = Field(default=8192, ge=16, description="prompt plus every turn of an episode, in tokens")
    horizon: int | dict[str, Any] | None = Field(
        default=None, description="turn limit per step: N, or {kind: stepwise, rounds: [...], every: K}; default env's"
    )
    max_head_offpolicyness: int = Field(
        default=2, ge=0, description="AReaL's staleness bound: how many weight versions a sample may lag"
    )
    concurrency: int = Field(default=64, ge=1, description="episode groups in flight (rollout.max_concurrent_rollouts)")
    processes: int = Field(default=1, ge=1, description="local env server processes per rollout worker")
    url: EnvUrls = Field(default=None, description="env servers already running; default: start some")
    token: str | None = None
    max_attempts: int = Field(default=3, ge=1, description="attempts per episode on infrastructure failures")
    resamples: int = Field(
        default=2,
        ge=0,
        description="new episodes of the task after an episode's attempts all failed (a group stays whole; "
        "after the last, AReaL drops the whole group)",
    )
    episode_timeout_s: float | None = Field(default=None, gt=0)
    rollout_backend: str = Field(default="sglang:d1", description="AReaL's rollout.backend, e.g. sglang:d4t2, vllm:d2")
    actor_backend: str = Field(default="fsdp:d1", description="AReaL's actor.backend, e.g. fsdp:d4, megatron:d2t2")
    nodes: int = Field(default=1, ge=1)
    gpus_per_node: int = Field(default=2, ge=1)
    scheduler: Literal["local", "ray", "slurm"] = Field(default="local", description="AReaL's scheduler.type")
    save_steps: int | None = Field(
        default=None, ge=1, description="save the model every N steps (and after each pass over the tasks)"
    )
    recover_steps: int | None = Field(
        default=20,
        ge=1,
        description="AReaL's recovery checkpoint every N steps (recover.freq_steps), what --resume continues from; "
        "null: none",
    )
    seed: int = 0
    runs_dir: str = "runs"
    run_id: str | None = None
    resume: str | None = Field(
        default=None, description="set by `agenthub run --resume RUN_DIR`: AReaL's recover.mode=auto there"
    )
    python: str | None = Field(default=None, description="interpreter that runs the entry script; default: this one")
    areal: dict[str, Any] = Field(
        default_factory=dict, description="more AReaL settings, merged into its YAML last: areal.actor.kl_ctl=0.01"
    )

    @model_validator(mode="after")
    def _coherent(self) -> ArealConfig:
        if self.model is not None and self.tiny_model:
            raise ValueError("tiny_model.* settings apply only without model=...; drop one of them")
        check_rollout_backend(self, urls=self.url)
        return self

    @property
    def env_capacity(self) -> int:
        """Sessions one env server pool must hold: every episode of every group in flight."""
        return max(8, self.concurrency * self.num_generations)


class HubSection(MultiPlayerConfig):
    """The ``agenthub:`` section of AReaL's experiment YAML: what the entry script and the workflow need
    (``seat``, ``opponent``, ``opponent_kwargs``: who plays a multi-player env's seats)."""

    model_config = ConfigDict(extra="forbid")

    env: str
    split: str = "train"
    url: list[str] = Field(default_factory=list)
    token: str | None = None
    processes: int = Field(default=1, ge=1)
    capacity: int = Field(default=64, ge=1)
    max_context: int = Field(default=8192, ge=16)
    horizon: int | dict[str, Any] | None = None
    max_attempts: int = Field(default=3, ge=1)
    resamples: int = Field(default=2, ge=0)
    episode_timeout_s: float | None = Field(default=None, gt=0)
    system_prompt: str | None = None
    run_dir: str | None = None
