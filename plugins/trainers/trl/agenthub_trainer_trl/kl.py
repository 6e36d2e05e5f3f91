"""KL from the model the run started from, measured without a penalty in the loss.

With ``beta=0`` (the default) TRL keeps no reference model and logs no KL. The
run still reports how far the policy has moved: for each episode, the mean over
its sampled tokens of ``log p_policy(token) - log p_start(token)``, the plain
Monte Carlo estimate of KL(policy || start) per token. The policy's logprobs are
the sampling logprobs the executor recorded, so this costs one forward pass of
the start model per rollout, and no gradient.

(With ``beta > 0``, the reference is in the loss: a gradient that is only the KL
term, as in a step where every episode of every group scored the same, is
rescaled by Adam into a full-size step back towards the random start model. On
``trail`` that undid a policy that had learned the task; see the README.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthub import TokenTrace


class StartKL:
    """Per-episode KL(policy || start model) estimates, from one batched forward of the start model."""

    def __init__(self, model: Any, *, temperature: float, pad_token_id: int, batch_size: int = 64) -> None:
        self.model = model.eval()
        self.temperature = temperature
        self.pad_token_id = pad_token_id
        self.batch_size = batch_size

    def per_episode(self, traces: Sequence[TokenTrace | None]) -> list[float | None]:
        import torch

        measured = [(i, t) for i, t in enumerate(traces) if t is not None and any(t.response_mask)]
        out: list[float | None] = [None] * len(traces)
        for start in range(0, len(measured), self.batch_size):
            chunk = measured[start : start + self.batch_size]
            sequences = [t.prompt_ids + t.response_ids for _, t in chunk]
            width = max(map(len, sequences))
            ids = torch.tensor([s + [self.pad_token_id] * (width - len(s)) for s in sequences])
            attention = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences])
            with torch.no_grad():
                logits = self.model(input_ids=ids.to(self.model.device), attention_mask=attention.to(self.model.device))
                logps = torch.log_softmax(logits.logits.float() / self.temperature, dim=-1).cpu()
            for row, (index, trace) in enumerate(chunk):
                first = len(trace.prompt_ids)
                positions = [first + j for j, m in enumerate(trace.response_mask) if m]
                start_logps = logps[row, [p - 1 for p in positions], [ids[row, p] for p in positions]]
                policy_logps = torch.tensor([trace.logprobs[p - first] for p in positions])
                out[index] = float((policy_logps - start_logps).mean())
        return out
