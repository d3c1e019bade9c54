#!/usr/bin/env python3
"""Checks the module graph of Package.swift (read from `swift package dump-package` on standard
input) against the layering the architecture promises (issue 31):

- no front end depends on another front end, or on CofferBackends (front ends reach files only
  through sessions of FileService);
- CofferTransfers and CofferPreview do not depend on CofferBackends either;
- nothing below the front ends depends on a front end.

And two rules read from the sources, which the graph cannot show:

- each of CofferApp's front-end types (`Sources/CofferApp/FrontEnds/`) imports at most one front
  end and never CofferBackends;
- no front end calls the service's engine (the `package` methods of FileService, which only
  operations use) or reads a mount's backend: front ends reach files through sessions.

Prints one line per rule broken and exits 1, or says the graph holds and exits 0.
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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


def source_problems():
    problems = []
    for path in sorted(glob.glob(os.path.join(ROOT, "Sources/CofferApp/FrontEnds/*.swift"))):
        imports = set(re.findall(r"^import (\w+)", open(path, encoding="utf-8").read(), re.M))
        name = os.path.relpath(path, ROOT)
        if len(imports & FRONT_ENDS) > 1:
            problems.append(f"{name} imports {len(imports & FRONT_ENDS)} front ends: {sorted(imports & FRONT_ENDS)}")
        if "CofferBackends" in imports:
            problems.append(f"{name} imports CofferBackends")
    engine = set()
    for path in glob.glob(os.path.join(ROOT, "Sources/FileService/**/*.swift"), recursive=True):
        engine |= set(re.findall(r"^\s*package (?:nonisolated )?(?:func|var) (\w+)", open(path, encoding="utf-8").read(), re.M))
    call = re.compile(r"\bservice\??\.(" + "|".join(sorted(engine)) + r")\b" if engine else r"(?!)")
    for module in sorted(FRONT_ENDS | {"CofferJSONRPC"}):
        for path in sorted(glob.glob(os.path.join(ROOT, "Sources", module, "**/*.swift"), recursive=True)):
            for number, line in enumerate(open(path, encoding="utf-8"), 1):
                code = line.split("//")[0]
                where = f"{os.path.relpath(path, ROOT)}:{number}"
                if match := call.search(code):
                    problems.append(f"{where} calls the service's engine ({match.group(1)}): perform an operation in a session")
                if re.search(r"\.backend\b", code):
                    problems.append(f"{where} reads a mount's backend: perform an operation in a session")
    return problems, len(engine)


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
    sources, engine_methods = source_problems()
    problems += sources
    missing = (FRONT_ENDS | SERVICE_USERS) - graph.keys()
    problems += [f"{name} is not a target of the package (the rules name it)" for name in sorted(missing)]
    for problem in problems:
        print(f"module graph: {problem}")
    if problems:
        return 1
    print(f"module graph: {len(graph)} targets; no front end depends on another or on CofferBackends, "
          f"or calls any of the service's {engine_methods} engine methods")
    return 0


if __name__ == "__main__":
    sys.exit(main())
