#!/usr/bin/env python3
"""The ceiling for `Benchmarks/mcp_bench.py`: an MCP server written with the official Python
SDK's low-level `Server` whose `get_file_info` answers at once with a constant, touching no
disk: what the SDK's client and transport cost, with the least a server can add.

With `--structured`, the answer has the shape of Coffer's (text, and structured content); with
`--schema` too, the tool lists an output schema, which the client then checks on every call (as
`coffer mcp --structured`). With `--bare`, no SDK at all: a loop that reads a line and writes a
constant answer, so that what is left is the client's cost.
"""
import json
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

STRUCTURED = "--structured" in sys.argv
TEXT = "size: 5\nmodified: 2026-12-01T00:00:00.000Z\nisDirectory: false\nisFile: true"
FIELDS = {"content": TEXT, "size": 5, "modified": "2026-12-01T00:00:00.000Z", "isDirectory": False, "isFile": True}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"content": {"type": "string"}, "size": {"type": "integer"}, "modified": {"type": "string"},
                   "isDirectory": {"type": "boolean"}, "isFile": {"type": "boolean"}},
    "required": ["content"],
}
TOOL = types.Tool(name="get_file_info", description="What an item is (a constant: no disk is touched).",
                  input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                  output_schema=OUTPUT_SCHEMA if STRUCTURED and "--schema" in sys.argv else None)
ANSWER = types.CallToolResult(content=[types.TextContent(type="text", text=TEXT)],
                              structured_content=FIELDS if STRUCTURED else None)


async def list_tools(context, params):
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(context, params):
    return ANSWER


server = Server("ceiling", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def bare():
    """Answers each request with a constant, in the era the request is of."""
    capabilities = {"tools": {"listChanged": False}}
    info = {"name": "bare", "version": "1"}
    tool = TOOL.model_dump(by_alias=True, exclude_none=True)
    answer = ANSWER.model_dump(by_alias=True, exclude_none=True)
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        modern = "io.modelcontextprotocol/protocolVersion" in (message.get("params") or {}).get("_meta", {})
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "serverInfo": info}
        elif method == "server/discover":
            result = {"supportedVersions": ["2025-11-25", "2026-07-28"], "capabilities": capabilities,
                      "ttlMs": 0, "cacheScope": "private", "_meta": {"io.modelcontextprotocol/serverInfo": info}}
        elif method == "tools/list":
            result = {"tools": [tool]}
            if modern:
                result.update(ttlMs=0, cacheScope="private")
        elif method == "tools/call":
            result = dict(answer)
        else:
            result = {}
        if modern or method == "server/discover":
            result["resultType"] = "complete"
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if "--bare" in sys.argv:
        bare()
    else:
        anyio.run(main)
