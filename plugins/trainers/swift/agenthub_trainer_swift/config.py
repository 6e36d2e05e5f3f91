"""The settings of ``agenthub run trainer=swift``: validated here, before anything heavy is imported."""

from __future__ import annotations

from typing import Any, Literal

from agenthub.config import MultiPlayerConfig, RolloutBackendConfig, check_rollout_backend
from agenthub.training import EnvUrls
from pydantic import ConfigDict, Field, model_validator

DEFAULT_ENV = "trail"


class SwiftConfig(RolloutBackendConfig, MultiPlayerConfig):
    """Everything ``agenthub run trainer=swift`` accepts; ``swift.KEY=V`` passes any other ``swift rlhf`` flag.

    ``backend=ray [address=...]``: the env servers on the Ray cluster's nodes (swift itself runs here).
    ``seat=``, ``opponent=``: multi-player envs, with ``mode=server`` (the hub executor plays whole episodes);
    one trained seat per episode.
    """

    model_config = ConfigDict(extra="forbid")

    trainer: Literal["swift", "ms-swift"] = "swift"
    env: str = Field(default=DEFAULT_ENV, description="a registered env")
    split: str = "train"
    model: str | None = Field(
        default=None, description="a model directory or hub id; default: a tiny random Qwen2 built in the run dir"
    )
    model_type: str | None = Field(default=None, description="swift's --model_type (qwen2 for the tiny model)")
    template: str | None = Field(default=None, description="swift's --template (chatml for the tiny model)")
    mode: Literal["colocate", "server"] = Field(
        default="colocate",
        description="colocate: swift samples each turn in the training process (transformers, or vLLM with "
        "use_vllm); server: a `swift rollout` vLLM server plays whole episodes with the hub executor",
    )
    use_vllm: bool = Field(default=False, description="mode=colocate: sample with vLLM in the training process (GPU)")
    steps: int = Field(default=20, ge=1, description="optimizer steps, one rollout batch each")
    tasks_per_step: int = Field(default=4, ge=1, description="distinct tasks per step")
    num_generations: int = Field(default=4, ge=2, description="episodes per task: the GRPO group")
    learning_rate: float = Field(default=1e-5, gt=0)
    beta: float = Field(default=0.0, ge=0, description="KL penalty coefficient")
    temperature: float = Field(default=1.0, gt=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_tokens: int = Field(default=64, ge=1, description="tokens per model turn")
    max_context: int = Field(default=2048, ge=16, description="prompt plus every turn of an episode, in tokens")
    max_turns: int | None = Field(default=None, ge=1, description="turn limit per episode; default: the env's")
    horizon: int | dict[str, Any] | None = Field(
        default=None,
        description="turn limit by training step: N, or {kind: stepwise, rounds: [...], every: K} (ScalingInter-RL); "
        "instead of max_turns",
    )
    seed: int = 0
    processes: int = Field(default=1, ge=1, description="local env server processes (without url)")
    url: EnvUrls = Field(default=None, description="env servers already running; default: start some")
    token: str | None = None
    max_attempts: int = Field(default=3, ge=1, description="tries per episode on infra failures")
    episode_timeout_s: float | None = Field(default=None, gt=0)
    rollout_host: str = Field(default="127.0.0.1", description="mode=server: where `swift rollout` listens")
    rollout_port: int = Field(default=8000, ge=1, le=65535)
    runs_dir: str = "runs"
    run_id: str | None = None
    resume: str | None = Field(
        default=None, description="set by `agenthub run --resume RUN_DIR`: swift's --resume_from_checkpoint there"
    )
    swift: dict[str, Any] = Field(default_factory=dict, description="more `swift rlhf` flags, swift.KEY=V")
    rollout: dict[str, Any] = Field(default_factory=dict, description="mode=server: more `swift rollout` flags")

    @model_validator(mode="after")
    def _coherent(self) -> SwiftConfig:
        if self.horizon is not None and self.max_turns is not None:
            raise ValueError("max_turns is a fixed horizon; set horizon=N or horizon.kind=... or max_turns, not both")
        if self.horizon is not None:
            from agenthub_trainer_swift.horizon import schedule

            schedule(self.horizon)  # a bad kind or setting is refused here, not inside swift
        if self.mode == "server" and self.use_vllm:
            raise ValueError("use_vllm applies to mode=colocate; mode=server always samples with vLLM; drop one")
        if self.mode == "colocate" and (self.seat is not None or self.opponent is not None):
            raise ValueError(
                "seat= and opponent= need mode=server: mode=colocate steps each episode's env session one model turn "
                "at a time and plays single-player envs only (or train with trainer=trl, verl, openrlhf or areal)"
            )
        check_rollout_backend(self, urls=self.url)
        return self

    @property
    def episodes_per_step(self) -> int:
        return self.tasks_per_step * self.num_generations
