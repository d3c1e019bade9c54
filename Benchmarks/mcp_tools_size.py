#!/usr/bin/env python3
"""The size of `coffer mcp`'s tool list, which every conversation pays for in tokens: the bytes of
`tools/list`'s `tools` as compact JSON (UTF-8) and a rough token count (bytes / 4.3, as the tester
counted), for `--tools official`, the default list and `--structured`, beside the reference
filesystem server's own figure. That server (npm) cannot be installed here, so its 13.0 KB for its 14
tools is the tester's measurement, quoted, not measured in this run.

Usage: mcp_tools_size.py COFFER_BINARY
"""
import json
import subprocess
import sys
import tempfile

REFERENCE_BYTES = 13_000


def listing(coffer, *options):
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "size", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with tempfile.TemporaryDirectory() as container:
        run = subprocess.run([coffer, "--container", container, "mcp", *options], input="".join(json.dumps(m) + "\n" for m in messages),
                             capture_output=True, text=True, check=True)
    for line in run.stdout.splitlines():
        answer = json.loads(line)
        if answer.get("id") == 2:
            return answer["result"]["tools"]
    raise SystemExit(f"no tools/list answer: {run.stderr}")


def main():
    coffer = sys.argv[1]
    print(f"{'list':34} {'tools':>5} {'bytes':>8} {'≈tokens':>8} {'× reference':>12}")
    print(f"{'reference server 2.4.0 (quoted)':34} {14:5d} {REFERENCE_BYTES:8d} {REFERENCE_BYTES / 4.3:8.0f} {1:12.2f}")
    for title, options in [("coffer mcp --tools official", ["--tools", "official"]), ("coffer mcp", []),
                           ("coffer mcp --structured", ["--structured"])]:
        tools = listing(coffer, *options)
        size = len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode())
        print(f"{title:34} {len(tools):5d} {size:8d} {size / 4.3:8.0f} {size / REFERENCE_BYTES:12.2f}")


if __name__ == "__main__":
    main()
