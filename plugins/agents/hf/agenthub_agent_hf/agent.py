"""The ``hf`` agent: a local transformers model behind agenthub's token-level policy."""

from __future__ import annotations

import sys
from typing import Any

from agenthub import ConfigError
from agenthub.rollout import ChatTemplateDeltas, SamplingParams, TokenPolicy
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenthub_agent_hf.generator import HFGenerator, LogprobMode
from agenthub_agent_hf.loading import DtypeName, LoadedModel, load_model
from agenthub_agent_hf.trained import fill_in, taken_line


class HFAgentSettings(BaseModel):
    """``agent.KEY=VALUE`` settings of ``agenthub eval agent=hf``."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="a local directory with a transformers causal LM and its tokenizer")
    device: str = Field(default="auto", description="auto (a CUDA GPU if there is one), cpu, cuda or cuda:N")
    dtype: DtypeName = Field(default="auto", description="auto: float32 on a CPU, bfloat16 (or float16) on a GPU")
    temperature: float = Field(default=1.0, ge=0, description="0 is greedy decoding")
    top_p: float = Field(default=1.0, gt=0, le=1)
    top_k: int = Field(default=0, ge=0, description="0 is off")
    max_tokens: int = Field(
        default=256, ge=1, description="most tokens per model turn; default: as trained (agenthub.json), else 256"
    )
    max_context: int | None = Field(
        default=None, ge=2, description="most tokens per episode, prompt included; default: the model's maximum"
    )
    max_batch: int = Field(default=16, ge=1, description="most concurrent requests in one model.generate call")
    batch_wait_ms: float = Field(default=10.0, ge=0, description="how long a request waits for others to batch with")
    system_prompt: str | None = Field(default=None, description="default: the env's instructions")
    seed: int | None = Field(default=None, description="seeds sampling; see HFGenerator for what is reproducible")
    logprobs: LogprobMode = Field(
        default="raw", description="raw: the model's distribution at temperature 1; processed: the sampled one"
    )
    threads: int | None = Field(
        default=None, ge=1, description="torch CPU threads (process-wide); 1 is fastest for tiny models"
    )


class HFPolicy(TokenPolicy):
    """A :class:`~agenthub.rollout.policy.TokenPolicy` whose engine is an :class:`HFGenerator`."""

    def __init__(
        self, loaded: LoadedModel, settings: HFAgentSettings, *, trained: dict[str, Any] | None = None
    ) -> None:
        """``trained``: the settings taken from the model directory's ``agenthub.json`` (for ``describe``)."""
        max_context = settings.max_context or loaded.max_positions or 4096
        if loaded.max_positions is not None and max_context > loaded.max_positions:
            raise ConfigError(
                f"agent hf: max_context={max_context} is more than the model's max_position_embeddings="
                f"{loaded.max_positions}; set agent.max_context to at most {loaded.max_positions}"
            )
        tokenizer = loaded.tokenizer
        stop = list(loaded.eos_token_ids)
        # The template's end-of-turn token (e.g. <|im_end|>) ends a turn even where it is not the eos.
        end_of_turn = ChatTemplateDeltas(tokenizer).assistant_close[0]
        if end_of_turn in set(tokenizer.all_special_ids):
            stop.append(end_of_turn)
        if not stop:
            raise ConfigError(
                f"agent hf: neither the model in {str(loaded.path)!r} nor its chat template names an end-of-turn "
                "token, so a turn could only end at max_tokens; set eos_token_id in its generation_config.json"
            )
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stop[0]
        self.loaded = loaded
        self.settings = settings
        self.trained = dict(trained or {})
        self.generator = HFGenerator(
            loaded.model,
            stop_token_ids=stop,
            pad_token_id=pad,
            max_batch=settings.max_batch,
            batch_wait_ms=settings.batch_wait_ms,
            seed=settings.seed,
            logprobs=settings.logprobs,
            max_positions=loaded.max_positions,
        )
        extra = {"top_k": settings.top_k} if settings.top_k else {}
        sampling = SamplingParams(
            temperature=settings.temperature, top_p=settings.top_p, max_tokens=settings.max_tokens, **extra
        )
        super().__init__(
            self.generator.generate,
            tokenizer,
            sampling,
            max_context=max_context,
            system_prompt=settings.system_prompt,
            name="hf",
        )

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "model": str(self.loaded.path),
            "device": str(self.loaded.device),
            "dtype": str(self.loaded.dtype).removeprefix("torch."),
            "logprobs": self.settings.logprobs,
            "max_batch": self.settings.max_batch,
            "seed": self.settings.seed,
            "as_trained": self.trained,
        }


def hf_agent(**settings: Any) -> HFPolicy:
    """Build the ``hf`` agent from ``agent.KEY=VALUE`` settings (see :class:`HFAgentSettings`); those not
    given are taken from the model directory's ``agenthub.json`` when it has them (:mod:`.trained`)."""
    settings, taken = fill_in(settings)
    try:
        parsed = HFAgentSettings(**settings)
    except ValidationError as exc:
        names = ", ".join(HFAgentSettings.model_fields)
        raise ConfigError(
            f"agent hf: invalid settings ({exc.error_count()} error(s)): {exc}\nsettings: {names}"
        ) from exc
    if parsed.threads is not None:
        import torch

        torch.set_num_threads(parsed.threads)
    if taken:
        print(taken_line(parsed.model, taken), file=sys.stderr, flush=True)
    return HFPolicy(load_model(parsed.model, device=parsed.device, dtype=parsed.dtype), parsed, trained=taken)
