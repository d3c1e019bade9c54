#!/usr/bin/env python3
"""Cross-checks `coffer mcp` with the official MCP Python SDK's client (`mcp` on PyPI).

Connects in both eras the SDK speaks (mode="legacy": the 2025-11-25 initialize handshake;
mode="auto": server/discover and the stateless 2026-07-28 revision), lists the tools and
validates every input and output schema with `jsonschema` (Draft 2020-12), then calls each
tool of the reference filesystem server, then each of Coffer's own, and checks its effect on disk; with `--structured`,
that every structuredContent validates against its tool's outputSchema, and without it, that
the lean list has none. Needs Pillow for the thumbnail check.

Then the same over Streamable HTTP (`coffer mcp --listen`) with the SDK's `streamable_http_client`,
in both eras, and the transport's rules by raw requests: no token or a wrong one 401, a foreign
Origin 403, sessions opened by initialize, refused when unknown (404) or missing (400), ended by
DELETE; the token file is mode 600.

Usage: mcp_sdk_check.py PATH-TO-COFFER
"""

import owned  # every process this check starts is ended with it (.ci/owned.py)
import asyncio
import base64
import functools
import http.client
import http.server
import threading
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile

import jsonschema
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

REFERENCE_TOOLS = {
    "read_text_file", "read_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
    "create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file",
    "search_files", "get_file_info", "list_allowed_directories",
}

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0500f000485018084a98c21"
    "0000000049454e44ae426082"
)


def check(condition, what):
    if not condition:
        raise SystemExit(f"mcp_sdk_check: FAILED: {what}")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class HTTPServer:
    """`coffer mcp --listen` on a free port: its address and the token it printed."""

    def __init__(self, coffer, container, *options):
        self.process = subprocess.Popen([coffer, "--container", container, "mcp", "--listen",
                                         f"http://127.0.0.1:{free_port()}/mcp", *options],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env={"LANG": "C.UTF-8", "HOME": container, "PATH": os.environ["PATH"]})
        self.url = re.search(r"http://\S+", self.process.stdout.readline()).group(0)
        self.token = self.process.stdout.readline().strip().rsplit(" ", 1)[-1]

    def client(self, **headers):
        return create_mcp_http_client(headers={"Authorization": f"Bearer {self.token}", **headers})

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=30)
        check(status == 0, f"coffer mcp --listen stops at SIGTERM with status 0 ({status}): {self.process.stderr.read()}")


async def run_era(coffer, mode, structured, transport="stdio"):
    container = tempfile.mkdtemp(prefix=f"coffer-mcp-{mode}-")
    root = os.path.join(container, "Documents", "UserFiles")
    host = tempfile.mkdtemp(prefix="coffer-mcp-host-")
    options = (["--structured"] if structured else []) + ["--allow-host", host]
    http = None
    if transport == "http":
        http = HTTPServer(coffer, container, *options)
        server = streamable_http_client(http.url, http_client=http.client())
    else:
        server = StdioServerParameters(command=coffer, args=["--container", container, "mcp"] + options,
                                       env={"LANG": "C.UTF-8", "HOME": container})
    try:
        await exercise(server, mode, structured, transport, root, host)
    finally:
        if http:
            http.stop()


async def exercise(server, mode, structured, transport, root, host):
    async with Client(server, mode=mode, raise_exceptions=True) as client:
        version = client.protocol_version
        check(version == ("2025-11-25" if mode == "legacy" else "2026-07-28"), f"{mode}: negotiated {version}")

        listing = await client.list_tools()
        tools = {tool.name: tool for tool in listing.tools}
        check(REFERENCE_TOOLS <= set(tools), f"{mode}: missing tools {REFERENCE_TOOLS - set(tools)}")
        for tool in tools.values():
            # The lean default list has no output schemas; --structured gives every tool its own.
            check((tool.output_schema is not None) == structured, f"{tool.name}: an output schema only with --structured")
            for schema in (tool.input_schema, tool.output_schema):
                if schema is not None:
                    jsonschema.Draft202012Validator.check_schema(schema)
            # Only a download reaches outside Coffer (openWorldHint is true when left out).
            open_world = tool.annotations.open_world_hint if tool.annotations and tool.annotations.open_world_hint is not None else True
            check(open_world == (tool.name == "download_file"), f"{tool.name} annotations")

        async def call(name, arguments, expect_error=False):
            result = await client.call_tool(name, arguments)
            check(bool(result.is_error) == expect_error,
                  f"{mode}: {name}({arguments}) is_error={result.is_error}: {result.content}")
            if not expect_error:
                check(result.structured_content is not None, f"{name} has structuredContent")
                if structured:
                    jsonschema.validate(result.structured_content, tools[name].output_schema,
                                        cls=jsonschema.Draft202012Validator)
                check(name == "read_media_file" or result.structured_content["content"] == result.content[0].text,
                      f"{name}: text mirrors structuredContent")
            return result

        def text(result):
            return result.content[0].text

        # Writes and reads, by absolute paths inside the allowed directory.
        await call("create_directory", {"path": f"{root}/docs/深层/folder"})
        check(os.path.isdir(f"{root}/docs/深层/folder"), "create_directory made the folders")
        await call("write_file", {"path": f"{root}/docs/a.txt", "content": "line 1\nline 2\nline 3\n"})
        check(open(f"{root}/docs/a.txt").read() == "line 1\nline 2\nline 3\n", "write_file wrote")
        check(text(await call("read_text_file", {"path": f"{root}/docs/a.txt", "head": 1})) == "line 1\n", "head")
        check(text(await call("read_text_file", {"path": f"{root}/docs/a.txt", "tail": 1})) == "line 3\n", "tail")
        check(text(await call("read_file", {"path": f"{root}/docs/a.txt"})).startswith("line 1"), "read_file")
        multiple = await call("read_multiple_files", {"paths": [f"{root}/docs/a.txt", f"{root}/none.txt"]})
        check("line 2" in text(multiple) and "none.txt: Error" in text(multiple), "read_multiple_files")

        diff = await call("edit_file", {"path": f"{root}/docs/a.txt", "dryRun": True,
                                        "edits": [{"oldText": "line 2", "newText": "line two"}]})
        check("-line 2\n+line two" in text(diff), f"edit_file diff: {text(diff)}")
        check("line 2" in open(f"{root}/docs/a.txt").read(), "a dry run changes nothing")
        await call("edit_file", {"path": f"{root}/docs/a.txt", "edits": [{"oldText": "line 2", "newText": "line two"}]})
        check(open(f"{root}/docs/a.txt").read() == "line 1\nline two\nline 3\n", "edit_file applied")
        missed = await call("edit_file", {"path": f"{root}/docs/a.txt",
                                          "edits": [{"oldText": "line 9", "newText": "x"}]}, expect_error=True)
        check("edit 1 of 1" in text(missed), "edit_file names the edit that missed")

        with open(f"{root}/docs/dot.png", "wb") as png:
            png.write(PNG)
        media = await client.call_tool("read_media_file", {"path": f"{root}/docs/dot.png"})
        check(media.content[0].type == "image" and media.content[0].mime_type == "image/png", "read_media_file")
        # A picture larger than the client asks for comes as a thumbnail that fits (Pillow reads it).
        from PIL import Image
        Image.new("RGB", (400, 300), (40, 90, 200)).save(f"{root}/docs/wide.png")
        thumbnail = await call("read_media_file", {"path": f"{root}/docs/wide.png", "maxSize": 100})
        check(thumbnail.structured_content["thumbnail"] is True and thumbnail.content[0].mime_type == "image/png",
              f"read_media_file thumbnail: {thumbnail.structured_content}")
        with Image.open(io.BytesIO(base64.b64decode(thumbnail.content[0].data))) as image:
            check(image.size == (100, 75), f"the thumbnail is {image.size}")
        os.remove(f"{root}/docs/wide.png")

        listing = text(await call("list_directory", {"path": f"{root}/docs"}))
        check("[DIR] 深层" in listing and "[FILE] a.txt" in listing, f"list_directory: {listing}")
        sized = text(await call("list_directory_with_sizes", {"path": f"{root}/docs", "sortBy": "size"}))
        check("Total: 2 files, 1 directories" in sized, f"list_directory_with_sizes: {sized}")
        tree = await call("directory_tree", {"path": f"{root}/docs", "excludePatterns": ["*.png"]})
        names = [entry["name"] for entry in tree.structured_content["tree"]]
        check(names == ["深层", "a.txt"], f"directory_tree: {names}")

        await call("write_file", {"path": f"{root}/b.txt", "content": "b"})
        await call("move_file", {"source": f"{root}/docs/a.txt", "destination": f"{root}/b.txt"}, expect_error=True)
        check(os.path.exists(f"{root}/docs/a.txt") and open(f"{root}/b.txt").read() == "b", "move_file never overwrites")
        await call("move_file", {"source": f"{root}/docs/a.txt", "destination": f"{root}/moved.txt"})
        check(os.path.exists(f"{root}/moved.txt") and not os.path.exists(f"{root}/docs/a.txt"), "move_file moved")

        found = text(await call("search_files", {"path": root, "pattern": "*.txt"}))
        check(set(found.split("\n")) == {f"{root}/b.txt", f"{root}/moved.txt"}, f"search_files: {found}")
        info = await call("get_file_info", {"path": f"{root}/moved.txt"})
        check(info.structured_content["isFile"] is True and info.structured_content["size"] == 23, "get_file_info")
        allowed = text(await call("list_allowed_directories", {}))
        check(root in allowed, "list_allowed_directories")

        # Coffer's own: soft deletion.
        trashed = await call("trash_file", {"path": f"{root}/b.txt"})
        check(not os.path.exists(f"{root}/b.txt"), "trash_file")
        await call("restore_file", {"trashId": trashed.structured_content["trashId"]})
        check(open(f"{root}/b.txt").read() == "b", "restore_file")

        # Outside the allowed directory: refused, nothing read.
        escaped = await call("read_text_file", {"path": f"{root}/../../../etc/passwd"}, expect_error=True)
        check("root:" not in text(escaped), "no escape")

        templates = await client.list_resource_templates()
        check(templates.resource_templates[0].uri_template.startswith("file://"), "resource template")
        contents = await client.read_resource(f"file://{root}/moved.txt")
        check(contents.contents[0].text.startswith("line 1"), "resources/read")
        # Coffer's own tools, each once.
        check("b.txt" not in text(await call("list_trash", {})), "list_trash")
        check(f"{root}/moved.txt" in text(await call("find_files", {"query": "moved"})), "find_files")
        tagged = await call("tag_files", {"paths": [f"{root}/b.txt"], "add": ["work"]})
        check("work" in text(tagged), f"tag_files: {text(tagged)}")
        hits = await call("search_file_contents", {"path": root, "query": "line two"})
        check("moved.txt" in text(hits), f"search_file_contents: {text(hits)}")
        await call("export_file", {"path": f"{root}/b.txt", "hostDirectory": host})
        check(open(f"{host}/b.txt").read() == "b", "export_file")
        await call("create_directory", {"path": f"{root}/imported"})
        await call("import_files", {"hostPaths": [f"{host}/b.txt"], "destination": f"{root}/imported"})
        check(open(f"{root}/imported/b.txt").read() == "b", "import_files")
        served = tempfile.mkdtemp()
        with open(os.path.join(served, "web.txt"), "w") as page:
            page.write("from the web")
        web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=served))
        threading.Thread(target=web.serve_forever, daemon=True).start()
        try:
            await call("download_file", {"url": f"http://127.0.0.1:{web.server_address[1]}/web.txt", "destination": f"{root}/imported"})
        finally:
            web.shutdown()
        check(open(f"{root}/imported/web.txt").read() == "from the web", "download_file")

        # Progress on the way, in both transports (over HTTP as server-sent events on the request's POST).
        with open(f"{root}/big.bin", "wb") as big:
            big.write(os.urandom(24 << 20))
        reports = []

        async def progressed(progress, total, message):
            reports.append(progress)
        copied = await client.call_tool("copy_file", {"source": f"{root}/big.bin", "destination": f"{root}/big copy.bin"},
                                        progress_callback=progressed)
        check(not copied.is_error and os.path.getsize(f"{root}/big copy.bin") == 24 << 20, "copy_file copied")
        check(len(reports) >= 1 and reports == sorted(reports), f"{mode}/{transport}: progress came, never decreasing: {reports}")
    print(f"mcp_sdk_check: {transport} {mode} ({version}){' --structured' if structured else ''}: {len(tools)} tools, "
          "all schemas valid, every tool checked")


def http_rules(coffer):
    """What Streamable HTTP asks of a server: the token, the Origin, sessions, and their end."""
    container = tempfile.mkdtemp(prefix="coffer-mcp-http-")
    server = HTTPServer(coffer, container)
    host = server.url.split("/")[2]

    def post(body, **headers):
        connection = http.client.HTTPConnection(host, timeout=30)
        connection.request("POST", "/mcp", body=json.dumps(body), headers={"Content-Type": "application/json",
                                                                         "Accept": "application/json, text/event-stream", **headers})
        answer = connection.getresponse()
        data = answer.read()
        connection.close()
        return answer.status, dict(answer.getheaders()), data

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "check", "version": "1"}}}
    auth = {"Authorization": f"Bearer {server.token}"}
    try:
        check(post(initialize)[0] == 401, "no token: 401")
        check(post(initialize, Authorization="Bearer " + "0" * 48)[0] == 401, "a wrong token: 401")
        check(post(initialize, Origin="http://evil.example", **auth)[0] == 403, "a foreign Origin: 403")
        status, headers, data = post(initialize, Origin=server.url.rsplit("/", 1)[0], **auth)
        session = headers.get("Mcp-Session-Id")
        check(status == 200 and session and json.loads(data)["result"]["protocolVersion"] == "2025-11-25",
              f"initialize opens a session ({status}, {session})")
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        check(post(listing, **auth)[0] == 400, "a 2025-11-25 request without its session: 400")
        check(post(listing, **auth, **{"Mcp-Session-Id": "nope"})[0] == 404, "an unknown session: 404")
        status, _, data = post(listing, **auth, **{"Mcp-Session-Id": session})
        check(status == 200 and len(json.loads(data)["result"]["tools"]) == 27, "the session lists its tools")
        status, _, _ = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, **auth, **{"Mcp-Session-Id": session})
        check(status == 202, f"a notification: 202 ({status})")
        stateless = {"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                     "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
        status, _, data = post(stateless, **auth)
        check(status == 200 and json.loads(data)["result"].get("resultType") == "complete", "a stateless 2026-07-28 request")
        connection = http.client.HTTPConnection(host, timeout=30)
        connection.request("DELETE", "/mcp", headers={**auth, "Mcp-Session-Id": session})
        check(connection.getresponse().status == 204, "DELETE ends the session")
        connection.close()
        check(post(listing, **auth, **{"Mcp-Session-Id": session})[0] == 404, "an ended session: 404")
        connection = http.client.HTTPConnection(host, timeout=30)
        connection.request("GET", "/mcp", headers=auth)
        check(connection.getresponse().status == 405, "GET: 405 (no stream of the server's own)")
        connection.close()
        check(post({"jsonrpc": "1.0"}, **auth)[0] == 400, "not JSON-RPC 2.0: 400")
        status, _, data = post([initialize], **auth)
        check(status == 400 and json.loads(data)["error"]["code"] == -32600, "a batch: 400, -32600")
        # Held to the strict reading every JSON-RPC message gets; ids come back as they were written.
        def post_text(text, **headers):
            connection = http.client.HTTPConnection(host, timeout=30)
            connection.request("POST", "/mcp", body=text.encode(), headers={"Content-Type": "application/json",
                                                                          "Accept": "application/json", **headers})
            answer = connection.getresponse()
            data = answer.read()
            connection.close()
            return answer.status, data

        status, data = post_text('{"jsonrpc": "2.0", "id": 4, "method": "tools/list",}', **auth)
        check(status == 400 and json.loads(data)["error"]["code"] == -32700, f"a trailing comma: 400, -32700 ({status}, {data[:120]!r})")
        meta = '"params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}'
        for written in ("1.0", "12345678901234567890123", '"请求 \\u4e00"'):
            status, data = post_text(f'{{"jsonrpc": "2.0", "id": {written}, "method": "tools/list", {meta}}}', **auth)
            check(status == 200 and data.startswith(b'{"jsonrpc":"2.0","id":' + written.encode() + b","),
                  f"the id {written} comes back as it was written: {data[:60]!r}")
        # A name written with escapes is the same name (Apple's encoders write `\/`); one given twice is refused.
        status, data = post_text('{"jsonrpc": "2.0", "id": 5, "method": "tools/list", '
                                 '"params": {"_meta": {"io.modelcontextprotocol\\/protocolVersion": "2026-07-28"}}}', **auth)
        check(status == 200 and b'"tools"' in data, f"an escaped member name is read as written out ({status}, {data[:80]!r})")
        status, data = post_text(f'{{"jsonrpc": "2.0", "id": 6, "id": 7, "method": "tools/list", {meta}}}', **auth)
        check(status == 400 and json.loads(data)["error"]["code"] == -32600, f"an id given twice: 400, -32600 ({status})")
        # What the strict pass lets through but the decoder cannot read (a lone surrogate) is answered, not left waiting.
        status, data = post_text(f'{{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {{"name": "list_directory", '
                                 f'"arguments": {{"path": "\\ud800"}}, "_meta": {{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}}}}', **auth)
        check(status == 200 and b'"id":8' in data, f"a lone surrogate is answered with the request's id ({status}, {data[:160]!r})")
        status, _ = post_text(f'{{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {{"requestId": 99, '
                              f'"_meta": {{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}}}}', **auth)
        check(status == 202, f"cancelling a request that is not running: 202 ({status})")
    finally:
        server.stop()
    mode = os.stat(os.path.join(container, "Library", "Application Support", "AppData", "mcp-token")).st_mode & 0o777
    check(mode == 0o600, f"the token is kept with mode 600 ({oct(mode)})")
    print("mcp_sdk_check: http: 401 without the right token, 403 for a foreign Origin, sessions opened and ended")


async def main():
    coffer = os.path.abspath(sys.argv[1])
    # Each era once with the lean default list, once with --structured (whose structuredContent
    # is validated against the output schemas).
    for mode in ("legacy", "auto"):
        for structured in (False, True):
            await run_era(coffer, mode, structured)
        # Streamable HTTP (`coffer mcp --listen`), through the SDK's own HTTP client.
        await run_era(coffer, mode, True, transport="http")
    http_rules(coffer)


if __name__ == "__main__":
    asyncio.run(main())
