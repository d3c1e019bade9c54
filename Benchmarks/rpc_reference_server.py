#!/usr/bin/env python3
"""A minimal JSON-RPC 2.0 server over stdio (one JSON message per line) that answers
`initialize`, `files/stat` with the same os.lstat Coffer does, and `files/list` with
os.scandir and an lstat per entry: the reference for
Benchmarks/rpc.py.

Usage: rpc_reference_server.py ROOT
"""
import datetime
import json
import os
import stat
import sys


def node(root, path):
    relative = path.split(":", 1)[1] if ":" in path else path
    full = os.path.join(root, relative.lstrip("/"))
    info = os.lstat(full)
    is_folder = stat.S_ISDIR(info.st_mode)
    modified = datetime.datetime.fromtimestamp(info.st_mtime, datetime.timezone.utc)
    result = {"path": "files:/" + relative.lstrip("/"), "name": os.path.basename(relative.rstrip("/")),
              "kind": "folder" if is_folder else "file", "modified": modified.isoformat(timespec="milliseconds"),
              "hidden": os.path.basename(relative).startswith("."), "type": "public.data",
              "excludedFromBackup": False}
    if not is_folder:
        result["size"] = info.st_size
    return result


def listing(root, path):
    relative = path.split(":", 1)[1] if ":" in path else path
    folder = os.path.join(root, relative.lstrip("/"))
    entries = []
    with os.scandir(folder) as scan:
        for entry in scan:
            if entry.name.startswith("."):
                continue
            entries.append(node(root, os.path.join(relative, entry.name)))
    entries.sort(key=lambda item: (item["kind"] != "folder", item["name"]))
    return {"entries": entries, "total": len(entries)}


def main():
    root = sys.argv[1]
    out = sys.stdout
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 1}}
        elif method == "files/stat":
            try:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": node(root, message["params"]["path"])}
            except OSError as error:
                reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32803, "message": str(error)}}
        elif method == "files/list":
            try:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": listing(root, message["params"]["path"])}
            except OSError as error:
                reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32803, "message": str(error)}}
        else:
            continue
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
