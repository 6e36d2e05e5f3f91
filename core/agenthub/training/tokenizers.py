"""The tokenizer of the model a run trains, as the launch checks load it before the framework starts.

Every trainer measures the env's prompts with its model's tokenizer before launch. A dry run must write
nothing and reach for no network: it loads only what is on this machine (a model not there yet is
skipped, and the report says so), and the built-in tiny model is built in a temporary directory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from agenthub.errors import ConfigError
from agenthub.training.launch_checks import LaunchReport, TokenLimits, check_launch


@contextlib.contextmanager
def policy_tokenizer(
    model: str | None, *, offline: bool, seed: int = 0, tiny_model: Mapping[str, Any] | None = None
) -> Iterator[Any]:
    """The tokenizer of ``model``; None: of the built-in tiny model with these ``tiny_model`` settings (built
    in a temporary directory, removed on exit). ``offline``: only files already on this machine."""
    from transformers import AutoTokenizer

    if model is not None:
        yield AutoTokenizer.from_pretrained(model, local_files_only=offline)
        return
    from agenthub.testing import build_tiny_model

    settings = dict(tiny_model or {})
    with tempfile.TemporaryDirectory(prefix="agenthub-launch-check-") as scratch, _torch_cache_in(scratch):
        try:
            path = build_tiny_model(scratch, **{"seed": seed, **settings})
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"tiny_model settings {settings} were rejected: {exc}") from None
        yield AutoTokenizer.from_pretrained(path)


@contextlib.contextmanager
def _torch_cache_in(scratch: str) -> Iterator[None]:
    """Building a model imports ``torch._dynamo``, which makes ``$TMPDIR/torchinductor_$USER`` at import; here
    it goes into ``scratch`` and is removed with it (unless the user chose the folder: then it is theirs)."""
    if "TORCHINDUCTOR_CACHE_DIR" in os.environ:
        yield
        return
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(scratch, "torchinductor")
    try:
        yield
    finally:
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)


def model_positions(tokenizer: Any) -> int | None:
    """The most positions the tokenizer's model reads (its config's ``max_position_embeddings``), if its config
    is on this machine beside the tokenizer (a tokenizer-only folder, or a config without it: None)."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(tokenizer.name_or_path, local_files_only=True)
    except (OSError, ValueError):
        return None
    positions = getattr(config, "max_position_embeddings", None)
    return positions if isinstance(positions, int) and positions > 0 else None


def with_model_positions(limits: TokenLimits, tokenizer: Any) -> TokenLimits:
    """``limits`` capped by what the model of ``tokenizer`` reads (see :func:`model_positions`), unless they
    already say."""
    if limits.model_positions is not None:
        return limits
    return dataclasses.replace(limits, model_positions=model_positions(tokenizer))


def checks_with_tokenizer(
    env: str,
    model: str | None,
    check: Callable[[Any], LaunchReport],
    *,
    dry_run: bool,
    seed: int = 0,
    tiny_model: Mapping[str, Any] | None = None,
) -> LaunchReport:
    """``check(tokenizer)`` with ``model``'s tokenizer (see :func:`policy_tokenizer`).

    A dry run loads only what is on disk and reports a model not there yet as skipped; a real run
    refuses a tokenizer it cannot load, naming the model.
    """
    try:
        with policy_tokenizer(model, offline=dry_run, seed=seed, tiny_model=tiny_model) as tokenizer:
            return check(tokenizer)
    except OSError as exc:
        if not dry_run:
            raise ConfigError(f"cannot load the tokenizer of model={model!r}: {exc}; check model=") from None
        return LaunchReport(env=env, skipped=f"the tokenizer of {model!r} is not on this machine yet")


class LaunchSettings(Protocol):
    """What :func:`check_launch_with_model` reads of a trainer's config (every trainer's model has these)."""

    @property
    def env(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def split(self) -> str: ...
    @property
    def url(self) -> Sequence[str] | None: ...
    @property
    def token(self) -> str | None: ...


def check_launch_with_model(
    config: LaunchSettings,
    limits: TokenLimits,
    *,
    dry_run: bool,
    max_turns: int | None = None,
    system_prompt: str | None = None,
    seed: int = 0,
    tiny_model: Mapping[str, Any] | None = None,
) -> LaunchReport:
    """A trainer's launch checks: :func:`~agenthub.training.check_launch` of ``config``'s env, split and env
    servers (``url=``, ``token=``) against ``limits``, measured with the tokenizer of ``config.model`` (the
    built-in tiny model, from ``seed`` and ``tiny_model``, when it is None). See :func:`checks_with_tokenizer`."""
    return checks_with_tokenizer(
        config.env,
        config.model,
        lambda tokenizer: check_launch(
            config.env,
            tokenizer,
            with_model_positions(limits, tokenizer),
            split=config.split,
            urls=config.url or (),
            token=config.token,
            system_prompt=system_prompt,
            max_turns=max_turns,
            dry_run=dry_run,
        ),
        dry_run=dry_run,
        seed=seed,
        tiny_model=tiny_model,
    )
