"""``moot mcp --http``: the MCP server over streamable HTTP, with ``moot serve``'s rules.

The SDK's ASGI app is wrapped in the very middleware ``moot serve`` uses
(:mod:`moot.server.security`): the Host check (a name the server is bound to, a loopback name,
or an ``--allow-host`` name; 400 otherwise), the bearer token (401 without it), and the body
limit (413). A non-loopback address needs a token, as for ``moot serve``. The SDK's own
Host/Origin check is given the same names, so it agrees with moot's and also refuses a browser
page from another origin.
"""

from __future__ import annotations

from typing import Any

MCP_PATH = "/mcp"
DEFAULT_MAX_BODY = 1024 * 1024
"""A learn call carries its text in the body: larger than ``moot serve``'s 64 KiB."""


def _sdk_security(allowed: frozenset[str] | None) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    if allowed is None:  # a wildcard bind: the token is what keeps strangers out
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts: list[str] = []
    origins: list[str] = []
    for name in sorted(allowed):
        shown = f"[{name}]" if ":" in name else name
        hosts += [shown, f"{shown}:*"]
        origins += [f"{scheme}://{shown}{port}" for scheme in ("http", "https") for port in ("", ":*")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def create_http_app(server: Any, *, host: str = "127.0.0.1", token: str | None = None,
                    allowed_hosts: list[str] | None = None, max_body_bytes: int = DEFAULT_MAX_BODY) -> Any:
    """The SDK's streamable HTTP app at ``/mcp`` behind ``moot serve``'s Host, token and body checks."""
    from moot.server.security import BodyLimitMiddleware, HostCheckMiddleware, TokenMiddleware, allowed_host_names

    allowed = allowed_host_names(host, list(allowed_hosts or []))
    app: Any = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=_sdk_security(allowed),
                                          host=host, max_request_body_size=max_body_bytes)
    app = BodyLimitMiddleware(app, max_bytes=max_body_bytes)
    if token:
        app = TokenMiddleware(app, token=token)
    if allowed is not None:
        app = HostCheckMiddleware(app, allowed=allowed)  # outermost: checked first, as in moot serve
    return app


__all__ = ["DEFAULT_MAX_BODY", "MCP_PATH", "create_http_app"]
