#!/usr/bin/env bash
# Document types: the checked-in Info.plists and desktop files must be what the plugin
# generates from their manifests; what it writes must be a valid property list (read with
# plistlib), a desktop entry desktop-file-validate passes, and a MIME package
# update-mime-database accepts.
set -euo pipefail
cd "$(dirname "$0")/.."
for pair in "DocumentTypes.json:Info.plist" "Examples/document-types/DocumentTypes.json:Examples/document-types/Info.plist"; do
    manifest="${pair%%:*}"
    plist="${pair##*:}"
    swift package --allow-writing-to-package-directory generate-document-types \
        --manifest "$manifest" --output "$plist" --check
    # Regenerate from a copy stripped of the generated keys: a real write and merge.
    scratch="$(mktemp -d)"
    python3 .ci/check_info_plist.py --strip "$plist" "$scratch/Info.plist"
    swift package --allow-writing-to-package-directory generate-document-types \
        --manifest "$manifest" --output "$scratch/Info.plist"
    python3 .ci/check_info_plist.py "$manifest" "$scratch/Info.plist"
    cmp "$plist" "$scratch/Info.plist"
    desktop="$(dirname "$plist")/Desktop"
    diff -r "$desktop" "$scratch/Desktop"
    for entry in "$desktop"/*.desktop; do
        report="$(desktop-file-validate "$entry" 2>&1)" || true
        if [ -n "$report" ]; then echo "$report"; exit 1; fi
    done
    for package in "$desktop"/*.xml; do
        [ -e "$package" ] || continue
        mkdir -p "$scratch/mime/packages"
        cp "$package" "$scratch/mime/packages/"
        report="$(XDG_DATA_HOME="$scratch" update-mime-database "$scratch/mime" 2>&1)"
        if [ -n "$report" ] || [ ! -s "$scratch/mime/mime.cache" ]; then echo "$package: $report"; exit 1; fi
    done
    rm -rf "$scratch"
done
