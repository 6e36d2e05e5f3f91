"""Resuming from a checkpoint of a model whose output layer is its embedding (tied weights).

A checkpoint stores a tied weight once: the tiny model's ``lm_head.weight`` is ``model.embed_tokens.weight``,
so its safetensors hold only the latter. transformers' Trainer, loading the checkpoint into the model with
``strict=False``, then reports "There were missing keys in the checkpoint model loaded: ['lm_head.weight']"
(it excuses only ``_keys_to_ignore_on_save``, which is empty here). Nothing is missing: the weight is shared.
"""

from __future__ import annotations

from typing import Any


def tied_weights_load_quietly(trainer: Any) -> None:
    """Keep tied weights out of the Trainer's missing-keys report on resume, and tie them again after a load."""
    tied = set(getattr(trainer.model, "all_tied_weights_keys", None) or {})
    if not tied:
        return
    report = trainer._issue_warnings_after_load

    def report_untied(load_result: Any) -> None:
        missing = [key for key in load_result.missing_keys if key not in tied]
        if len(missing) < len(load_result.missing_keys):
            trainer.model.tie_weights()  # the loaded embedding is the output layer too
        report(load_result._replace(missing_keys=missing))

    trainer._issue_warnings_after_load = report_untied
