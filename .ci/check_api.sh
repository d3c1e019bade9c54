#!/usr/bin/env bash
# Holds the promise of Documentation/Versioning.md: the public API of the products an application
# links does not break unless CHANGELOG.md's Unreleased section says so.
#
# Compares against the commit in .ci/api-baseline with `swift package
# diagnose-api-breaking-changes`. Each break the changelog announces is written there in backticks
# exactly as the tool reports it (`API breakage: func FileService.copy(…) has been removed`), with
# what to use instead; those lines become the tool's allowlist, and any other break fails.
set -euo pipefail
cd "$(dirname "$0")/.."

baseline=$(grep -v '^#' .ci/api-baseline | grep -m1 .)
allowlist=$(mktemp)
trap 'rm -f "$allowlist"' EXIT
python3 - CHANGELOG.md > "$allowlist" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
start = text.find("\n## Unreleased")
if start < 0:
    sys.exit("CHANGELOG.md has no “## Unreleased” section")
end = text.find("\n## ", start + 1)
section = text[start:end if end > 0 else len(text)]
for announced in re.findall(r"`(API breakage: [^`]+)`", section):
    print(announced)
PY
products=(CofferCore CofferBackends CofferInMemory CofferBackendConformance FileService CofferApp
          CofferS3 CofferJSONRPC CofferTransfers CofferPreview)
echo "check_api: against $baseline, $(wc -l < "$allowlist") break(s) announced in CHANGELOG.md"

# `package` declarations were never API (Versioning.md), but the tool compares them too: one that
# moved behind `@_spi` (the engine, issue 51) reads as a break. The first run lists the breaks; those
# of declarations that were `package` at the baseline join the allowlist, and the second run decides.
report=$(mktemp)
trap 'rm -f "$allowlist" "$report"' EXIT
swift package diagnose-api-breaking-changes "$baseline" --breakage-allowlist-path "$allowlist" \
    --products "${products[@]}" > "$report" 2>&1 || true
python3 - "$baseline" "$report" >> "$allowlist" <<'PY'
import re, subprocess, sys
baseline, report = sys.argv[1], sys.argv[2]
sources = subprocess.run(["git", "grep", "-h", "-E", r"^\s*package (static )?(func|var|let|init)", baseline, "--", "Sources"],
                         capture_output=True, text=True).stdout
was_package = set(re.findall(r"package (?:static )?(?:func|var|let) (\w+)", sources))
for line in open(report, encoding="utf-8"):
    match = re.search(r"(API breakage: (?:func|var|let) \w+\.(\w+)\S* is now with @_spi)", line)
    if match and match.group(2) in was_package:
        print(match.group(1))
PY
swift package diagnose-api-breaking-changes "$baseline" --breakage-allowlist-path "$allowlist" --products "${products[@]}"
