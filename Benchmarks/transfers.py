#!/usr/bin/env python3
"""Downloads and uploads of one big file over loopback: `coffer -c 'download …'` and
`coffer -c 'upload …'` beside curl, against one local server that costs little (it sends the
file with sendfile(2) and reads uploads into one buffer).

Usage: transfers.py COFFER_BINARY WORK_DIR [--size MiB] [--rounds N]

Coffer's download syncs what comes every 32 MiB and the whole file at the end (so that a
resume never builds on bytes a crash lost), then renames it into files:/Download; curl only
writes. The reference is shown both ways: curl alone, and curl followed by `sync`. Uploads
are a plain PUT and a multipart POST each. Medians over the rounds, Coffer and curl taking
turns, with the ratio curl time / Coffer time (1.0 = as fast as curl).
"""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(path):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            size = os.path.getsize(path)
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("ETag", '"bench"')
            self.end_headers()
            with open(path, "rb") as file:
                self.connection.sendfile(file)

        def do_POST(self):
            self.sink()

        def do_PUT(self):
            self.sink()

        def sink(self):
            left = int(self.headers["Content-Length"])
            buffer = bytearray(1 << 20)
            view = memoryview(buffer)
            while left > 0:
                got = self.rfile.readinto(view[: min(len(buffer), left)])
                if not got:
                    break
                left -= got
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def timed(argv):
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main():
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    size = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 1024
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    os.makedirs(work, exist_ok=True)
    source = os.path.join(work, "transfer-source.bin")
    if not os.path.exists(source) or os.path.getsize(source) != size << 20:
        with open(source, "wb") as file:
            block = os.urandom(1 << 20)
            for _ in range(size):
                file.write(block)
    port = serve(source)
    url = f"http://127.0.0.1:{port}/big.bin"
    container = os.path.join(work, "transfer-container")
    files = os.path.join(container, "Documents", "UserFiles")
    environment = dict(os.environ, LC_ALL="C.UTF-8")
    times = {name: [] for name in ("coffer download", "curl", "curl+sync", "coffer put", "curl put",
                                   "coffer form", "curl form")}
    for _ in range(rounds):
        shutil.rmtree(container, ignore_errors=True)
        subprocess.run([coffer, "--container", container, "-c", "pwd"], check=True, stdout=subprocess.DEVNULL)
        times["coffer download"].append(timed([coffer, "--container", container, "-c", f"download {url}"]))
        # The file downloaded is the one uploaded: it is in files:/Download.
        times["coffer put"].append(timed([coffer, "--container", container, "-c", f"upload --put Download/big.bin {url}"]))
        times["coffer form"].append(timed([coffer, "--container", container, "-c", f"upload Download/big.bin {url}"]))
        target = os.path.join(work, "curl.bin")
        times["curl"].append(timed(["curl", "-sS", "-o", target, url]))
        os.remove(target)
        times["curl+sync"].append(timed(["sh", "-c", f"curl -sS -o '{target}' '{url}' && sync '{target}'"]))
        os.remove(target)
        times["curl put"].append(timed(["curl", "-sS", "-T", source, url]))
        times["curl form"].append(timed(["curl", "-sS", "-F", f"file=@{source}", url]))
    median = {name: statistics.median(values) for name, values in times.items()}
    rate = lambda seconds: f"{size / seconds:7.0f} MiB/s"
    print(f"{size} MiB over loopback, medians of {rounds} rounds")
    print(f"download  coffer {median['coffer download']:6.2f} s {rate(median['coffer download'])}   "
          f"curl {median['curl']:6.2f} s   curl+sync {median['curl+sync']:6.2f} s   "
          f"ratio {median['curl'] / median['coffer download']:.2f} (curl), {median['curl+sync'] / median['coffer download']:.2f} (curl+sync)")
    print(f"upload    PUT  coffer {median['coffer put']:6.2f} s   curl {median['curl put']:6.2f} s   "
          f"ratio {median['curl put'] / median['coffer put']:.2f}")
    print(f"upload    form coffer {median['coffer form']:6.2f} s   curl {median['curl form']:6.2f} s   "
          f"ratio {median['curl form'] / median['coffer form']:.2f}")
    for name, values in times.items():
        print(f"          {name}: {', '.join(f'{value:.2f}' for value in values)}")


if __name__ == "__main__":
    main()
