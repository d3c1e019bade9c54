#!/usr/bin/env python3
"""Every public type, and every requirement of a public protocol, of the modules an application
uses has a doc comment (issue 51). Reads the symbol graphs `swift package dump-symbol-graph` wrote.

    python3 .ci/check_doc_coverage.py GRAPHS_DIR MODULE...

Prints each undocumented declaration and exits 1, or says how many were checked and exits 0.
"""
import json
import os
import sys

TYPE_KINDS = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias", "swift.actor"}


def main():
    folder, modules = sys.argv[1], sys.argv[2:]
    missing, checked = [], 0
    for module in modules:
        graph = json.load(open(os.path.join(folder, module + ".symbols.json"), encoding="utf-8"))
        requirements = {relation["source"] for relation in graph.get("relationships", [])
                        if relation["kind"] in ("requirementOf", "optionalRequirementOf")}
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") != "public":
                continue
            kind = symbol["kind"]["identifier"]
            if kind not in TYPE_KINDS and symbol["identifier"]["precise"] not in requirements:
                continue
            checked += 1
            lines = (symbol.get("docComment") or {}).get("lines") or []
            if not any(line.get("text", "").strip() for line in lines):
                name = ".".join(symbol["pathComponents"])
                missing.append(f"{module}: {name} ({kind.removeprefix('swift.')}) has no doc comment")
    for line in missing:
        print(line)
    if missing:
        return 1
    print(f"doc coverage: {checked} public types and protocol requirements of {', '.join(modules)}, all documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
