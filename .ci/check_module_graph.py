#!/usr/bin/env python3
"""Checks the module graph of Package.swift (read from `swift package dump-package` on standard
input) against the layering the architecture promises (issue 31):

- no front end depends on another front end, or on CofferBackends (front ends reach files only
  through sessions of FileService);
- CofferTransfers and CofferPreview do not depend on CofferBackends either;
- nothing below the front ends depends on a front end.

SwiftPM has no way to say these, so they stay here. Since issue 51 the compiler holds the rule
this script used to read from the front ends' sources with a regex (no front end calls the
service's engine or reads a mount's backend): the engine -- FileService's methods that only
operations use, `OpenedFile.file`, and `Mount.backend` in CofferCore -- is `@_spi(Engine) public`,
so a file that uses it compiles only if it says `@_spi(Engine) import`. What is left to read in
the sources is what the compiler cannot refuse (Documentation/Contributor/Modules.md):

- only the modules whose operations use the engine (ENGINE_USERS) say `@_spi(Engine) import`;
  any other module of Sources/ asking for it (a front end, CofferJSONRPC, CofferApp...) fails;
- FileService declares nothing `package`, which every module of the package could call: what
  an operation of another module needs from the engine is `@_spi(Engine) public`;
- each of CofferApp's front-end types (`Sources/CofferApp/FrontEnds/`) imports at most one front
  end and never CofferBackends (the compiler sees modules, not files).

Prints one line per rule broken and exits 1, or says the graph holds and exits 0.
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FRONT_ENDS = {"CofferREPL", "CofferRPC", "CofferMCP", "CofferWeb", "CofferMount"}
SERVICE_USERS = {"CofferTransfers", "CofferPreview"}
# The modules whose operations use the engine: the only ones that may `@_spi(Engine) import`.
ENGINE_USERS = {"FileService", "CofferTransfers", "CofferPreview"}
# What may sit above the front ends and compose them: the application library and executables.
COMPOSERS = {"CofferApp", "coffer"}


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


IMPORT = re.compile(r"^\s*((?:@\w+(?:\([\w, ]*\))?\s+)*)(?:(?:public|package|internal)\s+)?import\s+(\w+)", re.M)
ENGINE_SPI = re.compile(r"@_spi\(\s*Engine\s*\)")


def swift_files(module):
    return sorted(glob.glob(os.path.join(ROOT, "Sources", module, "**/*.swift"), recursive=True))


def source_problems():
    problems = []
    for path in sorted(glob.glob(os.path.join(ROOT, "Sources/CofferApp/FrontEnds/*.swift"))):
        imports = {module for _, module in IMPORT.findall(open(path, encoding="utf-8").read())}
        name = os.path.relpath(path, ROOT)
        if len(imports & FRONT_ENDS) > 1:
            problems.append(f"{name} imports {len(imports & FRONT_ENDS)} front ends: {sorted(imports & FRONT_ENDS)}")
        if "CofferBackends" in imports:
            problems.append(f"{name} imports CofferBackends")
    for module in sorted(os.listdir(os.path.join(ROOT, "Sources"))):
        for path in swift_files(module):
            text = open(path, encoding="utf-8").read()
            name = os.path.relpath(path, ROOT)
            if module not in ENGINE_USERS:
                for attributes, imported in IMPORT.findall(text):
                    if ENGINE_SPI.search(attributes):
                        problems.append(f"{name} imports {imported}'s engine (@_spi(Engine)): "
                                        f"only {', '.join(sorted(ENGINE_USERS))} may; perform an operation in a session")
            if module == "FileService":
                for number, line in enumerate(text.split("\n"), 1):
                    if re.match(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*package\s", line.split("//")[0]):
                        problems.append(f"{name}:{number} declares something `package`: every module of the package "
                                        f"could call it; make engine API `@_spi(Engine) public`")
    return problems


def engine_declarations():
    count = 0
    for module in ("FileService", "CofferCore"):
        for path in swift_files(module):
            count += len(re.findall(r"^\s*@_spi\(Engine\)\s+public\s+(?!import\b)", open(path, encoding="utf-8").read(), re.M))
    return count


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
    problems += source_problems()
    missing = (FRONT_ENDS | SERVICE_USERS) - graph.keys()
    problems += [f"{name} is not a target of the package (the rules name it)" for name in sorted(missing)]
    for problem in problems:
        print(f"module graph: {problem}")
    if problems:
        return 1
    print(f"module graph: {len(graph)} targets; no front end depends on another or on CofferBackends; "
          f"only {', '.join(sorted(ENGINE_USERS))} import the engine's SPI ({engine_declarations()} declarations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
