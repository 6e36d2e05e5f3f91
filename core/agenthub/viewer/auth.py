"""The viewer's token: every ``/api/`` route needs it once ``agenthub view`` is started with ``token=``.

A program sends ``Authorization: Bearer <token>``, as to an env server. A browser cannot add that
header to the page's own requests, so the URL that ``agenthub view`` prints carries the token once,
``/?token=<token>``: that visit sets it as a cookie (``HttpOnly``, ``SameSite=Strict``, so no script
and no other site's page can use it) and redirects to ``/``, taking the token out of the address bar
and the history. The API then takes the cookie in place of the header. The page and its static
assets hold no run data and stay open, so that a visit without the token shows what to do.
"""

from __future__ import annotations

import hmac
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

from agenthub.service.middleware import send_error

COOKIE = "agenthub_view_token"


def _cookie(scope: Scope, name: str) -> bytes:
    for key, value in scope["headers"]:
        if key == b"cookie":
            for part in value.split(b";"):
                k, _, v = part.strip().partition(b"=")
                if k == name.encode():
                    return bytes(v)
    return b""


class ViewerTokenMiddleware:
    """Refuse ``/api/`` requests without the token (401, the viewer's JSON error); log a browser in from ``?token=``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()
        self.bearer = b"Bearer " + self.token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path.startswith("/api/") or path == "/api":
            if self._authorized(scope):
                await self.app(scope, receive, send)
            else:
                await send_error(
                    send,
                    401,
                    "unauthorized",
                    "this viewer needs its token: open the URL that `agenthub view` printed (it ends in ?token=...), "
                    "or send 'Authorization: Bearer <token>'",
                    {"WWW-Authenticate": "Bearer"},
                )
            return
        given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
        if path == "/" and given:
            await self._log_in(scope, send, given[-1].encode("latin-1"))
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        header = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        return hmac.compare_digest(header, self.bearer) or hmac.compare_digest(_cookie(scope, COOKIE), self.token)

    async def _log_in(self, scope: Scope, send: Send, given: bytes) -> None:
        if not hmac.compare_digest(given, self.token):
            await send_error(
                send,
                401,
                "unauthorized",
                "the token in this URL does not match the viewer's; open the URL that `agenthub view` printed",
            )
            return
        home = (scope.get("root_path") or "") + "/"
        cookie = f"{COOKIE}={given.decode('latin-1')}; Path={home}; HttpOnly; SameSite=Strict"
        headers = [(b"location", home.encode()), (b"set-cookie", cookie.encode("latin-1")), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
