"""Which HTTP/1.1 protocol the env server runs.

The coalescing protocol (:mod:`agenthub.service.coalescing`, one write per response)
subclasses uvicorn's private ``HttpToolsProtocol``. pyproject.toml pins the uvicorn range it
was tested with; where the class is missing or lacks what the subclass calls anyway (a newer
uvicorn installed against the pin, httptools absent), the server runs uvicorn's own protocol,
answers the same, and says so once per process.
"""

from __future__ import annotations

import asyncio
import importlib
import warnings

COALESCING_MODULE = "agenthub.service.coalescing"
TESTED_UVICORN = "uvicorn>=0.36,<0.55"
"""The requirement in pyproject.toml (a test keeps them equal): the releases the subclass was tested with."""
_warned = False


class CoalescingUnavailableWarning(RuntimeWarning):
    """The env server runs uvicorn's own HTTP protocol: correct, with one more write per response."""


def http_protocol() -> type[asyncio.Protocol] | str:
    """The coalescing protocol class, or ``"auto"`` (uvicorn's choice) with one warning when it cannot be used."""
    try:
        coalescing = importlib.import_module(COALESCING_MODULE)
        problems: list[str] = coalescing.private_api_problems()
        protocol: type[asyncio.Protocol] = coalescing.CoalescingHttpToolsProtocol
    except (ImportError, AttributeError) as exc:
        problems = [f"{type(exc).__name__}: {exc}"]
    if not problems:
        return protocol
    _warn_once(problems)
    return "auto"


def _warn_once(problems: list[str]) -> None:
    global _warned
    if _warned:
        return
    _warned = True
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = f"uvicorn {version('uvicorn')}"
    except PackageNotFoundError:
        installed = "this uvicorn"
    warnings.warn(
        f"agenthub's one-write HTTP protocol cannot run on {installed} here ({'; '.join(problems)}); "
        "serving with uvicorn's own protocol, which answers the same with one more write per response. "
        f"To get it back: pip install httptools '{TESTED_UVICORN}'",
        CoalescingUnavailableWarning,
        stacklevel=3,
    )
