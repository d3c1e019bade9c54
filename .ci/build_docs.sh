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

swift package dump-symbol-graph --minimum-access-level public >/tmp/coffer-symbol-graph.log 2>&1 || true
graphs="$(swift build --show-bin-path)/../symbolgraph"
for module in "${modules[@]}"; do
    [ -f "$graphs/$module.symbols.json" ] || { echo "no symbol graph for $module (see /tmp/coffer-symbol-graph.log)" >&2; exit 1; }
done

# Every public type and protocol requirement of these modules has a doc comment.
python3 .ci/check_doc_coverage.py "$graphs" "${modules[@]}"

mkdir -p .build/docs
for module in "${modules[@]}"; do
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
    rm -rf "$only"
done
echo "Open one: python3 -m http.server --directory .build/docs/CofferApp.doccarchive 8000, then http://127.0.0.1:8000/documentation/cofferapp/"
