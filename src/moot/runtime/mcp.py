"""MCP tool servers for moot's agents: ``SubAgent(tools=[MCPToolServer(...)])``.

An :class:`MCPToolServer` is a server that speaks the Model Context Protocol, started as a
command (stdio) or reached at a URL (streamable HTTP), through the official SDK (``mcp``).
An agent that is given one lists its tools once per run (the listing is cached under the
run's id), and each becomes a moot :class:`~moot.runtime.tools.Tool` with the server's own
JSON schema. Calls then go through the runtime's one tool path: arguments checked against the
schema before anything is sent, the run's deadline as the call's limit, a ``tool_call`` event
(so the run store, ``moot runs show`` and the web page's tool spans show it), and the result as
text the model reads, cut at ``max_result_chars``.

A server that dies, hangs or cannot be started never hangs a run: a hung call ends at the
tool's timeout or the run's deadline (whichever is sooner) with a tool error; a dead server's
call fails at once with its exit status and the last lines it wrote to stderr, and the next
call starts it again. The session is held by one background task per event loop, so calls
from parallel agents share one process.
"""

from __future__ import annotations

import asyncio
import collections
import fnmatch
import re
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from moot.errors import ConfigError
from moot.runtime.tools import Tool, ToolArgumentsError

DEFAULT_CALL_TIMEOUT_S = 30.0
DEFAULT_CONNECT_TIMEOUT_S = 20.0
DEFAULT_MAX_RESULT_CHARS = 6000
"""A tool result longer than this is cut (the embedded model's context is 8k tokens)."""
_LISTINGS_KEPT = 32
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")


class MCPServerError(RuntimeError):
    """The server could not be reached, died, or answered with an error."""


class _AnyArguments(BaseModel):
    model_config = ConfigDict(extra="allow")


@dataclass
class MCPTool(Tool):
    """One tool of an MCP server as a moot tool: its arguments are checked against the server's
    JSON schema here, then the call goes to the server."""

    server: MCPToolServer | None = None
    remote_name: str = ""
    """The tool's name on the server (``name`` may carry a prefix or be made a valid identifier)."""

    @property
    def source(self) -> str:
        """Where the tool runs, for the run's events: ``mcp:<server>``."""
        return self.server.source if self.server is not None else "mcp"

    _validator: Any = field(default=None, init=False, repr=False, compare=False)

    def validate_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self._validator is None:  # built once per tool: building it costs more than using it
            import jsonschema

            self._validator = jsonschema.Draft202012Validator(self.parameters or {"type": "object"})
        validator = self._validator
        problems = [f"{'.'.join(str(p) for p in e.absolute_path) or '(arguments)'}: {e.message}"
                    for e in sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))]
        if problems:
            raise ToolArgumentsError(f"invalid arguments for tool {self.name!r}: {'; '.join(problems[:5])}")
        return dict(arguments)


@dataclass
class MCPToolServer:
    """An MCP server whose tools moot's agents may call: a command or a URL, exactly one.

    ``include``/``exclude`` filter the server's tools by name (``fnmatch`` patterns, such as
    ``read_*``); ``prefix`` names each tool ``<prefix>_<tool>`` so two servers' tools cannot
    collide. ``timeout_s`` limits each call (the run's deadline limits it further);
    ``connect_timeout_s`` limits starting the server and listing its tools.
    """

    name: str
    command: Sequence[str] | str | None = None
    """The command that starts the server (stdio), as a list or one shell-quoted line."""
    url: str | None = None
    """A streamable HTTP endpoint, e.g. ``http://127.0.0.1:8000/mcp``."""
    env: Mapping[str, str] | None = None
    """Environment variables for the command, over the SDK's safe default set."""
    cwd: str | None = None
    headers: Mapping[str, str] | None = None
    """HTTP headers for a URL (``{"Authorization": "Bearer …"}``)."""
    include: Sequence[str] | None = None
    exclude: Sequence[str] = ()
    prefix: str | None = None
    timeout_s: float | None = DEFAULT_CALL_TIMEOUT_S
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    _listings: collections.OrderedDict[str, tuple[MCPTool, ...]] = field(
        default_factory=collections.OrderedDict, init=False, repr=False)
    _connections: dict[int, _Connection] = field(default_factory=dict, init=False, repr=False)
    _listing_locks: dict[str, asyncio.Lock] = field(default_factory=dict, init=False, repr=False)
    list_calls: int = field(default=0, init=False, repr=False)
    """How many times the server was asked for its tools (the cache keeps it to one per run)."""

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name or ""):
            raise ConfigError(f"MCP server name {self.name!r} is not a short identifier",
                              fix="name it with letters, digits, '_' or '-' (e.g. fs, search)")
        if (self.command is None) == (self.url is None):
            raise ConfigError(f"MCP server {self.name!r} needs a command or a URL, exactly one",
                              fix="pass command='python server.py' or url='http://127.0.0.1:8000/mcp'")
        if isinstance(self.command, str):
            try:
                self.command = shlex.split(self.command)
            except ValueError as exc:
                raise ConfigError(f"MCP server {self.name!r}: cannot read the command ({exc})",
                                  fix="check its quotes") from None
        if self.command is not None and not list(self.command):
            raise ConfigError(f"MCP server {self.name!r} has an empty command", fix="give the command that starts it")
        if self.url is not None and not re.match(r"https?://", self.url):
            raise ConfigError(f"MCP server {self.name!r}: {self.url!r} is not an http(s) URL",
                              fix="give the server's streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
        if self.max_result_chars < 100:
            raise ConfigError("max_result_chars must be at least 100", fix="pass a larger max_result_chars")

    # ------------------------------------------------------------------ building

    @classmethod
    def parse(cls, spec: str, **options: Any) -> MCPToolServer:
        """``name=command …`` or ``name=http://host:port/mcp`` (the CLI's ``--mcp`` value)."""
        name, eq, target = spec.partition("=")
        name, target = name.strip(), target.strip()
        if not eq or not name or not target:
            raise ConfigError(f"--mcp {spec!r} is not NAME=COMMAND or NAME=URL",
                              fix="pass e.g. --mcp 'notes=python notes_server.py' or --mcp search=http://127.0.0.1:9000/mcp")
        if re.match(r"https?://", target):
            return cls(name, url=target, **options)
        return cls(name, command=target, **options)

    @classmethod
    def from_config(cls, name: str, value: Any) -> MCPToolServer:
        """One entry of ``[mcp.servers]`` in moot.toml: a command line or URL, or a table with
        ``command``/``url`` and the options above (``tools`` is ``include``)."""
        if isinstance(value, str):
            return cls.parse(f"{name}={value}")
        if not isinstance(value, Mapping):
            raise ConfigError(f"[mcp.servers] {name} is neither a command, a URL nor a table",
                              fix=f'write {name} = "python server.py" or [mcp.servers.{name}] with command = …')
        known = {"command", "url", "env", "cwd", "headers", "tools", "include", "exclude", "prefix", "timeout_s",
                 "connect_timeout_s", "max_result_chars"}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ConfigError(f"[mcp.servers.{name}] has an unknown key {unknown[0]!r}",
                              fix=f"known keys: {', '.join(sorted(known))}")
        options = dict(value)
        if "tools" in options:
            options["include"] = options.pop("tools")
        try:
            return cls(name, **options)
        except TypeError as exc:
            raise ConfigError(f"[mcp.servers.{name}]: {exc}", fix="check the table's values") from None

    @property
    def source(self) -> str:
        """How the run's events name it: ``mcp:<name>``."""
        return f"mcp:{self.name}"

    def describe(self) -> str:
        return self.url or shlex.join(list(self.command or ()))

    def _wanted(self, tool_name: str) -> bool:
        if self.include is not None and not any(fnmatch.fnmatchcase(tool_name, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatchcase(tool_name, p) for p in self.exclude)

    # ------------------------------------------------------------------ the runtime's seam

    async def tools_for_run(self, run_key: str, *, timeout_s: float | None = None) -> tuple[MCPTool, ...]:
        """The server's tools as moot tools, listed once per run (``run_key``) and cached."""
        cached = self._listings.get(run_key)
        if cached is not None:
            self._listings.move_to_end(run_key)
            return cached
        # parallel agents of one run wait for one listing
        async with self._listing_locks.setdefault(run_key, asyncio.Lock()):
            try:
                cached = self._listings.get(run_key)
                return cached if cached is not None else await self._list(run_key, timeout_s)
            finally:
                self._listing_locks.pop(run_key, None)

    async def _list(self, run_key: str, timeout_s: float | None) -> tuple[MCPTool, ...]:
        limit = min(t for t in (self.connect_timeout_s, timeout_s) if t is not None)
        try:
            async with asyncio.timeout(limit):
                connection = await self._connection()
                self.list_calls += 1
                listed = await connection.list_tools()
        except TimeoutError:
            raise MCPServerError(f"MCP server {self.name!r} did not list its tools within {limit:g} s") from None
        tools = tuple(self._convert(t) for t in listed if self._wanted(t.name))
        self._listings[run_key] = tools
        while len(self._listings) > _LISTINGS_KEPT:
            self._listings.popitem(last=False)
        return tools

    def _convert(self, remote: Any) -> MCPTool:
        local = re.sub(r"[^A-Za-z0-9_-]", "_", remote.name)
        if not re.match(r"[A-Za-z_]", local):
            local = f"t_{local}"
        if self.prefix:
            local = f"{self.prefix}_{local}"
        schema = dict(remote.input_schema or {"type": "object", "properties": {}})
        schema.pop("title", None)
        for prop in (schema.get("properties") or {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        remote_name = remote.name

        async def call(**arguments: Any) -> str:
            return await self.call(remote_name, arguments)

        return MCPTool(name=local[:64], description=(remote.description or remote.title or "").strip(), function=call,
                       arguments_model=_AnyArguments, timeout_s=self.timeout_s, parameters=schema, server=self,
                       remote_name=remote_name)

    async def call(self, tool_name: str, arguments: Mapping[str, Any]) -> str:
        """Call one tool on the server; its result as text (cut at ``max_result_chars``)."""
        connection = self._connections.get(id(asyncio.get_running_loop()))
        if connection is None or connection.client is None or connection.dead:  # (re)start it, within its limit
            async with asyncio.timeout(self.connect_timeout_s):
                connection = await self._connection()
        result = await connection.call_tool(tool_name, dict(arguments))
        text = render_mcp_result(result)
        if len(text) > self.max_result_chars:
            cut = len(text) - self.max_result_chars
            text = text[: self.max_result_chars] + f"\n… [cut: {cut} more characters]"
        if result.is_error:
            raise MCPServerError(text or f"the tool {tool_name!r} failed on MCP server {self.name!r}")
        return text

    async def _connection(self) -> _Connection:
        loop = asyncio.get_running_loop()
        for key in [k for k, c in self._connections.items() if c.loop is not loop and c.loop.is_closed()]:
            del self._connections[key]  # a finished asyncio.run(): its task and process are gone
        connection = self._connections.get(id(loop))
        if connection is None or connection.dead:
            connection = self._connections[id(loop)] = _Connection(self, loop)
        await connection.ready()
        return connection

    async def aclose(self) -> None:
        """Stop the server process (or end the HTTP session) this event loop holds."""
        connection = self._connections.pop(id(asyncio.get_running_loop()), None)
        if connection is not None:
            await connection.close()

    async def __aenter__(self) -> MCPToolServer:
        await self._connection()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Connection:
    """One SDK client session, held open by a background task (the SDK's transports must be
    entered and left in one task)."""

    def __init__(self, server: MCPToolServer, loop: asyncio.AbstractEventLoop) -> None:
        self.server = server
        self.loop = loop
        self.client: Any = None
        self.error: BaseException | None = None
        self.dead = False
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") if server.command else None
        self._task = loop.create_task(self._hold(), name=f"mcp server {server.name}")

    async def _hold(self) -> None:
        from mcp import Client

        try:
            async with Client(self._target(), raise_exceptions=False) as client:
                self.client = client
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - reported to whoever waits on ready()
            self.error = exc
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.dead = True
            self.client = None
            self._ready.set()

    def _target(self) -> Any:
        s = self.server
        if s.url is not None:
            if not s.headers:
                return s.url
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(s.url, http_client=httpx2.AsyncClient(headers=dict(s.headers),
                                                                                 timeout=httpx2.Timeout(30, read=300)))
        from mcp import StdioServerParameters

        command = list(s.command or ())
        return _StdioWithLog(StdioServerParameters(command=command[0], args=command[1:],
                                                   env=dict(s.env) if s.env else None, cwd=s.cwd), self._errlog)

    async def ready(self) -> None:
        await self._ready.wait()
        if self.client is None:
            raise MCPServerError(self._why_dead("could not be started"))

    def stderr_tail(self, lines: int = 3) -> str:
        if self._errlog is None:
            return ""
        try:
            self._errlog.seek(0)
            text = self._errlog.read()[-4000:]
        except (OSError, ValueError):
            return ""
        kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
        return " | ".join(kept)[:400]

    def _why_dead(self, what: str) -> str:
        s = self.server
        detail = ""
        if self.error is not None and not isinstance(self.error, asyncio.CancelledError):
            detail = f": {_one_line(self.error)}"
        tail = self.stderr_tail()
        where = f"`{s.describe()}`"
        return f"MCP server {s.name!r} ({where}) {what}{detail}" + (f"; its stderr: {tail}" if tail else "")

    def _check(self, exc: Exception) -> MCPServerError:
        """A failed request: a closed connection marks this session dead (the next call restarts it)."""
        from mcp.shared.exceptions import MCPError

        if isinstance(exc, MCPError) and "closed" in str(exc).lower():
            self.dead = True
            self._stop.set()
            return MCPServerError(self._why_dead("stopped answering (the connection closed)"))
        return MCPServerError(f"MCP server {self.server.name!r}: {_one_line(exc)}")

    async def list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        try:
            for _ in range(100):  # a paginator that never ends cannot hang the run
                page = await self.client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        except (TimeoutError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise self._check(exc) from None
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        client = self.client
        if client is None:
            raise MCPServerError(self._why_dead("is not running"))
        try:
            return await client.call_tool(name, arguments)
        except (TimeoutError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise self._check(exc) from None

    async def close(self) -> None:
        self._stop.set()
        if not self._task.done():
            try:
                async with asyncio.timeout(5):
                    await asyncio.shield(self._task)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
        if self._errlog is not None:
            self._errlog.close()


class _StdioWithLog:
    """The SDK's stdio transport with the server's stderr kept in a file (for error messages)
    instead of mixed into moot's own output."""

    def __init__(self, params: Any, errlog: Any) -> None:
        self.params, self.errlog, self._cm = params, errlog, None

    async def __aenter__(self) -> Any:
        from mcp import stdio_client

        self._cm = stdio_client(self.params, errlog=self.errlog)
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        assert self._cm is not None
        return await self._cm.__aexit__(*exc)


def render_mcp_result(result: Any) -> str:
    """An MCP ``CallToolResult`` as the text a model reads: its text blocks, resource texts and
    links; images and audio named with their size; structured content when there is no text."""
    import json

    parts: list[str] = []
    for block in result.content or ():
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes]")
        elif kind == "resource":
            res = block.resource
            parts.append(getattr(res, "text", None) or f"[resource {res.uri}, {getattr(res, 'mime_type', None) or 'binary'}]")
        elif kind == "resource_link":
            parts.append(f"[resource {block.uri}: {block.name}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _one_line(exc.exceptions[0])
    if isinstance(exc, FileNotFoundError):
        return f"command not found ({exc.filename or text})"
    return text[:300]


def servers_from_config(table: Mapping[str, Any] | None) -> list[MCPToolServer]:
    """The servers of a ``[mcp.servers]`` table."""
    return [MCPToolServer.from_config(name, value) for name, value in (table or {}).items()]


def merge_servers(configured: Sequence[MCPToolServer], given: Sequence[MCPToolServer]) -> list[MCPToolServer]:
    """moot.toml's servers, then the command line's; a name given on the command line replaces the file's."""
    named = {s.name: s for s in configured}
    for server in given:
        named[server.name] = server
    return list(named.values())


__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "MCPServerError",
    "MCPTool",
    "MCPToolServer",
    "merge_servers",
    "render_mcp_result",
    "servers_from_config",
]
