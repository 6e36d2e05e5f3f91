"""Secrets kept out of what a run stores and prints: its ``config.yaml``, ``run.json``, metrics and messages.

A setting is a secret by its name: the last word of its key (split at ``_``, ``-``, ``.`` and camelCase) is
``token``, ``key``, ``secret``, ``password`` (and a few spellings of them): ``token``, ``api_key``,
``hf_token``, ``X-Api-Key``, ``client_secret``. Only text is a secret (``max_tokens: 512`` is a number, and a
key ending in another word, ``tokenizer`` or ``api_key_env``, is not one); nor is a vocabulary token's text
(``stop_token``, ``pad_token``). Under a secret key every string is redacted, however deeply nested.

A stored value becomes :data:`REDACTED`. Resuming a run therefore needs its secrets again:
:func:`fill_secrets` takes them from what the user gives (``token=...``), the token also from
``$AGENTHUB_TOKEN``, and otherwise says which ones to give.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from agenthub.errors import ConfigError

REDACTED = "<redacted>"
"""What a stored secret reads as."""

TOKEN_ENV_VAR = "AGENTHUB_TOKEN"
"""Where a resumed run's ``token`` comes from when it is not given again (as for ``agenthub serve``)."""

_SECRET_WORDS = frozenset(
    {"token", "key", "apikey", "secret", "password", "passwd", "passphrase", "credential", "credentials"}
    | {"authorization"}  # a header's value
)
_TEXT_TOKENS = frozenset({"stop", "pad", "eos", "bos", "unk", "sep", "cls", "mask", "special", "start", "end"})
"""Words before ``token`` that make it a piece of vocabulary (``stop_token: "</s>"``), not a credential."""
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")


def is_secret_name(name: str) -> bool:
    """Whether a setting called ``name`` holds a secret (see the module's description)."""
    words = re.findall(r"[a-z0-9]+", _CAMEL.sub(r"\1_\2", name).lower())
    if not words or words[-1] not in _SECRET_WORDS:
        return False
    return not (words[-1] == "token" and len(words) > 1 and words[-2] in _TEXT_TOKENS)


def redact_secrets(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` with every secret (by its key's name, at any depth) replaced by :data:`REDACTED`."""
    return {str(key): _redact(value, is_secret_name(str(key))) for key, value in data.items()}


def _redact(value: Any, secret: bool) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _redact(v, secret or is_secret_name(str(k))) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v, secret) for v in value]
    if secret and isinstance(value, str) and value:
        return REDACTED
    return value


def secret_values(data: Mapping[str, Any]) -> set[str]:
    """The secrets in ``data`` themselves (to scrub from a message with :func:`scrub`)."""
    return {value for _, value in _secrets(data, "", False) if value != REDACTED}


def redacted_keys(data: Mapping[str, Any]) -> list[str]:
    """The dotted keys of ``data`` whose value was redacted (``token``, ``agent_kwargs.api_key``)."""
    return [path for path, value in _secrets(data, "", False) if value == REDACTED]


def _secrets(value: Any, path: str, secret: bool) -> Iterator[tuple[str, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _secrets(item, f"{path}.{key}" if path else str(key), secret or is_secret_name(str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _secrets(item, f"{path}[{index}]", secret)
    elif secret and isinstance(value, str) and value:
        yield path, value


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by :data:`REDACTED` (for a log line or an error)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret and secret != REDACTED:
            text = text.replace(secret, REDACTED)
    return text


def fill_secrets(data: Mapping[str, Any], *, run_dir: str, command: str) -> dict[str, Any]:
    """A resumed run's settings with the secrets its directory does not keep: ``token`` from
    ``$AGENTHUB_TOKEN`` when it was not given again; any other still missing is refused, saying how to give it.

    ``command`` is how the run is resumed (``agenthub eval``), for the message."""
    filled = dict(_fill(data, "", os.environ.get(TOKEN_ENV_VAR) or None))
    missing = redacted_keys(filled)
    if missing:
        again = " ".join(f"{key}=..." for key in missing)
        raise ConfigError(
            f"{run_dir} was started with {', '.join(missing)}, which the run directory does not keep (secrets "
            f"are never written to disk); give them again: {command} --resume {run_dir} {again}"
            + (f" (the token may also come from ${TOKEN_ENV_VAR})" if "token" in missing else "")
        )
    return filled


def _fill(value: Any, path: str, token: str | None) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _fill(v, f"{path}.{k}" if path else str(k), token) for k, v in value.items()}
    if path == "token" and value == REDACTED and token is not None:
        return token
    return value


def write_private_text(path: os.PathLike[str] | str, text: str) -> None:
    """Write a file that holds a secret a child process needs (a trainer's settings with the run's token):
    readable by its owner only (0600), an existing file included."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # O_CREAT's mode does not apply to a file that already exists
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(text)
