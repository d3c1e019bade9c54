#!/usr/bin/env python3
"""Checks the module graph of Package.swift (read from `swift package dump-package` on standard
input) against the layering the architecture promises (issue 31):

- no front end depends on another front end, or on CofferBackends (front ends reach files only
  through sessions of FileService);
- CofferTransfers and CofferPreview do not depend on CofferBackends either;
- nothing below the front ends depends on a front end.

Prints one line per rule broken and exits 1, or says the graph holds and exits 0.
"""
import json
import sys

FRONT_ENDS = {"CofferREPL", "CofferRPC", "CofferMCP", "CofferWeb"}
SERVICE_USERS = {"CofferTransfers", "CofferPreview"}
# What may sit above the front ends and compose them: the application library and executables.
COMPOSERS = {"CofferApp", "coffer", "CustomBackendExample", "ComposeService"}


def dependencies(package):
    graph = {}
    for target in package["targets"]:
        names = []
        for dependency in target.get("dependencies", []):
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    names.append(dependency[kind][0])
        graph[target["name"]] = (target.get("type"), names)
    return graph


def main():
    package = json.load(sys.stdin)
    graph = dependencies(package)
    problems = []
    for name, (kind, needs) in sorted(graph.items()):
        if kind == "test":
            continue
        for need in needs:
            if name in FRONT_ENDS and need in FRONT_ENDS:
                problems.append(f"front end {name} depends on front end {need}")
            if name in FRONT_ENDS | SERVICE_USERS and need == "CofferBackends":
                problems.append(f"{name} depends on CofferBackends: it should reach files through FileService's sessions")
            if need in FRONT_ENDS and name not in FRONT_ENDS | COMPOSERS:
                problems.append(f"{name} depends on front end {need}: only applications compose front ends")
    missing = (FRONT_ENDS | SERVICE_USERS) - graph.keys()
    problems += [f"{name} is not a target of the package (the rules name it)" for name in sorted(missing)]
    for problem in problems:
        print(f"module graph: {problem}")
    if problems:
        return 1
    print(f"module graph: {len(graph)} targets; no front end depends on another or on CofferBackends")
    return 0


if __name__ == "__main__":
    sys.exit(main())
