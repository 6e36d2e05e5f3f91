"""The settings of ``agenthub run trainer=trl``: validated here, before anything heavy is imported."""

from __future__ import annotations

from typing import Any, Literal

from agenthub.config import MultiPlayerConfig, RolloutBackendConfig
from agenthub.training import EnvUrls
from pydantic import ConfigDict, Field, model_validator

DEFAULT_ENV = "trail"

TINY_MODEL_DEFAULTS: dict[str, Any] = {"initializer_range": 0.1}
"""The built-in tiny model's settings unless ``tiny_model.*`` overrides them. A wider initialisation than
the architecture's 0.02 gives the random attention heads varied patterns from the start; from there GRPO
finds the sign-reading behaviour of ``trail`` in about 100 steps, where 0.02 had not in 100."""

# One token a turn for the tiny model: its reply is one word. With 4 tokens, 4 of 9 runs on trail
# collapsed onto a fixed reply before they learned to read the sign; with 1, 2 of 6 (see the README).
TINY_MODEL_TURN_TOKENS = 1
MODEL_TURN_TOKENS = 256

# An entropy bonus for the tiny model. With beta=0, a policy that collapses onto one fixed reply before it
# reads the observation stays there: every episode of a group then scores the same, all advantages are 0,
# and nothing else moves it. The bonus is the gradient left in such a step; it spreads the reply again until
# the other replies are sampled and scored. Without it, 1 run in 3 on trail ended on a fixed reply (see the
# README). A pretrained model is left at TRL's 0: its first distribution is already spread where it matters,
# and over a vocabulary of 100k+ tokens a bonus mostly feeds tokens that are never right.
TINY_MODEL_ENTROPY_COEF = 0.01
MODEL_ENTROPY_COEF = 0.0

RESUMABLE_CHANGES = frozenset({"steps", "resume", "save_steps", "backend", "address", "test_episodes"})
"""Settings a resumed run may change; any other difference is refused (it would be a different run)."""


class TrlConfig(RolloutBackendConfig, MultiPlayerConfig):
    """Everything ``agenthub run trainer=trl`` accepts; ``trl.KEY=V`` passes any other TRL setting through.

    On a multi-player env (``tictactoe``) the model plays ``seat`` (default 0) against ``opponent``
    (default: itself, on every other seat) and learns from ``seat``'s trajectories only: GRPO takes
    one trajectory per prompt, so one seat is trained.
    """

    model_config = ConfigDict(extra="forbid")

    trainer: Literal["trl"] = "trl"
    mode: Literal["grpo", "sft"] = Field(default="grpo", description="grpo: RL on the env; sft: imitate a dataset")
    env: str = Field(default=DEFAULT_ENV, description="a registered env")
    model: str | None = Field(
        default=None, description="a model directory or hub id; default: a tiny random model built in the run dir"
    )
    tiny_model: dict[str, Any] = Field(
        default_factory=dict, description="settings for the built-in tiny model (hidden_size, layers, seed, ...)"
    )
    split: str = "train"
    steps: int = Field(default=80, ge=1, description="optimizer steps (GRPO: one rollout batch each)")
    # 16 tasks of 4 episodes rather than 8 of 8: the same 64 episodes a step, over twice as many tasks. A
    # group's baseline only compares episodes of one task; what the step learns across tasks is averaged over
    # 16 of them, so a reply that happened to pay on this step's few tasks (right at fork 2, say, whatever the
    # sign) is rewarded less, and reading the observation more. On trail, 8x8 ended on such a reply in about
    # 1 run in 3 (see the README).
    tasks_per_step: int = Field(default=16, ge=1, description="distinct tasks per step")
    num_generations: int = Field(default=4, ge=2, description="episodes per task: the GRPO group")
    learning_rate: float = Field(default=5e-3, gt=0)
    beta: float = Field(
        default=0.0, ge=0, description="KL penalty coefficient; 0: no penalty, KL from the start model is still logged"
    )
    scale_rewards: Literal["none", "group", "batch"] = Field(
        default="none",
        description="none (Dr. GRPO): advantage = reward - group mean; group: also divided by the group's std",
    )
    entropy_coef: float | None = Field(
        default=None,
        ge=0,
        description=f"entropy bonus coefficient (TRL's entropy_coef); default: {TINY_MODEL_ENTROPY_COEF} with the "
        f"tiny model, {MODEL_ENTROPY_COEF} with model=...",
    )
    kl_metric: bool = Field(
        default=True, description="with beta=0, log KL from the start model (one extra forward pass per step)"
    )
    temperature: float = Field(default=1.0, gt=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_tokens: int | None = Field(
        default=None,
        ge=1,
        description=f"tokens per model turn; default: {TINY_MODEL_TURN_TOKENS} with the tiny model, "
        f"{MODEL_TURN_TOKENS} with model=...",
    )
    max_context: int = Field(default=1024, ge=16, description="prompt plus every turn of an episode, in tokens")
    horizon: int | dict[str, Any] | None = Field(
        default=None, description="turn limit per step: N, or {kind: stepwise, rounds: [...], every: K}; default env's"
    )
    seed: int = 0
    concurrency: int = Field(default=64, ge=1, description="episodes in flight")
    processes: int = Field(default=1, ge=1, description="local env server processes")
    url: EnvUrls = Field(default=None, description="env servers already running; default: start some")
    token: str | None = None
    max_attempts: int = Field(default=3, ge=1)
    episode_timeout_s: float | None = Field(default=None, gt=0)
    save_steps: int = Field(default=10, ge=1, description="checkpoint every N steps (and at the end)")
    test_episodes: int = Field(
        default=256, ge=0, description="mode=grpo: at the end, score the model on this many test-split tasks; 0: skip"
    )
    save_total_limit: int | None = Field(default=2, ge=1)
    logging_steps: int = Field(default=1, ge=1)
    runs_dir: str = "runs"
    run_id: str | None = None
    resume: str | None = Field(default=None, description="set by `agenthub run --resume RUN_DIR`")
    use_vllm: bool = Field(default=False, description="generate with TRL's vLLM (GPU, one process)")
    vllm_mode: Literal["colocate", "server"] = "colocate"
    dataset: str | None = Field(default=None, description="mode=sft: chat JSONL from `agenthub export sft`")
    epochs: float = Field(default=3.0, gt=0, description="mode=sft: passes over the dataset")
    batch_size: int = Field(default=8, ge=1, description="mode=sft: conversations per step")
    trl: dict[str, Any] = Field(default_factory=dict, description="more GRPOConfig/SFTConfig settings, trl.KEY=V")

    @model_validator(mode="after")
    def _coherent(self) -> TrlConfig:
        if self.mode == "sft" and self.dataset is None and self.resume is None:
            raise ValueError(
                "mode=sft needs dataset=FILE (chat JSONL); make one with `agenthub export sft RUN_DIR --only-success`"
            )
        if self.model is not None and self.tiny_model:
            raise ValueError("tiny_model.* settings apply only without model=...; drop one of them")
        if self.max_tokens is None:
            self.max_tokens = TINY_MODEL_TURN_TOKENS if self.model is None else MODEL_TURN_TOKENS
        if self.entropy_coef is None:
            self.entropy_coef = TINY_MODEL_ENTROPY_COEF if self.model is None else MODEL_ENTROPY_COEF
        return self

    @property
    def turn_tokens(self) -> int:
        """``max_tokens`` as resolved: a model turn's token budget."""
        assert self.max_tokens is not None  # filled in by _coherent
        return self.max_tokens

    @property
    def episodes_per_step(self) -> int:
        return self.tasks_per_step * self.num_generations
