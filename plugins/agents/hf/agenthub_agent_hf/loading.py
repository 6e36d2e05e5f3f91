"""Loading a local transformers model and its tokenizer, never from the network."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agenthub import ConfigError

DeviceName = str
"""``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``."""
DtypeName = Literal["auto", "float32", "bfloat16", "float16"]

_HOW_TO_GET_A_MODEL = (
    "agent.model must be a local directory holding a transformers causal LM (config.json, weights, tokenizer "
    "files); models are never downloaded here: fetch one first (e.g. `hf download Qwen/Qwen2.5-0.5B-Instruct "
    "--local-dir DIR`) or build a tiny one with agenthub.testing.tiny_model.build_tiny_model(DIR)"
)


class ModelLoadError(ConfigError):
    """The model directory, device or dtype cannot be used."""


@dataclass(frozen=True)
class LoadedModel:
    """A model ready to generate, with what the generator needs to know about it."""

    model: Any
    tokenizer: Any
    path: Path
    device: Any
    dtype: Any
    eos_token_ids: tuple[int, ...]
    """End-of-sequence ids from the model's own generation config and tokenizer."""
    max_positions: int | None
    """The longest context the model's config admits (``max_position_embeddings``), if it says."""


def resolve_device(device: DeviceName) -> Any:
    """``auto`` is the first CUDA GPU when there is one, else the CPU."""
    torch: Any = importlib.import_module("torch")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, ValueError) as exc:
        raise ModelLoadError(f"agent hf: unknown device {device!r}; use auto, cpu, cuda or cuda:N") from exc
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ModelLoadError(
                f"agent hf: device={device} but torch {torch.__version__} sees no CUDA GPU; "
                "use device=cpu (or auto), or install a CUDA build of torch"
            )
        if resolved.index is not None and resolved.index >= torch.cuda.device_count():
            raise ModelLoadError(
                f"agent hf: device={device} but only {torch.cuda.device_count()} CUDA device(s) are visible"
            )
    elif resolved.type != "cpu":
        raise ModelLoadError(f"agent hf: device {device!r} is not supported; use auto, cpu, cuda or cuda:N")
    return resolved


def resolve_dtype(dtype: DtypeName, device: Any) -> Any:
    """``auto`` is float32 on a CPU, bfloat16 on a GPU that has it, else float16."""
    torch: Any = importlib.import_module("torch")
    if dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]


def check_model_dir(path: str | Path) -> Path:
    """The model directory, or a :class:`ModelLoadError` that says what is missing."""
    directory = Path(path).expanduser()
    if not directory.exists():
        raise ModelLoadError(f"agent hf: model path {str(path)!r} does not exist; {_HOW_TO_GET_A_MODEL}")
    if not directory.is_dir():
        raise ModelLoadError(f"agent hf: model path {str(path)!r} is a file, not a directory; {_HOW_TO_GET_A_MODEL}")
    if not (directory / "config.json").is_file():
        raise ModelLoadError(f"agent hf: {str(path)!r} has no config.json, so it is not a model; {_HOW_TO_GET_A_MODEL}")
    return directory


def _dtype_keyword() -> str:
    # transformers 4.56 renamed from_pretrained's torch_dtype to dtype.
    transformers: Any = importlib.import_module("transformers")
    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def _as_ids(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, int):
        return [value]
    return [int(v) for v in value]


def load_model(path: str | Path, *, device: DeviceName = "auto", dtype: DtypeName = "auto") -> LoadedModel:
    """Load a causal LM and its tokenizer from a local directory, in eval mode, on ``device``.

    The model's ``generation_config`` is replaced by one holding only its
    special token ids, so that sampling defaults shipped with a checkpoint
    (top_k, repetition_penalty, ...) never change what the caller asked for.
    """
    directory = check_model_dir(path)
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, torch_device)
    transformers: Any = importlib.import_module("transformers")
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(directory, local_files_only=True)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            directory, local_files_only=True, **{_dtype_keyword(): torch_dtype}
        )
    except Exception as exc:  # transformers raises OSError, ValueError, ImportError, ... for a bad directory
        raise ModelLoadError(
            f"agent hf: cannot load a causal LM and tokenizer from {str(directory)!r} "
            f"({type(exc).__name__}: {exc}); {_HOW_TO_GET_A_MODEL}"
        ) from exc
    if getattr(tokenizer, "chat_template", None) is None:
        raise ModelLoadError(
            f"agent hf: the tokenizer in {str(directory)!r} has no chat template, and the hf agent renders every "
            "turn with the tokenizer's own template; use a chat/instruct model, or set tokenizer.chat_template "
            "and save it into the directory"
        )
    model = model.to(torch_device).eval()
    eos = _as_ids(getattr(model.generation_config, "eos_token_id", None)) + _as_ids(tokenizer.eos_token_id)
    special = {
        key: getattr(model.generation_config, key, None) for key in ("bos_token_id", "eos_token_id", "pad_token_id")
    }
    model.generation_config = transformers.GenerationConfig(**{k: v for k, v in special.items() if v is not None})
    max_positions = getattr(model.config, "max_position_embeddings", None)
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        path=directory,
        device=torch_device,
        dtype=torch_dtype,
        eos_token_ids=tuple(dict.fromkeys(eos)),
        max_positions=int(max_positions) if isinstance(max_positions, int) else None,
    )
