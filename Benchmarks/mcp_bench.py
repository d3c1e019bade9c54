#!/usr/bin/env python3
"""`get_file_info` calls per second, one at a time, through the official MCP Python SDK's
client: `coffer mcp` beside the client's own ceiling, a trivial server written with the same
SDK that answers without touching the disk (Benchmarks/mcp_ceiling_server.py, its answer of
the same shape as Coffer's), and beside the bare ceiling, a server without the SDK that only
writes a constant line (what is left is the client's own cost).

Usage: mcp_bench.py COFFER_BINARY WORK_DIR [--quick] [--calls N] [--rounds N] [--schemas]

Run with a Python that has the SDK (`pip install mcp==2.3.0`). Both servers are driven by the
same client code, in turn within each round, in both eras the SDK speaks (mode="legacy": the
2025-11-25 handshake; mode="auto": the stateless 2026-07-28 revision); the medians over the
rounds are printed with Coffer's share of the ceiling. The goal (issue 19) is within 20 % of it.
"""
import asyncio
import os
import statistics
import sys
import time

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def rate(server, path, calls, mode):
    async with Client(server, mode=mode, raise_exceptions=True) as client:
        for _ in range(50):  # warm-up: the first calls compile, load and fill caches
            await client.call_tool("get_file_info", {"path": path})
        started = time.perf_counter()
        for _ in range(calls):
            result = await client.call_tool("get_file_info", {"path": path})
            assert not result.is_error, result.content
        return calls / (time.perf_counter() - started)


async def main():
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    quick = "--quick" in sys.argv
    calls = int(sys.argv[sys.argv.index("--calls") + 1]) if "--calls" in sys.argv else 500 if quick else 2000
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3 if quick else 5
    container = os.path.join(work, "mcp-container")
    root = os.path.join(container, "Documents", "UserFiles")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "notes.txt"), "w") as file:
        file.write("hello")
    environment = {"LANG": "C.UTF-8", "HOME": work}
    ceiling = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcp_ceiling_server.py")
    # `coffer mcp` as clients get it by default (structured content, no output schema to check),
    # beside a ceiling of the same shape; `--schemas` compares `coffer mcp --structured` with a
    # ceiling whose tool lists an output schema too (the client then validates every answer).
    schemas = "--schemas" in sys.argv
    servers = {
        "coffer": (StdioServerParameters(command=coffer, args=["--container", container, "mcp"] + (["--structured"] if schemas else []),
                                         env=environment),
                   os.path.join(root, "notes.txt")),
        "ceiling": (StdioServerParameters(command=sys.executable, args=[ceiling, "--structured"] + (["--schema"] if schemas else []),
                                          env=environment),
                    "/notes.txt"),
        "bare": (StdioServerParameters(command=sys.executable, args=[ceiling, "--bare", "--structured"], env=environment),
                 "/notes.txt"),
    }
    for mode in ("legacy", "auto"):
        rates = {name: [] for name in servers}
        for _ in range(rounds):
            for name, (server, path) in servers.items():
                rates[name].append(await rate(server, path, calls, mode))
        median = {name: statistics.median(values) for name, values in rates.items()}
        print(f"{mode:6}  coffer {median['coffer']:6.0f} calls/s   SDK ceiling {median['ceiling']:6.0f}   "
              f"bare ceiling {median['bare']:6.0f}   coffer/SDK ceiling {median['coffer'] / median['ceiling']:.2f}   "
              f"coffer/bare {median['coffer'] / median['bare']:.2f}   (medians of {rounds} rounds of {calls} calls)")
        for name, values in rates.items():
            print(f"        {name} rounds: {', '.join(f'{value:.0f}' for value in values)}")


if __name__ == "__main__":
    asyncio.run(main())
