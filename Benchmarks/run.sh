#!/usr/bin/env bash
# Builds Coffer in release mode and runs every benchmark side by side with its reference.
#   Benchmarks/run.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
# Built as it is installed (README): the Swift runtime and Foundation linked in.
swift build -c release --product coffer --static-swift-stdlib >/dev/null
swift build -c release --product coffer-sort-bench >/dev/null
work="${COFFER_BENCH_DIR:-Benchmarks/.work}"
mkdir -p "$work"
echo "== sorting names (Benchmarks/SortBench) =="
.build/release/coffer-sort-bench 20000
echo
echo "== commands (Benchmarks/bench.py) =="
python3 Benchmarks/bench.py .build/release/coffer "$work" "$@"
echo
echo "== startup to first prompt (Benchmarks/startup.py) =="
python3 Benchmarks/startup.py .build/release/coffer "$work" "$@"
echo
echo "== JSON-RPC round trips (Benchmarks/rpc.py) =="
python3 Benchmarks/rpc.py .build/release/coffer "$work" "$@"
echo
echo "== name search (Benchmarks/search.py) =="
python3 Benchmarks/search.py .build/release/coffer "$work" "$@"
echo
echo "== MCP tool calls through the official SDK's client (Benchmarks/mcp_bench.py) =="
# Needs the MCP Python SDK: .ci/run installs it in .ci/venv; COFFER_MCP_PYTHON names another Python.
mcp_python="${COFFER_MCP_PYTHON:-.ci/venv/bin/python}"
if [ -x "$mcp_python" ] && "$mcp_python" -c 'import mcp' 2>/dev/null; then
    "$mcp_python" Benchmarks/mcp_bench.py .build/release/coffer "$work" "$@"
else
    echo "skipped: no Python with the mcp package (pip install mcp==2.3.0, or set COFFER_MCP_PYTHON)"
fi
echo
echo "== downloads and uploads beside curl (Benchmarks/transfers.py) =="
python3 Benchmarks/transfers.py .build/release/coffer "$work" $([ "${1:-}" = "--quick" ] && echo "--size 256")
echo
echo "== thumbnails beside vipsthumbnail (Benchmarks/thumbnails.py) =="
python3 Benchmarks/thumbnails.py .build/release/coffer "$work" "$@"
echo
echo "== the web page on 100,000 entries (Benchmarks/web.py) =="
if [ -x "$mcp_python" ] && "$mcp_python" -c 'import selenium' 2>/dev/null; then
    "$mcp_python" Benchmarks/web.py .build/release/coffer "$work"
else
    echo "skipped: no Python with selenium (pip install selenium, or set COFFER_MCP_PYTHON)"
fi
