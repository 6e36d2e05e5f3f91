"""SFT warm start with TRL's ``SFTTrainer`` on chat JSONL from ``agenthub export sft``.

Each conversation is tokenized with the model's own chat template, and only
the assistant's replies (each with its end-of-turn token) are trained on:
the mask is found by rendering the conversation up to each reply, so no chat
format is written here. Then GRPO can start from the result:
``agenthub run trainer=trl env=NAME model=runs/<sft run>/model``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agenthub import ConfigError
from agenthub.rollout import ChatTemplateDeltas, Message, render
from agenthub.training import recorded_run

from agenthub_trainer_trl.config import TrlConfig
from agenthub_trainer_trl.metrics import CURVE_FILE, MetricsCallback, plot_learning_curve
from agenthub_trainer_trl.runs import (
    CHECKPOINTS_DIR,
    FINAL_MODEL_DIR,
    TENSORBOARD_DIR,
    last_checkpoint,
    model_path,
    open_run,
)
from agenthub_trainer_trl.shared_settings import shared_settings


def read_conversations(path: str | Path) -> list[list[Message]]:
    """The ``messages`` of each line of a chat JSONL file."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"dataset {str(file)!r} does not exist; make one with `agenthub export sft RUN_DIR`")
    conversations = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            messages = json.loads(line)["messages"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{file}:{number} is not a chat record with 'messages' ({exc})") from None
        conversations.append([{"role": str(m["role"]), "content": str(m["content"])} for m in messages])
    if not conversations:
        raise ConfigError(f"dataset {str(file)!r} has no conversations")
    return conversations


def assistant_tokens(tokenizer: Any, messages: Sequence[Message]) -> tuple[list[int], list[int]]:
    """Token ids of the conversation and a mask that is 1 on the assistant's replies and their end token."""
    close = ChatTemplateDeltas(tokenizer).assistant_close
    ids = render(tokenizer, messages, add_generation_prompt=False)
    mask = [0] * len(ids)
    for k, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        before = render(tokenizer, messages[:k], add_generation_prompt=True)
        after = render(tokenizer, messages[: k + 1], add_generation_prompt=False)
        if after[: len(before)] != before or ids[: len(after)] != after:
            raise ConfigError(
                "the chat template rewrites earlier turns when a message is added, so the assistant's tokens "
                "cannot be located; use a model whose template only appends"
            )
        end = len(after) - len(close) + 1 if after[-len(close) :] == close else len(after)
        for i in range(len(before), end):  # the reply and the end-of-turn token; not the template's newline
            mask[i] = 1
    return ids, mask


def sft_settings(config: TrlConfig, output_dir: Path) -> dict[str, Any]:
    """``SFTConfig``'s arguments for ``config``."""
    from trl import SFTConfig

    return {
        "output_dir": str(output_dir),
        "num_train_epochs": config.epochs,
        "per_device_train_batch_size": config.batch_size,
        "learning_rate": config.learning_rate,
        "max_length": config.max_context,
        **shared_settings(config, SFTConfig),
        "disable_tqdm": True,
        **config.trl,
    }


def run_sft(config: TrlConfig) -> int:
    from datasets import Dataset
    from torch.utils.tensorboard import SummaryWriter
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback
    from transformers.integrations import TensorBoardCallback
    from trl import SFTConfig, SFTTrainer

    if config.dataset is None:
        raise ConfigError("mode=sft needs dataset=FILE; make one with `agenthub export sft RUN_DIR --only-success`")
    conversations = read_conversations(config.dataset)  # before a run directory is made for nothing
    store, _ = open_run(config)
    print(f"run directory: {store.path}", file=sys.stderr, flush=True)
    started = time.monotonic()
    rows: list[dict[str, list[int]]] = []

    def sum_up() -> dict[str, Any]:  # also when the run fails or is interrupted: what it did so far
        records = store.metrics()
        summary: dict[str, Any] = {"elapsed_s": round(time.monotonic() - started, 1), "conversations": len(rows)}
        if any("loss" in r for r in records):
            plot_learning_curve(records, store.path / CURVE_FILE, title=f"trl SFT · run {store.path.name}")
            summary["learning_curve"] = CURVE_FILE
        return summary

    with recorded_run(store, sum_up):
        path = model_path(config, store.path)
        tokenizer = AutoTokenizer.from_pretrained(path)
        for messages in conversations:
            ids, mask = assistant_tokens(tokenizer, messages)
            rows.append({"input_ids": ids, "assistant_masks": mask})
        settings = sft_settings(config, store.path / CHECKPOINTS_DIR)
        try:
            args = SFTConfig(**settings)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"TRL rejected the SFT settings: {exc}; check the trl.* keys") from None
        trainer = SFTTrainer(
            model=AutoModelForCausalLM.from_pretrained(path),
            args=args,
            train_dataset=Dataset.from_list(rows),
            processing_class=tokenizer,
            callbacks=[
                MetricsCallback(store),
                TensorBoardCallback(SummaryWriter(log_dir=str(store.path / TENSORBOARD_DIR))),
            ],
        )
        trainer.remove_callback(PrinterCallback)  # MetricsCallback prints a shorter line
        trainer.train(resume_from_checkpoint=last_checkpoint(store.path) if config.resume else None)
        trainer.save_model(str(store.path / FINAL_MODEL_DIR))
        tokenizer.save_pretrained(str(store.path / FINAL_MODEL_DIR))
    print(f"run saved in {store.path}\nmodel: {store.path / FINAL_MODEL_DIR}")
    print(f"next: agenthub run trainer=trl env={config.env} model={store.path / FINAL_MODEL_DIR}")
    return 0
