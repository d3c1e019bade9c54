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
