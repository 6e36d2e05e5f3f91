"""One trajectory as the tensor dict AReaL's PPO actor trains on.

The layout is that of AReaL's own ``RLVRWorkflow`` and ``MultiTurnWorkflow``:
one row (batch dimension 1), the whole episode as one sequence, every
per-token field aligned to ``input_ids`` (the logprob at position i is that of
token i):

* ``input_ids``: prompt, then each model turn as sampled with the env's turns
  (in the model's chat template) between them;
* ``loss_mask``: 1 on sampled tokens, 0 on prompt, env and template tokens;
* ``logprobs``: the sampler's logprobs on sampled tokens, 0 elsewhere;
* ``versions``: the weight version that sampled each token, -1 elsewhere
  (AReaL's staleness control and decoupled PPO loss read it);
* ``attention_mask``: all ones (``concat_padded_tensors`` pads groups later);
* ``rewards``: the episode's reward, shape ``[1]``.

Episodes that failed for infrastructure reasons give None: AReaL rejects the
trajectory and never trains on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthub import Trajectory


def episode_tensors(trajectory: Trajectory, versions: Sequence[int]) -> dict[str, Any] | None:
    """AReaL's tensor dict for ``trajectory``; ``versions`` is per response token (see ``token_versions``).

    None for an infrastructure failure (``env_error``, ``agent_error``,
    ``timeout``), and for an episode in which the model sampled nothing (it
    has no token to learn from, e.g. the prompt alone filled the context).
    """
    import torch

    trace = trajectory.tokens
    if not trajectory.trainable or trace is None or not any(trace.response_mask):
        return None
    if len(versions) != len(trace.response_ids):
        raise ValueError(f"got {len(versions)} versions for {len(trace.response_ids)} response tokens")
    prompt = len(trace.prompt_ids)
    seq = [*trace.prompt_ids, *trace.response_ids]
    row = {
        "input_ids": torch.tensor(seq, dtype=torch.int32),
        "loss_mask": torch.tensor([0] * prompt + list(trace.response_mask), dtype=torch.int32),
        "logprobs": torch.tensor([0.0] * prompt + list(trace.logprobs), dtype=torch.float32),
        "versions": torch.tensor([-1] * prompt + list(versions), dtype=torch.int32),
        "attention_mask": torch.ones(len(seq), dtype=torch.bool),
        "rewards": torch.tensor(trajectory.reward, dtype=torch.float32),
    }
    return {key: value.unsqueeze(0) for key, value in row.items()}
