#!/usr/bin/env bash
# Builds the DocC catalogs of the modules an application uses, offline, with warnings as errors
# (a broken symbol link or an unknown topic fails). Writes .build/docs/MODULE.doccarchive.
#
#   bash .ci/build_docs.sh              # every catalog
#   bash .ci/build_docs.sh FileService  # one
#
# The symbol graphs come from `swift package dump-symbol-graph`, which exits 1 on the test
# modules but writes every graph first; each module's catalog is then converted with its own
# graphs only (links to another module's symbols do not resolve in a per-module build, so the
# catalogs name those in code voice).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

modules=("$@")
((${#modules[@]})) || modules=(CofferCore FileService CofferBackendConformance CofferApp)

log=$(mktemp)
only=""
trap 'rm -rf "$log" "$only"' EXIT
graphs="$(swift build --show-bin-path)/../symbolgraph"
# No graph of an earlier run may stand in for one this run failed to write.
rm -rf "$graphs"
swift package dump-symbol-graph --minimum-access-level public >"$log" 2>&1 || true
for module in "${modules[@]}"; do
    if [ ! -f "$graphs/$module.symbols.json" ]; then
        cat "$log" >&2
        echo "no symbol graph for $module" >&2
        exit 1
    fi
done

# Every public type and protocol requirement of these modules has a doc comment.
python3 .ci/check_doc_coverage.py "$graphs" "${modules[@]}"

mkdir -p .build/docs
for module in "${modules[@]}"; do
    rm -rf "$only"
    only=$(mktemp -d)
    cp "$graphs/$module.symbols.json" "$only/"
    for extension in "$graphs/$module@"*.symbols.json; do
        [ -f "$extension" ] && cp "$extension" "$only/"
    done
    echo "== $module"
    docc convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$only" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.coffer.$module" \
        --output-path ".build/docs/$module.doccarchive" \
        --warnings-as-errors
done
echo "Open one: python3 -m http.server --directory .build/docs/CofferApp.doccarchive 8000, then http://127.0.0.1:8000/documentation/cofferapp/"
