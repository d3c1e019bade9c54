#!/usr/bin/env python3
"""Coffer's WebDAV beside `rclone serve webdav` (Debian's rclone), on the same folder, in one run (issue 53).

Usage: dav.py COFFER_BINARY WORK_DIR [--rounds N] [--size-mib M] [--entries N] [--small N]

- listing: `PROPFIND` Depth 1 of a folder of 10,000 files, the whole answer read (Python's http.client);
  milliseconds, lower is better.
- download: `GET` of a 1 GiB file, curl to /dev/null; MB/s.
- upload: `PUT` of the same file from Python's http.client in 1 MiB blocks; rclone's made as durable as
  Coffer's (an `fsync` of the file it wrote, timed with it: Coffer syncs a file before it appears); MB/s.
- small files: `rclone copy` of 5,000 one-kilobyte files to a new folder through each server (the same
  rclone client, a `webdav` remote; Coffer's with `vendor = nextcloud`, so it also sends times and
  checksums); seconds.
- memory: the peak resident size of each server over the run (`VmHWM`). Goal: Coffer under 64 MiB.

Goal: Coffer >= 1.0x rclone on each figure. The sides take turns at going first in every round; medians.
Both servers are started and ended by the script, with HTTP Basic on both.
"""
import http.client
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_server import MIB, curl_download, free_port, make_file, stop, wait_for_port  # noqa: E402


def basic(token):
    import base64
    return "Basic " + base64.b64encode(f"me:{token}".encode()).decode()


def propfind(port, path, authorization):
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    connection.request("PROPFIND", path, body=b"", headers={"Depth": "1", "Authorization": authorization})
    answer = connection.getresponse()
    body = answer.read()
    seconds = time.perf_counter() - started
    connection.close()
    if answer.status != 207 or body.count(b"<D:response>") + body.count(b"<d:response>") < 1000:
        raise SystemExit(f"PROPFIND {path} on {port}: status {answer.status}, {len(body)} bytes")
    return seconds * 1000


def put(port, path, source, authorization, written=None):
    size = os.path.getsize(source)
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600, blocksize=MIB)
    with open(source, "rb") as body:
        connection.request("PUT", path, body=body, headers={"Content-Length": str(size), "Authorization": authorization})
    answer = connection.getresponse()
    answer.read()
    if answer.status not in (200, 201, 204):
        raise SystemExit(f"PUT {path} on {port}: status {answer.status}")
    if written:
        descriptor = os.open(written, os.O_RDONLY)
        os.fsync(descriptor)
        os.close(descriptor)
    seconds = time.perf_counter() - started
    connection.close()
    return size / seconds


def rclone_copy(source, url, password, vendor, destination):
    environment = dict(os.environ, RCLONE_CONFIG="/dev/null", RCLONE_CONFIG_B_TYPE="webdav", RCLONE_CONFIG_B_URL=url,
                       RCLONE_CONFIG_B_USER="me", RCLONE_CONFIG_B_PASS=password)
    if vendor:
        environment["RCLONE_CONFIG_B_VENDOR"] = vendor
    started = time.perf_counter()
    run = subprocess.run(["rclone", "copy", source, f"B:{destination}"], capture_output=True, text=True, timeout=1800,
                         env=environment, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(f"rclone copy to {url}: {run.stderr[-800:]}")
    return seconds


def peak_kib(process):
    try:
        with open(f"/proc/{process.pid}/status") as status:
            return int(re.search(r"VmHWM:\s+(\d+)", status.read()).group(1))
    except (OSError, AttributeError):
        return 0


def main():
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])

    def option(name, default):
        return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default

    rounds, size = option("--rounds", 5), option("--size-mib", 1024) * MIB
    entries, small = option("--entries", 10_000), option("--small", 5_000)
    os.makedirs(work, exist_ok=True)
    container = os.path.join(work, "dav-container")
    subprocess.run([coffer, "--container", container, "-c", "pwd"], check=True, stdout=subprocess.DEVNULL)
    files = os.path.join(container, "Documents", "UserFiles")
    big = os.path.join(files, "big.bin")
    make_file(big, size)
    source = os.path.join(work, "upload-source.bin")
    if not os.path.exists(source) or os.path.getsize(source) != size:
        shutil.copyfile(big, source)
    listing = os.path.join(files, "Many")
    if not os.path.isdir(listing) or len(os.listdir(listing)) != entries:
        shutil.rmtree(listing, ignore_errors=True)
        os.makedirs(listing)
        for index in range(entries):
            with open(os.path.join(listing, f"entry {index:05d}.txt"), "wb") as made:
                made.write(b"x" * (index % 1000))
    smalls = os.path.join(work, "small-files")
    if not os.path.isdir(smalls) or sum(len(names) for _, _, names in os.walk(smalls)) != small:
        shutil.rmtree(smalls, ignore_errors=True)
        for index in range(small):
            folder = os.path.join(smalls, f"d{index // 250:02d}")
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"f{index:05d}.txt"), "wb") as made:
                made.write(os.urandom(1024))

    rclone_port = free_port()
    password = "bench-password"
    obscured = subprocess.run(["rclone", "obscure", password], capture_output=True, text=True, check=True).stdout.strip()
    reference = subprocess.Popen(["rclone", "serve", "webdav", files, "--addr", f"127.0.0.1:{rclone_port}", "--user", "me",
                                  "--pass", password, "--config", "/dev/null"], start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = open(os.path.join(work, "dav-serve.log"), "w")
    server = subprocess.Popen([coffer, "--container", container, "serve", "--port", "0"], stdout=subprocess.PIPE,
                              stderr=log, text=True, start_new_session=True)
    figures = {name: {"coffer": [], "rclone": []} for name in ("listing", "download", "upload", "small")}
    try:
        wait_for_port(rclone_port, reference)
        url = re.search(r"http://\S+", server.stdout.readline()).group(0)
        port, token = int(re.search(r":(\d+)/", url).group(1)), url.split("token=")[1]
        coffer_auth, rclone_auth = basic(token), basic(password)
        coffer_obscured = subprocess.run(["rclone", "obscure", token], capture_output=True, text=True, check=True).stdout.strip()
        coffer_big, rclone_big = f"http://127.0.0.1:{port}/dav/files/big.bin", f"http://127.0.0.1:{rclone_port}/big.bin"
        # Warm: both read the file and the folder once.
        curl_download(coffer_big, size, [f"Authorization: {coffer_auth}"])
        curl_download(rclone_big, size, [f"Authorization: {rclone_auth}"])
        propfind(port, "/dav/files/Many/", coffer_auth)
        propfind(rclone_port, "/Many/", rclone_auth)
        for index in range(rounds):
            order = ["coffer", "rclone"] if index % 2 == 0 else ["rclone", "coffer"]
            for side in order:
                if side == "coffer":
                    figures["listing"][side].append(propfind(port, "/dav/files/Many/", coffer_auth))
                else:
                    figures["listing"][side].append(propfind(rclone_port, "/Many/", rclone_auth))
            for side in order:
                if side == "coffer":
                    figures["download"][side].append(curl_download(coffer_big, size, [f"Authorization: {coffer_auth}"]))
                else:
                    figures["download"][side].append(curl_download(rclone_big, size, [f"Authorization: {rclone_auth}"]))
            for side in order:
                name = f"up-{side}-{index}.bin"
                if side == "coffer":
                    figures["upload"][side].append(put(port, f"/dav/files/{name}", source, coffer_auth))
                else:
                    figures["upload"][side].append(put(rclone_port, f"/{name}", source, rclone_auth, os.path.join(files, name)))
                os.remove(os.path.join(files, name))
            for side in order:
                folder = f"small-{side}-{index}"
                if side == "coffer":
                    figures["small"][side].append(rclone_copy(smalls, f"http://127.0.0.1:{port}/dav/files", coffer_obscured,
                                                              "nextcloud", folder))
                else:
                    figures["small"][side].append(rclone_copy(smalls, f"http://127.0.0.1:{rclone_port}", obscured, None, folder))
                copied = sum(len(names) for _, _, names in os.walk(os.path.join(files, folder)))
                if copied != small:
                    raise SystemExit(f"{side}: rclone copied {copied} of {small} files")
                shutil.rmtree(os.path.join(files, folder))
        peaks = {"coffer": peak_kib(server), "rclone": peak_kib(reference)}
    finally:
        stop(server)
        stop(reference)

    print(f"{rounds} rounds, {size // MIB} MiB, {entries} entries, {small} small files; medians")

    def line(name, key, unit, scale=1.0, higher_is_better=True):
        c, r = statistics.median(figures[key]["coffer"]) * scale, statistics.median(figures[key]["rclone"]) * scale
        speed = c / r if higher_is_better else r / c
        print(f"{name:<40} coffer {c:9.1f} {unit:<4} rclone {r:9.1f} {unit:<4} Coffer's speed {speed:5.2f}x   goal >= 1.0: "
              f"{'met' if speed >= 1.0 else 'NOT met'}")

    line(f"PROPFIND Depth 1, {entries} entries", "listing", "ms", higher_is_better=False)
    line(f"GET {size // MIB} MiB", "download", "MB/s", 1e-6)
    line(f"PUT {size // MIB} MiB (rclone + fsync)", "upload", "MB/s", 1e-6)
    line(f"rclone copy of {small} small files", "small", "s", higher_is_better=False)
    print(f"peak memory: coffer serve {peaks['coffer'] / 1024:.1f} MiB (goal < 64), rclone serve {peaks['rclone'] / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
