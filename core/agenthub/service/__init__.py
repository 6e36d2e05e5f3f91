"""An environment as an HTTP service: server, client, launcher.

Its public face is for plugins that serve an HTTP app of their own (the search plugin's
``serve-retriever``) with the env server's guards: the bearer token, the body limit, the one JSON
error body, a loopback check, and the socket and event loop that ``agenthub serve`` uses. Each name
loads on first use, so importing a submodule stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from agenthub.cli.serve_command import is_loopback, refuse_open_exposure
    from agenthub.service.middleware import BearerTokenMiddleware, BodyLimitMiddleware, error_body
    from agenthub.service.serve import bind_socket, loop_factory, url_of
    from agenthub.service.settings import TOKEN_ENV_VAR

__getattr__ = lazy_exports(
    __name__,
    {
        "is_loopback": "agenthub.cli.serve_command",
        "refuse_open_exposure": "agenthub.cli.serve_command",
        "BearerTokenMiddleware": ".middleware",
        "BodyLimitMiddleware": ".middleware",
        "error_body": ".middleware",
        "bind_socket": ".serve",
        "loop_factory": ".serve",
        "url_of": ".serve",
        "TOKEN_ENV_VAR": ".settings",
    },
)

__all__ = [
    "TOKEN_ENV_VAR",
    "BearerTokenMiddleware",
    "BodyLimitMiddleware",
    "bind_socket",
    "error_body",
    "is_loopback",
    "loop_factory",
    "refuse_open_exposure",
    "url_of",
]
