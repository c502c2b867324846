"""The MCP server: the backend's tools, resources and prompts for agents (the Model Context
Protocol), over stdio (``kg mcp``) and streamable HTTP (``/mcp`` of ``kg serve``), on the
official SDK's ``MCPServer``.

Every tool is a thin call into the functions ``kg`` and the HTTP API call for the same thing, and
returns the same JSON; tokens, limits, counts and logs are the HTTP API's (``access``,
``ratelimit``). Laid out as::

    backend   what a call goes through: argument checks, the caller's token and limit, one-line
              errors (with did-you-mean), one log event and the counts
    tools     the tools, one small function each, and TOOLS, what each needs of its caller
    catalog   the kg://schema resource and the prompts
    server    the MCPServer built from them; run_stdio, and Streamable for the HTTP app

This package never imports the HTTP app (``control_plane.surfaces.http``); the app mounts it.
"""

from control_plane.surfaces.mcp.backend import Backend, Counts
from control_plane.surfaces.mcp.server import Streamable, build_server, run_stdio

__all__ = ["Backend", "Counts", "Streamable", "build_server", "run_stdio"]
