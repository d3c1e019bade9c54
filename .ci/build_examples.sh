#!/usr/bin/env bash
# Builds, tests and runs the example packages (Examples/custom-backend, Examples/custom-front-end).
# Each is a package of its own that depends on Coffer with `.package(name: "Coffer", path: "../..")`,
# so it sees only Coffer's public API: a symbol it needs that is not public fails this build.
# Both build into one scratch folder, .build/examples, so Coffer's modules are compiled once; the
# end-to-end tests find the programs there (CustomBackendEndToEndTests).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
scratch="$PWD/.build/examples"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for example in custom-backend custom-front-end; do
    echo "== $example: build and test"
    swift build --package-path "Examples/$example" --scratch-path "$scratch" --build-tests
    swift test --package-path "Examples/$example" --scratch-path "$scratch" --skip-build
done

bin="$scratch/debug"
expect() {  # expect WHAT PATTERN OUTPUT
    if ! grep -q -- "$2" <<<"$3"; then
        echo "$1: expected “$2” in:" >&2
        echo "$3" >&2
        exit 1
    fi
    echo "ok: $1"
}

echo "== run the programs as a user would"
# A home of their own: default containers, the desktop's files and any AWS settings are looked up there.
export HOME="$work/home" LANG=C.UTF-8 XDG_DATA_HOME="$work/home/.local/share" XDG_CONFIG_HOME="$work/home/.config" \
       XDG_CACHE_HOME="$work/home/.cache" XDG_STATE_HOME="$work/home/.local/state"
unset XDG_DATA_DIRS XDG_CONFIG_DIRS AWS_PROFILE AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE AWS_ENDPOINT_URL
mkdir -p "$HOME"
# Each program gets a minute: a hang fails here, not at the step's limit.
run() { timeout 60 "$@"; }
out=$(run "$bin/custom-backend-example" -c 'mounts; mkdir mem:/notes; ls mem:/')
expect "custom-backend-example lists mem:" "mem:" "$out"
expect "custom-backend-example makes a folder in mem:" "notes" "$out"
# One request at a time, each answer read before the next is sent (at the end of its input the
# server cancels what is still running).
out=$(python3 - "$bin/custom-backend-example" <<'PY'
import json, subprocess, sys
import selectors
server = subprocess.Popen([sys.argv[1], "rpc", "--framing", "ndjson"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
waiting = selectors.DefaultSelector()
waiting.register(server.stdout, selectors.EVENT_READ)
try:
    for number, method in enumerate(["initialize", "mem/usage", "shutdown"], 1):
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": {}}) + "\n").encode())
        server.stdin.flush()
        if not waiting.select(timeout=30):
            sys.exit(f"no answer to {method} within 30 s")
        print(server.stdout.readline().decode().strip())
    server.stdin.write(b'{"jsonrpc":"2.0","method":"exit"}\n')
    server.stdin.close()
    server.wait(timeout=30)
finally:
    if server.poll() is None:
        server.kill()
        server.wait()
PY
)
expect "mem/usage answers through the space capability" '"quota":1048576' "$out"

run "$bin/custom-front-end-example" -c 'mkdir Reports' >/dev/null
out=$(run "$bin/custom-front-end-example" status)
expect "status reports files: with its disk" "files: .* items, .* of .* used — Your files" "$out"
expect "status reports scratch: with its space" "scratch: .*0 items, .* used" "$out"
out=$(run "$bin/custom-front-end-example" --lang zh-Hans status --json)
expect "status --json" '"trashed":0' "$out"
out=$(run "$bin/custom-front-end-example" --help)
expect "--help lists status" "custom-front-end-example status" "$out"
status=0
run "$bin/custom-front-end-example" status --verbose 2>"$work/err" || status=$?
[ "$status" = 2 ] || { echo "status --verbose exited $status, not 2" >&2; exit 1; }
expect "status refuses what it does not take" "unexpected argument “--verbose”; status takes only --json" "$(cat "$work/err")"
out=$(run "$bin/compose-service" "$work/compose")
expect "compose-service lists its mounts" "caches:" "$out"
out=$(run "$bin/custom-front-end-example" status --help)
expect "status --help says what status takes" "custom-front-end-example status: .*--json" "$(tr '\n' ' ' <<<"$out")"
echo "examples: all passed"
