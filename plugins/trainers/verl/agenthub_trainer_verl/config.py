"""The settings of ``agenthub run trainer=verl``: validated here, before anything heavy is imported."""

from __future__ import annotations

from typing import Any, Literal

from agenthub.config import MultiPlayerConfig, RolloutBackendConfig, check_rollout_backend
from agenthub.training import EnvUrls, policy_field, worker_settings
from pydantic import ConfigDict, Field, model_validator

from agenthub_trainer_verl.loop_settings import LoopSettings

RESUMABLE_CHANGES = frozenset({"steps", "save_freq", "resume", "backend", "address"})
"""Settings ``agenthub run --resume RUN_DIR`` may change; any other difference would make it a different run."""


class VerlConfig(RolloutBackendConfig, MultiPlayerConfig):
    """Everything ``agenthub run trainer=verl`` accepts; ``verl.KEY=V`` passes any other hydra override.

    ``backend=ray [address=...]``: the env servers are started on the Ray cluster's nodes before verl, and
    every agent-loop worker plays on them (by default each worker starts its own, on its node's 127.0.0.1).
    ``seat=``, ``opponent=``: multi-player envs, one trained seat per episode (each worker builds the opponent).
    """

    model_config = ConfigDict(extra="forbid")

    trainer: Literal["verl"] = "verl"
    env: str = Field(description="a registered env")
    model: str = policy_field("actor_rollout_ref.model.path")
    split: str = "train"
    val_split: str | None = Field(default=None, description="a split to validate on; default: no validation")
    max_tasks: int | None = Field(default=None, ge=1, description="rows of the training parquet (first N tasks)")
    steps: int = Field(default=100, ge=1, description="trainer.total_training_steps")
    tasks_per_step: int = Field(default=16, ge=1, description="data.train_batch_size: distinct tasks per step")
    n: int = Field(default=8, ge=1, description="actor_rollout_ref.rollout.n: episodes per task, the GRPO group")
    adv_estimator: str = Field(default="grpo", description="algorithm.adv_estimator")
    learning_rate: float = Field(default=1e-6, gt=0)
    micro_batch_size_per_gpu: int = Field(
        default=2, ge=1, description="sequences per GPU per forward pass (actor update and log-prob passes)"
    )
    temperature: float = Field(default=1.0, ge=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_tokens: int = Field(default=256, ge=1, description="tokens per model turn")
    prompt_length: int = Field(default=1024, ge=16, description="system prompt and first observation, in tokens")
    response_length: int = Field(default=4096, ge=16, description="every turn after the prompt, in tokens")
    horizon: int | dict[str, Any] | None = Field(
        default=None, description="turn limit per step: N, or {kind: stepwise, rounds: [...], every: K}"
    )
    rollout: Literal["vllm", "sglang"] = Field(default="vllm", description="verl's inference engine")
    nnodes: int = Field(default=1, ge=1)
    gpus_per_node: int | None = Field(
        default=None, ge=1, description="trainer.n_gpus_per_node; default: the GPUs this machine has"
    )
    agent_workers: int = Field(default=8, ge=1, description="rollout.agent.num_workers (each has its env pool)")
    url: EnvUrls = Field(default=None, description="env servers already running")
    processes: int = Field(default=1, ge=1, description="local env servers per agent-loop worker (without url)")
    capacity: int = Field(default=64, ge=1, description="sessions per env server")
    token: str | None = None
    max_attempts: int = Field(default=3, ge=1)
    episode_timeout_s: float | None = Field(default=None, gt=0)
    unhealthy_wait_s: float = Field(default=60.0, gt=0, description="wait for a failing env server, per episode")
    system_prompt: str | None = None
    on_infra_failure: Literal["mask", "raise"] = "mask"
    rollout_is: Literal["token", "sequence"] | None = Field(
        default="token",
        description="off-policy correction with the sampler's logprobs: algorithm.rollout_correction.rollout_is "
        "(truncated importance sampling per token or per sequence); null turns it off",
    )
    rollout_is_threshold: float = Field(
        default=2.0, gt=0, description="algorithm.rollout_correction.rollout_is_threshold: the weights' upper bound"
    )
    save_freq: int = Field(default=50, ge=-1, description="trainer.save_freq (-1: never)")
    runs_dir: str = "runs"
    run_id: str | None = None
    resume: str | None = Field(
        default=None, description="set by `agenthub run --resume RUN_DIR`: verl's trainer.resume_mode=auto there"
    )
    python: str | None = Field(default=None, description="the interpreter that runs verl; default: this one")
    verl: dict[str, Any] = Field(default_factory=dict, description="more hydra overrides, verl.KEY=V")

    @model_validator(mode="after")
    def _backend(self) -> VerlConfig:
        check_rollout_backend(self, urls=self.url)
        return self

    def loop_settings(self, urls: list[str] | None = None, token: str | None = None) -> LoopSettings:
        """What the agent-loop YAML carries to every agent-loop worker; ``urls`` and ``token``: env servers
        started for the run (``backend=ray``), in place of ``url=`` and ``token=``."""
        if urls is None:
            urls = self.url
        return worker_settings(self, LoopSettings, urls=urls, token=token if token is not None else self.token)
