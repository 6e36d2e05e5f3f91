"""The settings of ``agenthub run trainer=openrlhf``: validated here, before anything is written or started."""

from __future__ import annotations

import sys
from typing import Any, Literal

from agenthub.config import MultiPlayerConfig, RolloutBackendConfig, check_rollout_backend
from agenthub.training import EnvUrls, policy_field
from pydantic import ConfigDict, Field, field_validator, model_validator

Estimator = Literal["group_norm", "dr_grpo", "rloo", "reinforce_baseline", "reinforce", "gae"]


WIDE_FILTER = (-1e9, 1e9)
"""The default dynamic-filtering range: no real group mean falls outside it, a NaN one (a group with an
infra failure, see :mod:`agenthub_trainer_openrlhf.response`) always does."""


def visible_gpus() -> int:
    """The CUDA GPUs torch sees here, at least 1 (so a dry run without one still shows a valid command)."""
    try:
        import torch
    except ImportError:
        return 1
    return max(1, int(torch.cuda.device_count()))


RESUMABLE_CHANGES = frozenset({"episodes", "save_steps", "resume", "backend", "address", "python", "ray_address"})
"""Settings ``agenthub run --resume RUN_DIR`` may change (more passes over the tasks, where it runs); any other
difference would make it a different run, which OpenRLHF's checkpoint would silently continue."""


class OpenRlhfConfig(RolloutBackendConfig, MultiPlayerConfig):
    """Everything ``agenthub run trainer=openrlhf`` accepts; ``openrlhf.KEY=V`` passes any other flag through
    (``openrlhf.ds.zero_stage=3`` becomes ``--ds.zero_stage 3``; ``true`` a bare flag, ``false`` drops one).

    ``backend=ray [address=...]``: the env servers on a Ray cluster's nodes, where every vLLM actor reaches
    them; ``seat=``, ``opponent=``: multi-player envs, one trained seat per episode (a group's samples)."""

    model_config = ConfigDict(extra="forbid")

    trainer: Literal["openrlhf"] = "openrlhf"
    env: str = Field(description="a registered env, or the env the servers at url= serve")
    model: str = policy_field("OpenRLHF loads it")
    split: str = "train"
    tasks: int | None = Field(default=None, ge=1, description="only the split's first N task ids")
    horizon: int | dict[str, Any] | None = Field(
        default=None,
        description="turn limit: N, or {kind: stepwise, rounds: [...], every: K} by rollout (ScalingInter-RL); "
        "default: the env's",
    )
    url: EnvUrls = Field(default=None, description="env servers already running; default: start some")
    token: str | None = None
    processes: int = Field(default=1, ge=1, description="local env server processes (without url=)")
    n_samples_per_prompt: int = Field(default=8, ge=2, description="episodes per task: the group")
    rollout_batch_size: int = Field(default=16, ge=1, description="tasks per rollout")
    train_batch_size: int | None = Field(default=None, ge=1, description="default: one optimizer step per rollout")
    micro_train_batch_size: int = Field(default=2, ge=1)
    micro_rollout_batch_size: int = Field(default=4, ge=1)
    episodes: int = Field(default=1, ge=1, description="passes over the prompt data")
    max_len: int = Field(default=4096, ge=16, description="prompt plus every turn of an episode, in tokens")
    max_tokens: int = Field(default=512, ge=1, description="tokens per model turn")
    temperature: float = Field(default=1.0, gt=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    estimator: Estimator = "group_norm"
    learning_rate: float = Field(default=1e-6, gt=0)
    kl_coef: float = Field(default=0.0, ge=0, description="0: no reference model")
    is_correction: Literal["token", "seq", "off"] = Field(
        default="token",
        description="off-policy correction with vLLM's logprobs (--algo.advantage.is_correction_level): token, "
        "seq, or off",
    )
    filter_range: tuple[float, float] = Field(
        default=WIDE_FILTER, description="dynamic filtering: groups whose mean reward is outside are redrawn"
    )
    nodes: int = Field(default=1, ge=1)
    gpus_per_node: int = Field(default_factory=lambda: visible_gpus(), ge=1, description="default: this machine's GPUs")
    vllm_engines: int | None = Field(default=None, ge=1, description="default: one per GPU / tensor parallel size")
    vllm_tensor_parallel_size: int = Field(default=1, ge=1)
    vllm_gpu_memory_utilization: float = Field(default=0.6, gt=0, le=1)
    colocate: bool = Field(default=True, description="actor and vLLM share the GPUs (sleep modes on)")
    max_attempts: int = Field(default=3, ge=1)
    episode_timeout_s: float | None = Field(default=None, gt=0)
    save_steps: int = Field(default=-1, description="checkpoint every N steps; -1: only the final model")
    seed: int = 42
    runs_dir: str = "runs"
    run_id: str | None = None
    resume: str | None = Field(default=None, description="set by `agenthub run --resume RUN_DIR`")
    python: str = Field(default=sys.executable, description="the interpreter that has openrlhf, vllm, deepspeed")
    ray_address: str | None = Field(
        default=None, description="submit to this Ray cluster with `ray job submit` instead of running locally"
    )
    openrlhf: dict[str, Any] = Field(default_factory=dict, description="more train_ppo_ray flags, openrlhf.KEY=V")

    @field_validator("is_correction", mode="before")
    @classmethod
    def _off(cls, value: Any) -> Any:
        return "off" if value is False else value  # YAML reads a bare `off` as false

    @model_validator(mode="after")
    def _coherent(self) -> OpenRlhfConfig:
        if self.horizon is not None:
            from agenthub_trainer_openrlhf.horizon import schedule

            schedule(self.horizon)  # a bad kind or setting is refused here, not inside a vLLM actor
        if self.filter_range[0] >= self.filter_range[1]:
            raise ValueError(f"filter_range must be [low, high] with low < high, got {list(self.filter_range)}")
        check_rollout_backend(self, urls=self.url)
        if self.ray_address is not None and self.url is None and self.backend != "ray":
            raise ValueError(
                "ray_address= runs OpenRLHF's vLLM actors on other nodes, which cannot reach env servers started "
                "here on 127.0.0.1; add backend=ray [address=...] to start them on the cluster's nodes, or start "
                "env servers the cluster can reach and pass url=[...]"
            )
        return self

    @property
    def samples_per_rollout(self) -> int:
        return self.rollout_batch_size * self.n_samples_per_prompt

    @property
    def engines(self) -> int:
        return self.vllm_engines or max(1, self.nodes * self.gpus_per_node // self.vllm_tensor_parallel_size)
