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

# `package` declarations were never API (Versioning.md), but the tool compares them too: those that
# moved behind `@_spi(Engine)` are listed, line by line and checked by hand, in .ci/api-not-breaks.
grep '^API breakage: ' .ci/api-not-breaks >> "$allowlist" || true
# Modules that are not products but whose types the products' API names (`PasswordHash` in a
# `Share`, `DesktopApplications` in `ListApplications`, `RecentFiles`, `HTTPTimeouts`): what a product
# uses of them is held to its promise (Versioning.md), so they are compared whole.
named=(CofferRuntime CofferDesktop CofferHTTP)
swift package diagnose-api-breaking-changes "$baseline" --breakage-allowlist-path "$allowlist" \
    --products "${products[@]}" --targets "${named[@]}"
