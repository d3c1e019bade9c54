#!/usr/bin/env python3
"""Checks an Info.plist written by generate-document-types against its manifest, reading
it with Python's plistlib (plistutil exits 0 even on failure, so it proves nothing).

Usage: check_info_plist.py MANIFEST.json Info.plist
       check_info_plist.py --strip Info.plist OUT.plist   (a copy without the generated keys)
"""
import json
import plistlib
import sys


def declaration(declared):
    entry = {"UTTypeIdentifier": declared["identifier"], "UTTypeDescription": declared["description"],
             "UTTypeConformsTo": declared.get("conformsTo", [])}
    tags = {}
    if declared.get("extensions"):
        tags["public.filename-extension"] = declared["extensions"]
    if declared.get("mimeTypes"):
        tags["public.mime-type"] = declared["mimeTypes"]
    if tags:
        entry["UTTypeTagSpecification"] = tags
    if "iconFiles" in declared:
        entry["UTTypeIconFiles"] = declared["iconFiles"]
    if "referenceURL" in declared:
        entry["UTTypeReferenceURL"] = declared["referenceURL"]
    return entry


def expected(manifest):
    keys = {}
    documents = []
    for document in manifest.get("documentTypes", []):
        entry = {"CFBundleTypeName": document["name"], "CFBundleTypeRole": document["role"],
                 "LSHandlerRank": document["rank"], "LSItemContentTypes": document["contentTypes"]}
        if "isPackage" in document:
            entry["LSTypeIsPackage"] = document["isPackage"]
        if "iconFiles" in document:
            entry["CFBundleTypeIconFiles"] = document["iconFiles"]
        documents.append(entry)
    if documents:
        keys["CFBundleDocumentTypes"] = documents
    for key, name in [("UTExportedTypeDeclarations", "exportedTypes"), ("UTImportedTypeDeclarations", "importedTypes")]:
        if manifest.get(name):
            keys[key] = [declaration(declared) for declared in manifest[name]]
    for key, name in [("LSSupportsOpeningDocumentsInPlace", "supportsOpeningDocumentsInPlace"),
                      ("UIFileSharingEnabled", "fileSharingEnabled"),
                      ("UISupportsDocumentBrowser", "supportsDocumentBrowser")]:
        if name in manifest:
            keys[key] = manifest[name]
    return keys


OWNED = ["CFBundleDocumentTypes", "UTExportedTypeDeclarations", "UTImportedTypeDeclarations",
         "LSSupportsOpeningDocumentsInPlace", "UIFileSharingEnabled", "UISupportsDocumentBrowser"]


def strip(source, destination):
    with open(source, "rb") as file:
        plist = plistlib.load(file)
    for key in OWNED:
        plist.pop(key, None)
    with open(destination, "wb") as file:
        plistlib.dump(plist, file)


def main():
    if sys.argv[1] == "--strip":
        strip(sys.argv[2], sys.argv[3])
        return
    manifest = json.load(open(sys.argv[1]))
    with open(sys.argv[2], "rb") as file:
        plist = plistlib.load(file)  # raises on anything that is not a valid property list
    problems = []
    for key, value in expected(manifest).items():
        if plist.get(key) != value:
            problems.append(f"{key}: expected {value!r}, found {plist.get(key)!r}")
        if isinstance(value, bool) and type(plist.get(key)) is not bool:
            problems.append(f"{key}: not a boolean")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"{sys.argv[2]}: valid property list, {len(expected(manifest))} generated keys match {sys.argv[1]}")


if __name__ == "__main__":
    main()
