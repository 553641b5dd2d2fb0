"""Who may call the API and how much they may send: the Host it was addressed to, a bearer
token, a body size limit and JSON bodies that hold only what JSON allows.

All are plain ASGI middleware, so they apply before FastAPI parses anything: a request for
another host name is refused (400, the defence against DNS rebinding: a web page whose name
was pointed at 127.0.0.1 still sends its own name as Host), an oversized body is refused (413)
without being read into memory, and a request without the token never reaches a handler.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from typing import Any

from moot.errors import MootError

Scope = dict[str, Any]

OPEN_PATHS = ("/docs", "/openapi.json", "/api/health", "/static/", "/favicon.ico")
"""Readable without the token: the API's description, a liveness check, and the web page's own
files (they hold no data: the page asks the API for everything, with the token)."""


def is_open_path(path: str) -> bool:
    return path == "/" or path.startswith(OPEN_PATHS)


PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
               "font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The web page's Content-Security-Policy: scripts, styles, images and requests only from this
server, no inline script. Model output is escaped by the page; this is the second wall: even
markup that slipped through could neither run nor send anything to another host."""


class PageHeadersMiddleware:
    """Adds the Content-Security-Policy and no-sniff/no-referrer headers to every response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []),
                                                  (b"content-security-policy", PAGE_POLICY.encode()),
                                                  (b"x-content-type-options", b"nosniff"),
                                                  (b"referrer-policy", b"no-referrer"),
                                                  (b"x-frame-options", b"DENY")]}
            await send(message)

        await self.app(scope, receive, with_headers)


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "localhost.localdomain")


def allowed_host_names(bind: str, extra: list[str] | tuple[str, ...] = ()) -> frozenset[str] | None:
    """The Host names a server bound to ``bind`` answers to; ``None`` = any (a wildcard bind,
    where the token is what keeps strangers out)."""
    names = {n.lower().strip("[]") for n in extra}
    if is_loopback(bind):
        return frozenset(names | set(LOOPBACK_NAMES) | {bind.lower().strip("[]")})
    if bind in ("0.0.0.0", "::", "") and not names:
        return None
    return frozenset(names | {bind.lower().strip("[]")})


def host_name(header: str) -> str:
    """``Host`` without its port: ``127.0.0.1:8765`` → ``127.0.0.1``, ``[::1]:80`` → ``::1``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class HostCheckMiddleware:
    """Refuses (400) a request whose ``Host`` is not a name the server is bound to."""

    def __init__(self, app: Any, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        if host_name(header) not in self.allowed:
            await _send_json(send, 400, f"this server does not answer to Host {header[:100]!r} "
                             f"(it answers to: {', '.join(sorted(self.allowed))}; add a name with --allow-host)")
            return
        await self.app(scope, receive, send)


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve a non-loopback address without a token (anyone on the network could run models)."""
    if not is_loopback(host) and not token:
        raise MootError(f"refusing to listen on {host} without a token: anyone who can reach it could run models "
                        "and read indexed code", fix="pass --token T (or set MOOT_SERVE_TOKEN), or bind to 127.0.0.1")


async def _send_json(send: Any, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


class TokenMiddleware:
    """Requires ``Authorization: Bearer <token>`` on every path but :data:`OPEN_PATHS`."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.token or is_open_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            await _send_json(send, 401, "missing or wrong bearer token (send Authorization: Bearer <token>)",
                             [(b"www-authenticate", b"Bearer")])
            return
        await self.app(scope, receive, send)


class BodyLimitMiddleware:
    """Refuses request bodies over ``max_bytes`` with 413, by Content-Length or while streaming."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await _send_json(send, 413, f"request body of {int(length)} bytes is over the limit of {self.max_bytes}")
            return
        # Without a Content-Length (chunked upload) the body is read here, at most max_bytes
        # of it, before the app sees anything; the limit is small, so buffering it is cheap.
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > self.max_bytes:
                await _send_json(send, 413, f"request body is over the limit of {self.max_bytes} bytes")
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, _replaying(b"".join(chunks), receive), send)


def _replaying(body: bytes, receive: Any) -> Any:
    """A ``receive`` that hands the app the body already read, then whatever comes next."""
    replayed = False

    async def replay() -> Any:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class _NotPlainJson(ValueError):
    """A JSON body Python's parser accepts but JSON does not allow (NaN, Infinity, lone surrogates)."""


def _reject_constant(name: str) -> Any:
    raise _NotPlainJson(f"the request body holds {name}, which is not a JSON number (send a finite number)")


def _check_strings(value: Any) -> None:
    """Raise for a string (or key) holding a lone surrogate: not Unicode text, so it can be neither
    stored nor sent on (a surrogate pair was already joined by the parser)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = item[exc.start]
                raise _NotPlainJson(f"the request body holds a lone surrogate (\\u{ord(bad):04x}), which is not "
                                    "Unicode text (send UTF-8 text)") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def check_json_body(body: bytes) -> str | None:
    """Why a JSON body must be refused with 422 (NaN, Infinity, a lone surrogate), or ``None``.

    Python's parser accepts all three; they then fail deep inside (a NaN priority, text that
    cannot be written to SQLite or sent to a model) as a 500. Invalid JSON is left to FastAPI's own 422.
    """
    try:
        parsed = json.loads(body, parse_constant=_reject_constant)
    except _NotPlainJson as exc:
        return str(exc)
    except (ValueError, RecursionError):
        return None
    try:
        _check_strings(parsed)
    except _NotPlainJson as exc:
        return str(exc)
    return None


class JsonBodyMiddleware:
    """Refuses (422) a JSON request body with NaN, Infinity or a lone surrogate, before any handler.

    Placed inside :class:`BodyLimitMiddleware`, so the body it reads is already bounded."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH", "DELETE"):
            await self.app(scope, receive, send)
            return
        content_type = dict(scope.get("headers") or []).get(b"content-type", b"").split(b";")[0].strip().lower()
        if content_type and not content_type.endswith(b"json"):
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        problem = check_json_body(body) if body.strip() else None
        if problem is not None:
            await _send_json(send, 422, problem)
            return
        await self.app(scope, _replaying(body, receive), send)


async def _read_body(receive: Any) -> bytes:
    """The whole request body (already bounded by :class:`BodyLimitMiddleware`)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)
