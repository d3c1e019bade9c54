#!/usr/bin/env python3
"""Cross-checks `coffer rpc` with a third-party JSON-RPC client: pygls's JsonRPCClient.

pygls reads responses with the regular expression ^Content-Length: (\\d+)\\r\\n$, so any
deviation from the LSP header format makes it miss the reply and this script time out.

Usage: rpc_pygls_check.py COFFER_BINARY
"""
import owned  # every process this check starts is ended with it (.ci/owned.py)
import asyncio
import os
import sys
import tempfile

from pygls.client import JsonRPCClient
from pygls.exceptions import JsonRpcException


def field(value, name):
    """pygls turns unknown result objects into namedtuple-like objects or dicts."""
    return value[name] if isinstance(value, dict) else getattr(value, name)


async def main(binary):
    work = tempfile.mkdtemp(prefix="coffer-pygls-")
    host = os.path.join(work, "host")
    os.makedirs(host)
    with open(os.path.join(host, "報告 notes.txt"), "w", encoding="utf-8") as handle:
        handle.write("from the host\n")

    client = JsonRPCClient()
    progress = []
    changes = []

    @client.feature("$/progress")
    def on_progress(params):
        progress.append(field(params, "value"))

    @client.feature("files/didChange")
    def on_change(params):
        for change in field(params, "changes"):
            changes.append((field(params, "watchId"), field(change, "type"), field(change, "path")))

    await client.start_io(binary, "--container", os.path.join(work, "c"), "rpc", "--allow-host", host)
    send = client.protocol.send_request_async

    async def call(method, params=None):
        return await asyncio.wait_for(send(method, params), timeout=20)

    init = await call("initialize", {"locale": "en", "clientInfo": {"name": "pygls"}})
    assert field(init, "protocolVersion") == 1, init
    assert [field(m, "name") for m in field(init, "mounts")] == ["files", "trash"], init
    client.protocol.notify("initialized", {})

    node = await call("files/createDirectory", {"path": "/Notes 笔记"})
    assert field(node, "kind") == "folder", node
    await call("files/write", {"path": "/Notes 笔记/a.txt", "data": "héllo"})
    listing = await call("files/list", {"path": "/Notes 笔记"})
    assert field(listing, "total") == 1, listing
    read = await call("files/read", {"path": "/Notes 笔记/a.txt", "encoding": "text"})
    assert field(read, "data") == "héllo" and field(read, "charset") == "UTF-8", read

    imported = await call("host/import", {"hostPaths": [os.path.join(host, "報告 notes.txt")],
                                          "workDoneToken": "import-1"})
    result = field(imported, "results")[0]
    assert field(field(result, "node"), "path") == "files:/Import/報告 notes.txt", imported
    kinds = [field(value, "kind") for value in progress]
    assert kinds[0] == "begin" and kinds[-1] == "end", progress

    # Search finds by name ignoring case; a watch hears of a file written by this process
    # behind Coffer's back, through the file system.
    found = await call("files/search", {"query": "A.TXT"})
    assert [field(n, "path") for n in field(found, "matches")] == ["files:/Notes 笔记/a.txt"], found
    assert field(found, "truncated") is False and field(found, "engine") in ("walk", "index"), found
    watch = field(await call("files/watch", {"path": "/Notes 笔记"}), "watchId")
    folder = os.path.join(work, "c", "Documents", "UserFiles", "Notes 笔记")
    with open(os.path.join(folder, "outside.txt"), "w", encoding="utf-8") as handle:
        handle.write("written by another program\n")
    for _ in range(100):
        if (watch, "created", "files:/Notes 笔记/outside.txt") in changes:
            break
        await asyncio.sleep(0.05)
    assert (watch, "created", "files:/Notes 笔记/outside.txt") in changes, changes
    assert await call("files/unwatch", {"watchId": watch}) is None

    try:
        await call("files/stat", {"path": "/missing.txt"})
        raise AssertionError("stat of a missing file succeeded")
    except JsonRpcException as error:
        assert error.code == -32803, (error.code, error.message)
        assert field(error.data, "kind") == "noSuchFile", error.data
        assert "missing.txt" in error.message, error.message

    try:
        await call("host/import", {"hostPaths": ["/etc/hostname"]})
    except JsonRpcException as error:
        raise AssertionError(f"a per-item failure became a request error: {error}")

    assert await call("shutdown") is None
    client.protocol.notify("exit")
    status = await asyncio.wait_for(client._server.wait(), timeout=20)
    assert status == 0, status
    await client.stop()
    print("pygls cross-check: ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
