#!/usr/bin/env python3
"""`coffer serve`'s resumable uploads (/tus/, the tus 1.0 protocol) against tuspy, a
third-party tus client, and against raw requests for what a client must meet:

  tuspy      a file sent in chunks, stopped half-way, resumed by a new client from the
             server's offset, arrives whole (bytes compared); an empty file too
  dropped    a PATCH whose connection drops mid-body keeps what arrived; HEAD says so; the
             rest completes it
  rules      OPTIONS names version and extensions; no Tus-Resumable -> 412; a wrong offset
             -> 409 with the right one; a wrong Content-Type -> 415; DELETE ends the upload;
             no token -> 403; a destination outside the mounts -> refused; nothing partial
             is visible until the last byte
  restarts   an upload cut by a server stopped with SIGTERM, then by one killed with SIGKILL,
             goes on after the restart from the offset HEAD gives; the audit log shows where
             each PATCH began; the upload's data and record are gone once it is placed
Usage: tus_check.py PATH-TO-COFFER   (needs tuspy)
"""
import owned  # every process this check starts is ended with it (.ci/owned.py)
import base64
import http.client
import io
import json
import os
import subprocess
import sys
import tempfile

from tusclient import client as tus

from serve_support import Server, checker

COFFER = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="coffer-tus-check-")
CONTAINER = os.path.join(WORK, "container")
FILES = os.path.join(CONTAINER, "Documents", "UserFiles")


check = checker("tus_check")


def metadata(**values):
    return ",".join(f"{key} {base64.b64encode(value.encode()).decode()}" for key, value in values.items())


def main():
    subprocess.run([COFFER, "--container", CONTAINER, "-c", "mkdir Uploads"], check=True, capture_output=True)
    server = Server(COFFER, CONTAINER)
    host, token = server.host, server.token
    auth = {"Authorization": f"Bearer {token}"}

    def request(method, path, headers=None, body=None):
        connection = http.client.HTTPConnection(host, timeout=30)
        connection.request(method, path, body=body, headers={**auth, **(headers or {})})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, dict(response.getheaders()), data

    try:
        # tuspy: half, then a new client resumes from the server's offset.
        data = os.urandom(3 << 20)
        tus_client = tus.TusClient(f"http://{host}/tus/", headers=auth)
        first = tus_client.uploader(file_stream=io.BytesIO(data), chunk_size=256 << 10,
                                    metadata={"destination": "files:/Uploads", "filename": "big 文件.bin"})
        first.upload(stop_at=1 << 20)
        check(first.offset == 1 << 20, f"tuspy sent the first half in chunks ({first.offset})")
        check(not os.path.exists(os.path.join(FILES, "Uploads", "big 文件.bin")), "nothing is visible before the last byte")
        again = tus.TusClient(f"http://{host}/tus/", headers=auth).uploader(
            file_stream=io.BytesIO(data), chunk_size=512 << 10, url=first.url)
        check(again.offset == 1 << 20, "a new client learns the offset from HEAD")
        again.upload()
        with open(os.path.join(FILES, "Uploads", "big 文件.bin"), "rb") as arrived:
            check(arrived.read() == data, "the resumed upload arrives whole")
        empty = tus_client.uploader(file_stream=io.BytesIO(b""), metadata={"destination": "files:/Uploads", "filename": "empty.txt"})
        empty.upload()
        check(os.path.getsize(os.path.join(FILES, "Uploads", "empty.txt")) == 0, "an empty file arrives")

        # The protocol's rules.
        status, headers, _ = request("OPTIONS", "/tus/")
        check(status == 204 and headers.get("Tus-Version") == "1.0.0" and "creation" in headers.get("Tus-Extension", "")
              and "termination" in headers.get("Tus-Extension", ""), "OPTIONS names the version and extensions")
        status, _, _ = request("POST", "/tus/", {"Upload-Length": "10", "Upload-Metadata": metadata(destination="files:/", filename="x")})
        check(status == 412, "no Tus-Resumable: 412")
        base = {"Tus-Resumable": "1.0.0"}
        status, headers, _ = request("POST", "/tus/", {**base, "Upload-Length": "10",
                                                        "Upload-Metadata": metadata(destination="files:/Uploads", filename="ten.txt")})
        location = headers.get("Location", "")
        check(status == 201 and location.startswith("/tus/"), f"POST creates an upload: {location}")
        status, headers, _ = request("PATCH", location, {**base, "Upload-Offset": "4",
                                                          "Content-Type": "application/offset+octet-stream"}, b"oops")
        check(status == 409 and headers.get("Upload-Offset") == "0", "a wrong offset: 409 with the server's")
        status, _, _ = request("PATCH", location, {**base, "Upload-Offset": "0", "Content-Type": "text/plain"}, b"0123")
        check(status == 415, "a wrong Content-Type: 415")

        # A connection that drops mid-body keeps what arrived.
        raw = http.client.HTTPConnection(host, timeout=30)
        raw.putrequest("PATCH", location)
        for name, value in {**auth, **base, "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream",
                            "Content-Length": "10"}.items():
            raw.putheader(name, value)
        raw.endheaders()
        raw.send(b"012345")
        raw.sock.shutdown(2)
        raw.close()
        for _ in range(50):
            status, headers, _ = request("HEAD", location, base)
            if headers.get("Upload-Offset") == "6":
                break
            import time
            time.sleep(0.1)
        check(status == 200 and headers.get("Upload-Offset") == "6" and headers.get("Upload-Length") == "10",
              f"after a dropped connection HEAD says what arrived: {headers.get('Upload-Offset')}")
        status, headers, _ = request("PATCH", location, {**base, "Upload-Offset": "6",
                                                          "Content-Type": "application/offset+octet-stream"}, b"6789")
        check(status == 204 and headers.get("Upload-Offset") == "10", "the rest completes it")
        with open(os.path.join(FILES, "Uploads", "ten.txt"), "rb") as arrived:
            check(arrived.read() == b"0123456789", "and it arrives whole")
        check(request("HEAD", location, base)[0] == 404, "a finished upload is gone from /tus/")

        # A taken name is the client's to settle: 409, which tus clients do not try again (issue 48: 500).
        status, headers, _ = request("POST", "/tus/", {**base, "Upload-Length": "3",
                                                        "Upload-Metadata": metadata(destination="files:/Uploads", filename="ten.txt")})
        if status == 201:
            status, headers, _ = request("PATCH", headers["Location"], {**base, "Upload-Offset": "0",
                                                                        "Content-Type": "application/offset+octet-stream"}, b"abc")
        check(status == 409 and headers.get("X-Coffer-Error") == "fileExists", f"a taken name: 409 ({status})")
        with open(os.path.join(FILES, "Uploads", "ten.txt"), "rb") as kept:
            check(kept.read() == b"0123456789", "and the file there is kept")

        status, headers, _ = request("POST", "/tus/", {**base, "Upload-Length": "5",
                                                        "Upload-Metadata": metadata(destination="files:/Uploads", filename="dropped.txt")})
        check(request("DELETE", headers["Location"], base)[0] == 204 and request("HEAD", headers["Location"], base)[0] == 404,
              "DELETE ends an upload")
        for bad in ["../../etc", "nowhere:/x", "files:/Uploads/../.."]:
            status, _, _ = request("POST", "/tus/", {**base, "Upload-Length": "1", "Upload-Metadata": metadata(destination=bad, filename="x")})
            check(status >= 400, f"a destination {bad!r} is refused ({status})")
        status, _, _ = request("POST", "/tus/", {**base, "Upload-Length": "1",
                                                  "Upload-Metadata": metadata(destination="files:/Uploads", filename="../escape")})
        check(status >= 400 and not os.path.exists(os.path.join(FILES, "escape")), "a file name with a path is refused")
        connection = http.client.HTTPConnection(host, timeout=30)
        connection.request("OPTIONS", "/tus/")
        check(connection.getresponse().status == 403, "without the token: 403")
        leftovers = [name for name in os.listdir(os.path.join(FILES, "Uploads")) if name.startswith(".")]
        check(leftovers == [], f"nothing partial in the folder: {leftovers}")
        server = restarts(server, request)
    finally:
        server.stop()
    print("tus_check: every check held")


def restarts(server, request):
    """An upload goes on across a server stopped (SIGTERM) and one killed (SIGKILL), on the same port."""
    base = {"Tus-Resumable": "1.0.0"}
    octets = {**base, "Content-Type": "application/offset+octet-stream"}
    data = os.urandom(3 << 20)
    status, headers, _ = request("POST", "/tus/", {**base, "Upload-Length": str(len(data)),
                                                    "Upload-Metadata": metadata(destination="files:/Uploads", filename="across restarts.bin")})
    location = headers["Location"]
    port = int(server.host.rsplit(":", 1)[1])
    for index, how in enumerate(["SIGTERM", "SIGKILL"]):
        start, end = index << 20, (index + 1) << 20
        status, headers, _ = request("PATCH", location, {**octets, "Upload-Offset": str(start)}, data[start:end])
        check(status == 204 and headers.get("Upload-Offset") == str(end), f"the part before the {how} arrives")
        if how == "SIGTERM":
            check(server.stop() == 0, "the server stops at SIGTERM")
        else:
            server.process.kill()
            server.process.wait(timeout=30)
        server = Server(COFFER, CONTAINER, port=port)
        check(not os.path.exists(os.path.join(FILES, "Uploads", "across restarts.bin")), f"nothing is visible after the {how}")
        status, headers, _ = request("HEAD", location, base)
        check(status == 200 and headers.get("Upload-Offset") == str(end) and headers.get("Upload-Length") == str(len(data)),
              f"after a restart ({how}) HEAD gives the offset reached: {status} {headers.get('Upload-Offset')}")
    status, headers, _ = request("PATCH", location, {**octets, "Upload-Offset": str(2 << 20)}, data[2 << 20:])
    check(status == 204 and headers.get("Upload-Offset") == str(len(data)), "the rest completes it")
    with open(os.path.join(FILES, "Uploads", "across restarts.bin"), "rb") as arrived:
        check(arrived.read() == data, "the upload cut by two restarts arrives whole")
    upload = location.rsplit("/", 1)[1]
    offsets = []
    with open(os.path.join(CONTAINER, "Library", "Application Support", "AppData", "logs", "audit.jsonl")) as log:
        for line in log:
            entry = json.loads(line)
            if entry.get("method") == "appendUploadStream" and entry.get("upload") == upload:
                offsets.append(int(entry["offset"]))
    check(offsets == [0, 1 << 20, 2 << 20], f"the audit log shows where each PATCH began: {offsets}")
    cache = os.path.join(CONTAINER, "Library", "Caches", "Downloading")
    left = [name for name in os.listdir(cache) if name.startswith(("upload-", "resume-"))]
    check(left == [], f"nothing of the upload is left in the cache: {left}")
    return server


if __name__ == "__main__":
    main()
