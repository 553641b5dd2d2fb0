"""moot's teams as an MCP server (``moot mcp``); see docs/mcp.md.

The other direction, MCP tool servers for moot's agents, is :mod:`moot.runtime.mcp`
(``SubAgent(tools=[MCPToolServer(...)])``).
"""

from __future__ import annotations

from moot.mcp.server import MCPSettings, MootMCP, build_server

__all__ = ["MCPSettings", "MootMCP", "build_server"]
