#!/usr/bin/env python3
"""Coffer's HTTP server beside nginx, on the same files, in one run (issue 49).

Usage: http_server.py COFFER_BINARY WORK_DIR [--rounds N] [--size-mib M]   (needs Debian's nginx and curl)

- download: `GET /content?path=/big.bin` from `coffer serve` (bearer token) and `GET /big.bin` from
  nginx serving the same folder (Debian's defaults: sendfile on), each with curl to /dev/null, taking
  turns; throughput medians. Goal: Coffer >= 0.9x nginx. Also beside nginx copying through user space
  as Coffer does (`sendfile off`, 1 MiB buffers), at `/copied/`.
- upload: the same file through tus (`POST /tus/`, then 8 MiB `PATCH`es) and as one `PUT` to nginx with
  `dav_methods PUT`, made as durable as Coffer makes an upload: an fsync of the file nginx wrote, timed
  with it. One client for both: Python's http.client, sending from the file in 1 MiB blocks.
  Goal: Coffer >= 0.8x nginx.
- share links: 200 concurrent downloads of a 10 MiB file through a share link (`/s/ID/raw`) and from
  nginx, with one curl running 200 transfers at once (`--parallel --parallel-max 200`): every status
  must be 200, and Coffer's time within 1.5x nginx's.

Both servers run on loopback, started and ended by the script (nginx with `daemon off`, as its own
process group).
"""
import http.client
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_file(path, size):
    if os.path.exists(path) and os.path.getsize(path) == size:
        return
    with open(path, "wb") as out:
        block = os.urandom(8 * MIB)
        written = 0
        while written < size:
            piece = block[: min(len(block), size - written)]
            out.write(piece)
            written += len(piece)


def start_nginx(work, root, port):
    prefix = os.path.join(work, "nginx")
    shutil.rmtree(prefix, ignore_errors=True)
    for folder in ("logs", "body", "put"):
        os.makedirs(os.path.join(prefix, folder))
    conf = os.path.join(prefix, "nginx.conf")
    with open(conf, "w") as out:
        out.write(f"""
user root;
worker_processes auto;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    types {{ application/octet-stream bin; }}
    client_body_temp_path {prefix}/body;
    client_max_body_size 0;
    server {{
        listen 127.0.0.1:{port};
        location /put/ {{ root {prefix}; dav_methods PUT; create_full_put_path on; }}
        location /copied/ {{ alias {root}/; sendfile off; output_buffers 2 1m; }}
        location / {{ root {root}; }}
    }}
}}
""")
    process = subprocess.Popen(["nginx", "-p", prefix, "-c", conf, "-g", "daemon off;"], start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, process)
    return process, os.path.join(prefix, "put")


def wait_for_port(port, process, deadline=20):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise SystemExit(f"the server on port {port} ended with status {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port} after {deadline} s")


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)


def curl_download(url, expected, headers=()):
    arguments = ["curl", "-s", "--max-time", "300", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_total}"]
    for header in headers:
        arguments += ["-H", header]
    code, size, seconds = subprocess.run(arguments + [url], capture_output=True, text=True, timeout=330,
                                         check=True).stdout.split()
    if code != "200" or int(size) != expected:
        raise SystemExit(f"{url}: status {code}, {size} bytes of {expected}")
    return int(size) / float(seconds)


def put_nginx(port, source, name, put_folder):
    size = os.path.getsize(source)
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300, blocksize=MIB)
    with open(source, "rb") as body:
        connection.request("PUT", f"/put/{name}", body=body, headers={"Content-Length": str(size)})
    answer = connection.getresponse()
    answer.read()
    if answer.status not in (201, 204):
        raise SystemExit(f"nginx PUT: status {answer.status}")
    descriptor = os.open(os.path.join(put_folder, name), os.O_RDONLY)
    os.fsync(descriptor)
    os.close(descriptor)
    seconds = time.perf_counter() - started
    connection.close()
    os.remove(os.path.join(put_folder, name))
    return size / seconds


def tus_coffer(port, token, source, name, files):
    import base64
    size = os.path.getsize(source)
    auth = {"Authorization": f"Bearer {token}", "Tus-Resumable": "1.0.0", "Host": f"127.0.0.1:{port}"}
    meta = "destination " + base64.b64encode(b"/").decode() + ",filename " + base64.b64encode(name.encode()).decode()
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300, blocksize=MIB)
    connection.request("POST", "/tus/", headers=dict(auth, **{"Upload-Length": str(size), "Upload-Metadata": meta}))
    answer = connection.getresponse()
    answer.read()
    if answer.status != 201:
        raise SystemExit(f"tus POST: status {answer.status}")
    location = answer.getheader("Location")
    offset = 0
    with open(source, "rb") as body:
        while offset < size:
            piece = body.read(8 * MIB)
            connection.request("PATCH", location, body=piece, headers=dict(auth, **{
                "Upload-Offset": str(offset), "Content-Type": "application/offset+octet-stream",
                "Content-Length": str(len(piece))}))
            answer = connection.getresponse()
            answer.read()
            if answer.status != 204:
                raise SystemExit(f"tus PATCH at {offset}: status {answer.status}")
            offset += len(piece)
    seconds = time.perf_counter() - started
    connection.close()
    arrived = os.path.join(files, name)
    if os.path.getsize(arrived) != size:
        raise SystemExit("the tus upload did not arrive whole")
    os.remove(arrived)
    return size / seconds


def parallel(urls, headers=()):
    """One curl, every URL at once: (seconds, statuses)."""
    with tempfile.NamedTemporaryFile("w", suffix=".curl", delete=False) as config:
        for url in urls:
            config.write(f'url = "{url}"\noutput = "/dev/null"\n')
    arguments = ["curl", "-s", "--max-time", "300", "--parallel", "--parallel-immediate", "--parallel-max", str(len(urls)),
                 "-w", "%{http_code}\n", "--config", config.name]
    for header in headers:
        arguments += ["-H", header]
    started = time.perf_counter()
    result = subprocess.run(arguments, capture_output=True, text=True, timeout=330)
    seconds = time.perf_counter() - started
    os.remove(config.name)
    return seconds, result.stdout.split()


def main():
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    size = (int(sys.argv[sys.argv.index("--size-mib") + 1]) if "--size-mib" in sys.argv else 1024) * MIB
    os.makedirs(work, exist_ok=True)
    container = os.path.join(work, "http-container")
    subprocess.run([coffer, "--container", container, "-c", "pwd"], check=True, stdout=subprocess.DEVNULL)
    files = os.path.join(container, "Documents", "UserFiles")
    big, ten = os.path.join(files, "big.bin"), os.path.join(files, "ten.bin")
    make_file(big, size)
    make_file(ten, 10 * MIB)
    source = os.path.join(work, "upload-source.bin")
    if not os.path.exists(source) or os.path.getsize(source) != size:
        shutil.copyfile(big, source)

    nginx_port = free_port()
    nginx, put_folder = start_nginx(work, files, nginx_port)
    log = open(os.path.join(work, "http-serve.log"), "w")
    server = subprocess.Popen([coffer, "--container", container, "serve", "--port", "0"], stdout=subprocess.PIPE,
                              stderr=log, text=True, start_new_session=True)
    try:
        url = re.search(r"http://\S+", server.stdout.readline()).group(0)
        port, token = int(re.search(r":(\d+)/", url).group(1)), url.split("token=")[1]
        bearer = [f"Authorization: Bearer {token}"]
        shared = subprocess.run([coffer, "--container", container, "-c", "share /ten.bin"], capture_output=True, text=True,
                                check=True).stdout
        share_id = re.search(r"/s/([A-Za-z0-9_-]{22})", shared).group(1)
        coffer_big = f"http://127.0.0.1:{port}/content?path=/big.bin"
        nginx_big = f"http://127.0.0.1:{nginx_port}/big.bin"
        # Warm: both read the file once (the page cache holds it for both from here on).
        curl_download(coffer_big, size, bearer)
        curl_download(nginx_big, size)

        downloads = {"coffer": [], "nginx": [], "nginx-copied": []}
        uploads = {"coffer": [], "nginx": []}
        crowds = {"coffer": [], "nginx": []}
        failures = []
        for index in range(rounds):
            order = ["coffer", "nginx"] if index % 2 == 0 else ["nginx", "coffer"]
            for side in order:
                if side == "coffer":
                    downloads[side].append(curl_download(coffer_big, size, bearer))
                else:
                    downloads[side].append(curl_download(nginx_big, size))
                    downloads["nginx-copied"].append(curl_download(nginx_big.replace("/big.bin", "/copied/big.bin"), size))
            for side in order:
                if side == "coffer":
                    uploads[side].append(tus_coffer(port, token, source, f"up-{index}.bin", files))
                else:
                    uploads[side].append(put_nginx(nginx_port, source, f"up-{index}.bin", put_folder))
            for side in order:
                if side == "coffer":
                    seconds, statuses = parallel([f"http://127.0.0.1:{port}/s/{share_id}/raw"] * 200)
                else:
                    seconds, statuses = parallel([f"http://127.0.0.1:{nginx_port}/ten.bin"] * 200)
                bad = [status for status in statuses if status != "200"]
                if len(statuses) != 200 or bad:
                    failures.append(f"{side}: {len(statuses)} answers, not 200: {bad[:5]}")
                crowds[side].append(seconds)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=15)
        stop(nginx)

    def line(name, coffer_values, nginx_values, unit, goal, higher_is_better=True):
        c, n = statistics.median(coffer_values), statistics.median(nginx_values)
        ratio = c / n
        held = ratio >= goal if higher_is_better else ratio <= goal
        print(f"{name:<34} coffer {c:9.1f} {unit}   nginx {n:9.1f} {unit}   ratio {ratio:5.2f}   goal "
              f"{'>=' if higher_is_better else '<='} {goal}: {'met' if held else 'NOT met'}")

    print(f"{rounds} rounds, {size // MIB} MiB, medians")
    line("download GET /content (MB/s)", [v / 1e6 for v in downloads["coffer"]], [v / 1e6 for v in downloads["nginx"]],
         "MB/s", 0.9)
    line("  beside nginx with sendfile off", [v / 1e6 for v in downloads["coffer"]],
         [v / 1e6 for v in downloads["nginx-copied"]], "MB/s", 0.9)
    line("upload tus vs PUT+fsync (MB/s)", [v / 1e6 for v in uploads["coffer"]], [v / 1e6 for v in uploads["nginx"]],
         "MB/s", 0.8)
    line("200 share downloads of 10 MiB (s)", crowds["coffer"], crowds["nginx"], "s", 1.5, higher_is_better=False)
    print("every one of the 200 answered 200" if not failures else "FAILED: " + "; ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
