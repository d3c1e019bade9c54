#!/usr/bin/env python3
"""A local HTTP server for the transfer tests (Python's http.server), printing its port; HTTPS
with `--tls CERT KEY`.

GET /data/NAME?size=N      N bytes (default 3 MiB) that depend on NAME, with a strong ETag and a
                           Last-Modified date; honours Range and If-Range (a stale validator
                           gets the whole file, as RFC 9110 says).
GET /noranges/NAME         the same bytes, always whole (Range ignored).
GET /slow/NAME             as /data, 256 KiB every 20 ms (about 12 MiB a second): time to cancel.
GET /big/NAME?size=N       N bytes made as they are sent (never held whole), with ranges: for
                           downloads of gigabytes.
PUT or POST /sink          reads the body and forgets it; answers its size.
?stall=M                   on /data and /big: a request from the start sends M bytes, then
                           nothing for a minute (a client is surely mid-download when killed).
GET /changing/NAME         a new version (ETag and bytes) on every request.
GET /drop/NAME             the first request for NAME sends half and hangs up; later ones behave
                           as /data.
GET /splice/NAME           the first request sends half of version 1 and hangs up; later ones
                           serve version 2 (another ETag) and answer a Range with 206 whatever
                           If-Range says, as a broken server or cache does.
GET /redirect/NAME         302 to /data/NAME.
GET /loop/NAME             302 to itself, for ever.
GET /named                 with Content-Disposition: filename and filename* (UTF-8).
GET /missing               404.
GET /stats                 the Range header of each request so far, as JSON.
POST /form                 a multipart/form-data body parsed with python-multipart (PyPI); answers
                           JSON: the fields, and each file's field, name, type, size and SHA-256.
PUT /put/NAME              answers the body's size and SHA-256 as JSON.
PUT /flaky/NAME            503 the first time, then as /put.
"""
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ranges_seen = []
versions = {}
dropped = set()
lock = threading.Lock()


def payload(name, size, version=1):
    """`NAME:VERSION;` over and over: different for each name and version, easy to remake."""
    seed = f"{name}:{version};".encode()
    return (seed * (size // len(seed) + 1))[:size]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urlparse(self.path)
        parts = url.path.strip("/").split("/")
        size = int(parse_qs(url.query).get("size", [3 << 20])[0])
        with lock:
            ranges_seen.append(self.headers.get("Range"))
        kind = parts[0]
        name = parts[1] if len(parts) > 1 else "x"
        if kind == "big":
            return self.send_big(name, size)
        if kind == "stats":
            return self.send_bytes(200, json.dumps(ranges_seen).encode(), {"Content-Type": "application/json"})
        if kind == "missing":
            return self.send_bytes(404, b"no such thing", {})
        if kind == "loop":
            self.send_response(302)
            self.send_header("Location", f"/loop/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if kind == "redirect":
            self.send_response(302)
            self.send_header("Location", f"/data/{name}?{url.query}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if kind == "named":
            return self.send_bytes(200, b"named content", {
                "Content-Disposition": "attachment; filename=\"report.txt\"; filename*=UTF-8''%E5%B9%B4%E5%BA%A6%E6%8A%A5%E5%91%8A.txt"})
        version = 1
        if kind == "splice":
            with lock:
                version = 2 if name in dropped else 1
        if kind == "changing":
            with lock:
                versions[name] = versions.get(name, 0) + 1
                version = versions[name]
        body = payload(name, size, version)
        etag = f'"{name}-v{version}"'
        headers = {"ETag": etag, "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT", "Accept-Ranges": "bytes",
                   "Content-Type": "application/octet-stream"}
        wanted = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        honour = kind != "noranges" and wanted and wanted.startswith("bytes=") and (
            if_range is None or if_range == etag or kind == "splice")
        if honour:
            start = int(wanted[6:].split("-")[0])
            if start >= len(body):
                headers["Content-Range"] = f"bytes */{len(body)}"
                return self.send_bytes(416, b"", headers)
            headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
            return self.send_bytes(206, body[start:], headers, slow=kind == "slow")
        if kind in ("drop", "splice"):
            with lock:
                first = name not in dropped
                dropped.add(name)
            if first:
                self.send_response(200)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
        return self.send_bytes(200, body, headers, slow=kind == "slow")

    def stall_point(self):
        """With `?stall=M`, for a request from the start: where its answer stops."""
        stall = parse_qs(urlparse(self.path).query).get("stall")
        wanted = self.headers.get("Range")
        return int(stall[0]) if stall and (not wanted or wanted == "bytes=0-") else None

    def stall(self):
        """Holds the connection for a minute without a byte, then closes it."""
        time.sleep(60)
        self.close_connection = True

    def send_big(self, name, size):
        """`size` bytes of `payload(name, 1 MiB)` over and over, sent a megabyte at a time."""
        block = payload(name, 1 << 20)
        start = 0
        wanted = self.headers.get("Range")
        status = 200
        headers = {"ETag": f'"{name}-big"', "Accept-Ranges": "bytes"}
        if wanted and wanted.startswith("bytes=") and self.headers.get("If-Range") in (None, headers["ETag"]):
            start = int(wanted[6:].split("-")[0])
            status = 206
            headers["Content-Range"] = f"bytes {start}-{size - 1}/{size}"
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        position = start
        end = self.stall_point() or size
        try:
            while position < end:
                offset = position % len(block)
                piece = block[offset:min(len(block), offset + end - position)]
                self.wfile.write(piece)
                position += len(piece)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        if end < size:
            self.stall()

    def sink(self):
        left = int(self.headers.get("Content-Length", 0))
        while left > 0:
            chunk = self.rfile.read(min(1 << 20, left))
            if not chunk:
                break
            left -= len(chunk)
        self.send_bytes(200, str(int(self.headers.get("Content-Length", 0))).encode(), {})

    def do_POST(self):
        if urlparse(self.path).path == "/sink":
            return self.sink()
        from python_multipart import parse_form

        if urlparse(self.path).path != "/form":
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            return self.send_bytes(404, b"no such form", {})
        fields, files = {}, []

        def on_field(field):
            fields[field.field_name.decode()] = field.value.decode() if field.value else ""

        def on_file(file):
            file.file_object.seek(0)
            data = file.file_object.read()
            files.append({"field": file.field_name.decode(), "name": file.file_name.decode(),
                          "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})

        headers = {"Content-Type": self.headers["Content-Type"], "Content-Length": self.headers["Content-Length"]}
        parse_form(headers, self.rfile, on_field, on_file)
        body = json.dumps({"fields": fields, "files": files}, ensure_ascii=False).encode()
        self.send_bytes(200, body, {"Content-Type": "application/json"})

    def do_PUT(self):
        if urlparse(self.path).path == "/sink":
            return self.sink()
        parts = self.path.strip("/").split("/")
        length = int(self.headers["Content-Length"])
        digest, size = hashlib.sha256(), 0
        while size < length:
            chunk = self.rfile.read(min(1 << 20, length - size))
            if not chunk:
                break
            digest.update(chunk)
            size += len(chunk)
        if parts[0] == "flaky":
            with lock:
                first = parts[1] not in dropped
                dropped.add(parts[1])
            if first:
                return self.send_bytes(503, b"busy", {})
        body = json.dumps({"size": size, "sha256": digest.hexdigest(), "type": self.headers["Content-Type"]}).encode()
        self.send_bytes(200, body, {"Content-Type": "application/json"})

    def send_bytes(self, status, body, headers, slow=False):
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        stall = self.stall_point() if status == 200 else None
        try:
            if stall is not None:
                self.wfile.write(body[:stall])
                self.wfile.flush()
                return self.stall()
            if not slow:
                self.wfile.write(body)
                return
            for start in range(0, len(body), 256 << 10):
                self.wfile.write(body[start:start + (256 << 10)])
                self.wfile.flush()
                time.sleep(0.02)
        except (BrokenPipeError, ConnectionResetError):
            pass


def exit_with_the_test():
    """Standard input is the test's pipe: its end (the test finished or died) ends the server."""
    sys.stdin.read()
    os._exit(0)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if "--tls" in sys.argv:
    # HTTPS with the certificate and key given: `--tls CERT KEY`.
    import ssl
    at = sys.argv.index("--tls")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[at + 1], sys.argv[at + 2])
    server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=exit_with_the_test, daemon=True).start()
print(server.server_address[1], flush=True)
server.serve_forever()
