"""WebDAV at `coffer serve`'s /dav/ (issue 53), checked with third-party clients: Debian's `litmus`
(the WebDAV protocol test suite) runs its `basic`, `copymove`, `props`, `http` and `locks` groups against
/dav/files/; rclone (as a Nextcloud client, and as `rclone mount` with git working in it), cadaver, GNOME's
gio and davfs2 use it as their users do; and requests check what Coffer means under WebDAV's methods: a DELETE is in the trash, a PUT
or MOVE over a file keeps a version, dead properties are extended attributes and Coffer's tags a
property, a lock outlasts a restart of the server, the token is the password.

Usage: dav_check.py COFFER"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import serve_support

check = serve_support.checker("dav_check")


def litmus(url, token, groups):
    """litmus's groups against `url`; its output and whether every test passed."""
    environment = dict(os.environ, TESTS=" ".join(groups))
    # (It writes debug.log and child.log where it runs: a folder of their own.)
    folder = tempfile.mkdtemp(prefix="coffer-litmus-")
    run = subprocess.run(["litmus", url, "coffer", token], capture_output=True, text=True, timeout=300, env=environment,
                         stdin=subprocess.DEVNULL, cwd=folder)
    shutil.rmtree(folder, ignore_errors=True)
    return run.stdout + run.stderr, run.returncode == 0


def request(server, method, path, body=None, headers=None, token=None):
    """One request with Basic authentication (any user name, the token as the password)."""
    secret = base64.b64encode(f"anyone:{token or server.token}".encode()).decode()
    request = urllib.request.Request(server.base + path, data=body, method=method,
                                     headers={"Authorization": f"Basic {secret}", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


def rclone_check(server):
    """rclone, as a Nextcloud client (`vendor = nextcloud`): a tree copied up keeps its times and
    its SHA-1s, `rclone check` finds no difference by hash, a second copy sends nothing, and the tree
    copied back down is equal too."""
    if not shutil.which("rclone"):
        raise SystemExit("dav_check: rclone is not installed (apt-get install rclone)")
    source = tempfile.mkdtemp(prefix="coffer-rclone-")
    try:
        os.makedirs(os.path.join(source, "sub", "深"))
        for index in range(1, 4):
            with open(os.path.join(source, f"f{index}.bin"), "wb") as made:
                made.write(os.urandom(index * 100_000))
        with open(os.path.join(source, "sub", "深", "名 字.txt"), "w") as made:
            made.write("中文\n")
        os.utime(os.path.join(source, "f1.bin"), (1_600_000_000, 1_600_000_000))
        environment = rclone_environment(server)

        def rclone(*arguments):
            return subprocess.run(["rclone", *arguments], capture_output=True, text=True, timeout=300, env=environment,
                                  stdin=subprocess.DEVNULL)

        copied = rclone("copy", source, "C:up")
        check(copied.returncode == 0, f"rclone copies a tree up: {copied.stderr[-500:]}")
        checked = rclone("check", source, "C:up")
        check(checked.returncode == 0 and "0 differences found" in checked.stderr and "could not be checked" not in checked.stderr,
              f"rclone check compares every file by SHA-1 and finds no difference: {checked.stderr[-500:]}")
        listed = rclone("lsl", "C:up/f1.bin").stdout
        check("2020-09-13 12:26:40" in listed, f"the file keeps the time rclone gave it (X-OC-Mtime): {listed!r}")
        again = rclone("copy", "-v", source, "C:up")
        check(again.returncode == 0 and "Copied" not in again.stderr, f"a second copy sends nothing: {again.stderr[-500:]}")
        # And back down: the same files, times and hashes.
        down = os.path.join(source + "-down")
        copied = rclone("copy", "C:up", down)
        check(copied.returncode == 0, f"rclone copies the tree down: {copied.stderr[-500:]}")
        checked = rclone("check", "C:up", down)
        check(checked.returncode == 0 and "0 differences found" in checked.stderr and "could not be checked" not in checked.stderr,
              f"rclone check finds the copy down equal by SHA-1: {checked.stderr[-500:]}")
        check(int(os.path.getmtime(os.path.join(down, "f1.bin"))) == 1_600_000_000, "the copy down keeps the time")
        shutil.rmtree(down, ignore_errors=True)
    finally:
        shutil.rmtree(source, ignore_errors=True)


def rclone_environment(server):
    """rclone's configuration for a remote `C:` on /dav/files/, as a Nextcloud server, from the environment."""
    obscured = subprocess.run(["rclone", "obscure", server.token], capture_output=True, text=True, timeout=60).stdout.strip()
    return dict(os.environ, RCLONE_CONFIG_C_TYPE="webdav", RCLONE_CONFIG_C_URL=server.base + "/dav/files",
                RCLONE_CONFIG_C_VENDOR="nextcloud", RCLONE_CONFIG_C_USER="me", RCLONE_CONFIG_C_PASS=obscured,
                RCLONE_CONFIG="/dev/null")


def mounted(mount_point):
    with open("/proc/self/mounts") as mounts:
        return any(line.split()[1] == mount_point for line in mounts)


def can_mount(what):
    """Whether FUSE mounts can be made here (/dev/fuse, and root); says so when not."""
    if os.path.exists("/dev/fuse") and os.geteuid() == 0:
        return True
    print(f"dav_check: skipped {what}: it needs /dev/fuse and root")
    return False


def rclone_mount_git_check(server, files):
    """`rclone mount` of /dav/files/ is a folder every program uses: git clones a repository
    into it, and `git fsck` finds every object whole, read back through the mount."""
    if not can_mount("rclone mount"):
        return
    work = tempfile.mkdtemp(prefix="coffer-rclone-mount-")
    mount_point, source = os.path.join(work, "mnt"), os.path.join(work, "source")
    os.makedirs(mount_point)
    git = ["git", "-c", "user.name=Coffer CI", "-c", "user.email=ci@coffer.invalid"]
    subprocess.run(git + ["init", "-q", source], check=True, timeout=60)
    for index in range(1, 6):
        os.makedirs(os.path.join(source, "目录", str(index)), exist_ok=True)
        with open(os.path.join(source, "目录", str(index), f"file {index}.bin"), "wb") as made:
            made.write(os.urandom(index * 40_000))
        subprocess.run(git + ["-C", source, "add", "-A"], check=True, timeout=60)
        subprocess.run(git + ["-C", source, "commit", "-q", "-m", f"commit {index}"], check=True, timeout=60)
    process = subprocess.Popen(["rclone", "mount", "C:", mount_point, "--vfs-cache-mode", "writes",
                                "--vfs-write-back", "0s", "--cache-dir", os.path.join(work, "cache")],
                               env=rclone_environment(server), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not mounted(mount_point) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        check(mounted(mount_point), "rclone mounts /dav/files/")
        cloned = subprocess.run(["git", "clone", "-q", source, os.path.join(mount_point, "cloned")], capture_output=True,
                                text=True, timeout=300)
        check(cloned.returncode == 0, f"git clones a repository into the mount: {cloned.stderr[-500:]}")
        fsck = subprocess.run(["git", "-C", os.path.join(mount_point, "cloned"), "fsck", "--full", "--strict"],
                              capture_output=True, text=True, timeout=300)
        check(fsck.returncode == 0, f"git fsck finds the clone whole through the mount: {fsck.stderr[-500:]}")
        log = subprocess.run(["git", "-C", os.path.join(mount_point, "cloned"), "log", "--oneline"], capture_output=True,
                             text=True, timeout=120).stdout.splitlines()
        check(len(log) == 5, f"with its five commits: {log}")
    finally:
        # Unmounted, rclone finishes its uploads and ends; it is stopped if it does not.
        if mounted(mount_point):
            subprocess.run(["fusermount3", "-u", mount_point], capture_output=True, timeout=120)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.terminate()
            process.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(files, "cloned", "目录", "3", "file 3.bin"), "rb") as stored:
        check(len(stored.read()) == 120_000, "the clone's files are Coffer's files")


def gio_check(server, files):
    """GNOME's gio (what GNOME Files uses), on a D-Bus session of its own: it mounts `dav://`,
    copies a file in and back out, and what it removes is in Coffer's trash."""
    if not shutil.which("gio") or not shutil.which("dbus-run-session") or not os.path.exists("/usr/libexec/gvfsd-dav"):
        raise SystemExit("dav_check: gio and gvfs-backends are not installed (apt-get install gvfs-backends dbus)")
    work = tempfile.mkdtemp(prefix="coffer-gio-")
    try:
        with open(os.path.join(work, "in.txt"), "w") as made:
            made.write("通过 gio\n")
        url = "dav://" + server.host + "/dav/files/"
        script = (f'printf "me\\n%s\\n" "$TOKEN" | gio mount "{url}"\n'
                  f'gio copy in.txt "{url}gio%20in.txt"\n'
                  f'gio copy "{url}gio%20in.txt" out.txt\n'
                  f'gio copy in.txt "{url}gio-gone.txt"\n'
                  f'gio remove "{url}gio-gone.txt"\n'
                  f'gio mount -u "{url}"\n')
        run = subprocess.run(["dbus-run-session", "--", "bash", "-e", "-c", script], capture_output=True, text=True,
                             timeout=180, cwd=work, stdin=subprocess.DEVNULL, start_new_session=True,
                             env=dict(os.environ, TOKEN=server.token, HOME=work, XDG_RUNTIME_DIR=work))
        check(run.returncode == 0, f"gio mounts, copies in and out, and removes: {run.stdout[-500:]} {run.stderr[-1500:]}")
        with open(os.path.join(files, "gio in.txt")) as stored:
            check(stored.read() == "通过 gio\n", "what gio copied in is in the files")
        with open(os.path.join(work, "out.txt")) as back:
            check(back.read() == "通过 gio\n", "and what it copied out is the same")
        check(not os.path.exists(os.path.join(files, "gio-gone.txt")), "what gio removed is gone from the folder")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def memory_kib(pid, field):
    """A process's resident memory now (`VmRSS`) or at its peak (`VmHWM`), in KiB."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))


def processor_ticks(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def huge_folder_check(server, files):
    """A PROPFIND of a folder of 100,000 entries is streamed as it is read, in bounded memory:
    every entry is in the answer, and the server's peak memory during it grows by much less
    than holding the listing whole takes (measured: 45 MiB more when it did). The search index
    reads the new folder first: the server is let go idle, and its peak reset, before."""
    folder = os.path.join(files, "huge")
    os.makedirs(folder)
    for index in range(100_000):
        os.close(os.open(os.path.join(folder, f"entry {index:06d}.txt"), os.O_CREAT | os.O_WRONLY, 0o644))
    try:
        import http.client
        secret = base64.b64encode(f"me:{server.token}".encode()).decode()
        host, port = server.host.rsplit(":", 1)

        def propfind(path, depth):
            connection = http.client.HTTPConnection(host, int(port), timeout=300)
            connection.request("PROPFIND", path, headers={"Depth": depth, "Authorization": f"Basic {secret}"})
            answer = connection.getresponse()
            responses, tail = 0, b""
            while chunk := answer.read(1 << 16):
                responses += (tail + chunk).count(b"<D:response>") - tail.count(b"<D:response>")
                tail = chunk[-11:]
            connection.close()
            return answer.status, responses

        pid = server.process.pid
        propfind("/dav/files/huge/", "0")
        # Idle: no processor time used for two seconds running (within five minutes).
        deadline, quiet, last = time.monotonic() + 300, 0, processor_ticks(pid)
        while quiet < 4 and time.monotonic() < deadline:
            time.sleep(0.5)
            now = processor_ticks(pid)
            quiet, last = (quiet + 1 if now - last <= 1 else 0), now
        with open(f"/proc/{pid}/clear_refs", "w") as clear:
            clear.write("5")  # (the peak, VmHWM, starts again from what is resident now)
        before = memory_kib(pid, "VmRSS")
        status, responses = propfind("/dav/files/huge/", "1")
        grown = (memory_kib(pid, "VmHWM") - before) // 1024
        check(status == 207 and responses == 100_001, f"PROPFIND lists all 100,000 entries and the folder ({status}, {responses})")
        check(grown < 16, f"in bounded memory: the server's peak grew by {grown} MiB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def tls_check(coffer, container):
    """`--tls-cert` and `--tls-key`: WebDAV over HTTPS, checked by litmus (every group), a client
    that verifies the certificate, and rclone; beyond loopback WebDAV needs TLS, and is all that
    is served there (with share links); a plain request to the TLS port, an idle connection at a
    SIGTERM and a key that is not the certificate's each end cleanly."""
    import re
    import signal
    import socket
    import ssl
    work = tempfile.mkdtemp(prefix="coffer-tls-")
    certificate, key, other_key = (os.path.join(work, name) for name in ("cert.pem", "key.pem", "other.pem"))
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                           "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                          capture_output=True, text=True, timeout=120)
    check(made.returncode == 0, "openssl makes a certificate" + ("" if made.returncode == 0 else f": {made.stderr[-300:]}"))
    subprocess.run(["openssl", "genrsa", "-out", other_key, "2048"], capture_output=True, check=True, timeout=120)

    def serve(*extra):
        process = subprocess.Popen([coffer, "--container", container, "--lang", "en", "serve", "--port", "0", *extra],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        line = process.stdout.readline()
        match = re.search(r"https://([^/\s]+)", line)
        check(match is not None, f"coffer serve over TLS says its https address: {line!r}")
        return process, match.group(1)

    def stop(process):
        process.send_signal(signal.SIGTERM)
        return process.wait(timeout=30)

    verified = ssl.create_default_context(cafile=certificate)
    try:
        process, host = serve("--tls-cert", certificate, "--tls-key", key)
        with open(os.path.join(container, "Library/Application Support/AppData/web-token")) as file:
            token = file.read().strip()
        secret = base64.b64encode(f"me:{token}".encode()).decode()
        try:
            base = f"https://{host}"
            for group, count in [("basic", 16), ("copymove", 13), ("props", 30), ("http", 3), ("locks", 41)]:
                output, passed = litmus(base + "/dav/files/", token, [group])
                check(passed and f"{count} passed, 0 failed" in output, f"litmus {group} passes over TLS, every test")

            def call(method, path, body=None, headers=None):
                request = urllib.request.Request(base + path, data=body, method=method,
                                                 headers={"Authorization": f"Basic {secret}", **(headers or {})})
                try:
                    with urllib.request.urlopen(request, timeout=60, context=verified) as answer:
                        return answer.status, answer.read()
                except urllib.error.HTTPError as error:
                    return error.code, error.read()

            payload = os.urandom(3 << 20)
            check(call("PUT", "/dav/files/tls.bin", payload)[0] == 201, "a PUT over TLS, the certificate verified")
            check(call("GET", "/dav/files/tls.bin") == (200, payload), "and the file reads back whole")
            obscured = subprocess.run(["rclone", "obscure", token], capture_output=True, text=True, timeout=60).stdout.strip()
            environment = dict(os.environ, RCLONE_CONFIG_T_TYPE="webdav", RCLONE_CONFIG_T_URL=base + "/dav/files",
                               RCLONE_CONFIG_T_VENDOR="nextcloud", RCLONE_CONFIG_T_USER="me", RCLONE_CONFIG_T_PASS=obscured,
                               RCLONE_CONFIG="/dev/null")
            tree = os.path.join(work, "tree")
            os.makedirs(os.path.join(tree, "子"))
            for index in range(5):
                with open(os.path.join(tree, "子", f"{index}.txt"), "w") as written:
                    written.write(f"file {index}\n" * 1000)
            for arguments in (["copy", tree, "T:tls-tree"], ["check", tree, "T:tls-tree"]):
                run = subprocess.run(["rclone", "--ca-cert", certificate, *arguments], capture_output=True, text=True,
                                     timeout=300, env=environment, stdin=subprocess.DEVNULL)
                check(run.returncode == 0, f"rclone {arguments[0]} over TLS, the certificate verified: {run.stderr[-400:]}")
            # Plain HTTP to the TLS port is told, in plain HTTP, to use https, and the connection ends.
            address, port = host.rsplit(":", 1)
            with socket.create_connection((address, int(port)), timeout=30) as plain:
                plain.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                answer = b""
                try:
                    while chunk := plain.recv(4096):
                        answer += chunk
                except (socket.timeout, ConnectionResetError):
                    pass
            check(answer.startswith(b"HTTP/1.1 400") and answer.endswith(b"use https:// in the address.\n"),
                  f"plain HTTP to the TLS port is told to use https, and the connection ends: {answer!r}")
            # An idle TLS connection does not hold the server up at a SIGTERM.
            idle = verified.wrap_socket(socket.create_connection((address, int(port)), timeout=30), server_hostname="127.0.0.1")
            started = time.monotonic()
            status = stop(process)
            idle.close()
            check(status == 0 and time.monotonic() - started < 20, f"the server stops with an idle TLS connection open ({status})")
        finally:
            if process.poll() is None:
                stop(process)
        # Beyond loopback: WebDAV over TLS only, and nothing else but share links.
        refused = subprocess.run([coffer, "--container", container, "--lang", "en", "serve", "--port", "0", "--address", "0.0.0.0"],
                                 capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        check(refused.returncode == 2 and "--tls-cert" in refused.stderr, f"beyond loopback without TLS is refused: {refused.stderr}")
        process, host = serve("--address", "0.0.0.0", "--tls-cert", certificate, "--tls-key", key)
        try:
            port = host.rsplit(":", 1)[1]
            base = f"https://127.0.0.1:{port}"
            check(call("PROPFIND", "/dav/files/", headers={"Depth": "0"})[0] == 207, "beyond loopback, WebDAV answers over TLS")
            status, body = call("GET", "/")
            check(status == 403 and b"127.0.0.1" in body, f"and the page is not served there ({status})")
            upgrade = (f"GET /rpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                       f"Authorization: Bearer {token}\r\n\r\n").encode()
            with verified.wrap_socket(socket.create_connection(("127.0.0.1", int(port)), timeout=30),
                                      server_hostname="127.0.0.1") as tls_socket:
                tls_socket.sendall(upgrade)
                first = tls_socket.recv(4096)
            check(not first.startswith(b"HTTP/1.1 101"), f"nor the page's WebSocket, with the token or without: {first[:60]!r}")
        finally:
            check(stop(process) == 0, "that server stops cleanly")
        wrong = subprocess.run([coffer, "--container", container, "--lang", "en", "serve", "--port", "0", "--tls-cert", certificate,
                                "--tls-key", other_key], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        check(wrong.returncode == 1 and "not the certificate's" in wrong.stderr, f"a key that is not the certificate's is refused: {wrong.stderr}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def cadaver_check(server, files):
    """cadaver, the command-line client, scripted on its standard input (the password from a
    `.netrc` of its own): folders, upload, move, locks, properties, download, delete."""
    home = tempfile.mkdtemp(prefix="coffer-cadaver-")
    try:
        with open(os.path.join(home, ".netrc"), "w") as netrc:
            netrc.write(f"machine {server.host.rsplit(':', 1)[0]}\nlogin me\npassword {server.token}\n")
        os.chmod(os.path.join(home, ".netrc"), 0o600)
        with open(os.path.join(home, "up.txt"), "w") as made:
            made.write("hello cadaver\n")
        script = ("mkcol 新\nput up.txt 新/up.txt\nmove 新/up.txt 新/moved.txt\nlock 新/moved.txt\ndiscover 新/moved.txt\n"
                  "unlock 新/moved.txt\npropset 新/moved.txt colour blue\npropget 新/moved.txt colour\n"
                  "get 新/moved.txt back.txt\ndelete 新/moved.txt\nls 新\nquit\n")
        run = subprocess.run(["cadaver", server.base + "/dav/files/"], input=script, capture_output=True, text=True, timeout=120,
                             cwd=home, env=dict(os.environ, HOME=home))
        output = run.stdout + run.stderr
        check(output.count("succeeded") >= 8 and "failed" not in output.lower(), f"cadaver's session succeeds: {output[-1500:]}")
        check("Value of colour is: blue" in output and "Lock token <opaquelocktoken:" in output, "cadaver sees the property and the lock")
        with open(os.path.join(home, "back.txt")) as back:
            check(back.read() == "hello cadaver\n", "cadaver downloads what it uploaded")
        check(os.listdir(os.path.join(files, "新")) == [], "what cadaver deleted is gone from the folder")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def davfs_check(coffer, server, files, container):
    """davfs2 mounts /dav/files/: `rsync -a` copies a tree in, `diff -r` finds it equal through the
    mount and in Coffer's folder, and what is removed through the mount is in the trash. (davfs2
    1.6.1 refuses the larger directory reads of Linux 6.16 and later with EINVAL unless its
    `buf_size` holds them: 256 KiB does, as Documentation/WebDAV.md tells users.)"""
    if not can_mount("davfs2"):
        return
    work = tempfile.mkdtemp(prefix="coffer-davfs-")
    mount_point, cache = os.path.join(work, "mnt"), os.path.join(work, "cache")
    os.makedirs(mount_point)
    os.makedirs(cache)
    os.chmod(work, 0o755)  # (mount.davfs works as the user davfs2)
    os.chmod(cache, 0o1777)
    url = server.base + "/dav/files/"
    with open(os.path.join(work, "secrets"), "w") as secrets:
        secrets.write(f"{url} me {server.token}\n")
    os.chmod(os.path.join(work, "secrets"), 0o600)
    with open(os.path.join(work, "davfs2.conf"), "w") as conf:
        conf.write(f"secrets {work}/secrets\ncache_dir {cache}\nuse_locks 1\ndelay_upload 0\nbuf_size 256\n")
    tree = os.path.join(work, "tree")
    for folder in ["", "空 folder", "deep/er/still deeper", "many"]:
        os.makedirs(os.path.join(tree, folder), exist_ok=True)
    open(os.path.join(tree, "empty"), "wb").close()
    with open(os.path.join(tree, "deep/er/random.bin"), "wb") as made:
        made.write(os.urandom(3 << 20))
    with open(os.path.join(tree, "deep/er/still deeper/笔记 notes.txt"), "w") as made:
        made.write("每一行\n" * 100)
    for index in range(300):
        with open(os.path.join(tree, "many", f"a rather long file name, number {index:04}.txt"), "w") as made:
            made.write(str(index) * index)
    mounted = subprocess.run(["mount.davfs", url, mount_point, "-o", f"conf={work}/davfs2.conf"], capture_output=True, text=True,
                             timeout=60, stdin=subprocess.DEVNULL)
    check(mounted.returncode == 0, f"davfs2 mounts /dav/files/: {mounted.stderr}")
    try:
        with open(os.path.join(mount_point, "davfs.txt"), "w") as written:
            written.write("through the kernel\n")
        os.mkdir(os.path.join(mount_point, "Through davfs"))
        os.rename(os.path.join(mount_point, "davfs.txt"), os.path.join(mount_point, "Through davfs", "moved.txt"))
        with open(os.path.join(mount_point, "Through davfs", "moved.txt")) as read:
            check(read.read() == "through the kernel\n", "a file written through davfs2 reads back")
        os.unlink(os.path.join(mount_point, "Through davfs", "moved.txt"))
        synced = subprocess.run(["rsync", "-a", tree + "/", os.path.join(mount_point, "tree")], capture_output=True, text=True,
                                timeout=600)
        check(synced.returncode == 0, f"rsync -a copies a tree in through davfs2: {synced.stderr[-500:]}")
        compared = subprocess.run(["diff", "-r", tree, os.path.join(mount_point, "tree")], capture_output=True, text=True,
                                  timeout=300)
        check(compared.returncode == 0, f"diff -r finds it equal through the mount: {compared.stdout[-500:]}{compared.stderr[-300:]}")
    finally:
        unmounted = subprocess.run(["umount", mount_point], capture_output=True, text=True, timeout=120)
        check(unmounted.returncode == 0, f"davfs2 unmounts: {unmounted.stderr}")
    try:
        compared = subprocess.run(["diff", "-r", tree, os.path.join(files, "tree")], capture_output=True, text=True, timeout=300)
        check(compared.returncode == 0, f"and equal in Coffer's own folder once unmounted: {compared.stdout[-500:]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    check(os.path.isdir(os.path.join(files, "Through davfs")) and not os.listdir(os.path.join(files, "Through davfs")),
          "the folder is made and the removed file is gone from it")
    trash = subprocess.run([coffer, "--container", container, "-c", "trash"], capture_output=True, text=True, timeout=120).stdout
    check("files:/Through davfs/moved.txt" in trash, "what davfs2 removed is in the trash")


def main():
    coffer = sys.argv[1]
    if not shutil.which("litmus"):
        raise SystemExit("dav_check: litmus is not installed (apt-get install litmus)")
    container = tempfile.mkdtemp(prefix="coffer-dav-")
    subprocess.run([coffer, "--container", container, "-c", "ls"], check=True, capture_output=True, timeout=120)
    server = serve_support.Server(coffer, container)
    try:
        status, _, headers = request(server, "OPTIONS", "/dav/files/")
        check(status == 200 and headers.get("DAV", "").startswith("1"), f"OPTIONS says DAV: {headers.get('DAV')}")
        status, _, headers = request(server, "PROPFIND", "/dav/files/", token="not-the-token", headers={"Depth": "0"})
        check(status == 401 and "Basic" in headers.get("WWW-Authenticate", ""), "a wrong password is asked again (401 Basic)")
        output, passed = litmus(server.base + "/dav/files/", server.token, ["basic"])
        print(output)
        check(passed and "16 passed, 0 failed" in output, "litmus basic passes, every test")
        for group, count in [("copymove", 13), ("props", 30), ("http", 4), ("locks", 41)]:
            output, passed = litmus(server.base + "/dav/files/", server.token, [group])
            print(output)
            check(passed and f"{count} passed, 0 failed" in output, f"litmus {group} passes, every test")
        status, _, headers = request(server, "OPTIONS", "/dav/files/")
        allowed = {method.strip() for method in headers.get("Allow", "").split(",")}
        check({"COPY", "MOVE", "PROPPATCH", "LOCK", "UNLOCK"} <= allowed, f"OPTIONS allows COPY, MOVE, PROPPATCH and locks: {allowed}")
        check(headers.get("DAV", "").replace(" ", "").startswith("1,2"), f"OPTIONS says class 2: {headers.get('DAV')}")

        # Coffer's meaning: a save over a file keeps a version; a DELETE goes to the trash.
        check(request(server, "PUT", "/dav/files/notes%20%E7%AC%94%E8%AE%B0.txt", b"first")[0] == 201, "a PUT makes a file (201)")
        check(request(server, "PUT", "/dav/files/notes%20%E7%AC%94%E8%AE%B0.txt", b"second")[0] == 204, "a PUT over it replaces it (204)")
        versions = json.loads(subprocess.run([coffer, "--container", container, "-c", "versions --json 'notes 笔记.txt'"],
                                             capture_output=True, text=True, timeout=120).stdout)["versions"]
        check(len(versions) == 1 and versions[0]["frontEnd"] == "dav", f"what it replaced is a version, kept by dav: {versions}")
        check(request(server, "DELETE", "/dav/files/notes%20%E7%AC%94%E8%AE%B0.txt")[0] == 204, "a DELETE answers 204")
        trash = subprocess.run([coffer, "--container", container, "-c", "trash"], capture_output=True, text=True, timeout=120).stdout
        check("notes 笔记.txt" in trash, "the deleted file is in the trash")
        status, body, _ = request(server, "PROPFIND", "/dav/files/", headers={"Depth": "infinity"})
        check(status == 403 and b"propfind-finite-depth" in body, "Depth: infinity is refused as RFC 4918 says")
        for path in ["/dav/files/../../etc/passwd", "/dav/files/a%2Fb", "/dav/files/%2e%2e/x", "/dav/files/evil%00.txt"]:
            status = request(server, "PUT", path, b"x")[0]
            check(status == 400, f"{path} is refused ({status})")
        check(not os.path.exists(os.path.join(container, "Documents/UserFiles/evil")), "a NUL does not shorten the name")
        status, _, _ = request(server, "PUT", "/dav/files/big.bin", b"x" * (3 << 20), headers={"Transfer-Encoding": "chunked"})
        check(status == 201 and os.path.getsize(os.path.join(container, "Documents/UserFiles/big.bin")) == 3 << 20,
              f"a chunked PUT is written whole ({status})")
        status, body, _ = request(server, "PROPFIND", "/dav/files/", headers={"Depth": "1"})
        check(status == 207 and b"big.bin" in body and b"<D:getetag>" in body, "PROPFIND Depth 1 lists the folder with ETags")

        # A sync client's checksum is checked and kept; every PUT's body gets its SHA-1, an MD5 when one is sent.
        asked = b'<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:checksums/></d:prop></d:propfind>'
        summed = hashlib.sha1(b"summed").hexdigest()
        check(request(server, "PUT", "/dav/files/summed.txt", b"summed", headers={"OC-Checksum": f"SHA1:{summed}"})[0] == 201,
              "a PUT with the right OC-Checksum is written")
        status, body, _ = request(server, "PROPFIND", "/dav/files/summed.txt", asked, headers={"Depth": "0"})
        check(status == 207 and f"SHA1:{summed}".encode() in body and b"MD5:" not in body, f"its SHA-1 is shown: {body[-300:]!r}")
        both = f"SHA1:{summed} MD5:{hashlib.md5(b'summed').hexdigest()}"
        check(request(server, "PUT", "/dav/files/summed.txt", b"summed", headers={"OC-Checksum": both})[0] == 204,
              "a PUT with both checksums is written")
        status, body, _ = request(server, "PROPFIND", "/dav/files/summed.txt", asked, headers={"Depth": "0"})
        check(status == 207 and both.encode() in body, f"both are shown, as sent: {body[-300:]!r}")
        status, _, _ = request(server, "PUT", "/dav/files/summed.txt", b"changed", headers={"OC-Checksum": f"SHA1:{summed}"})
        check(status == 400 and open(os.path.join(container, "Documents/UserFiles/summed.txt"), "rb").read() == b"summed",
              f"a PUT whose body is not its OC-Checksum is refused, the file unchanged ({status})")
        request(server, "PUT", "/dav/files/summed.txt", b"plain")
        status, body, _ = request(server, "PROPFIND", "/dav/files/summed.txt", asked, headers={"Depth": "0"})
        check(status == 207 and f"SHA1:{hashlib.sha1(b'plain').hexdigest()}".encode() in body and b"MD5:" not in body,
              f"a PUT without OC-Checksum is hashed too, its new content's SHA-1 shown: {body[-300:]!r}")

        # A MOVE over a file keeps what it replaced as a version; the moved file is gone from its place.
        request(server, "PUT", "/dav/files/draft.txt", b"new words")
        request(server, "PUT", "/dav/files/final.txt", b"old words")
        status = request(server, "MOVE", "/dav/files/draft.txt", headers={"Destination": server.base + "/dav/files/final.txt"})[0]
        files = os.path.join(container, "Documents/UserFiles")
        with open(os.path.join(files, "final.txt"), "rb") as moved:
            check(status == 204 and moved.read() == b"new words" and not os.path.exists(os.path.join(files, "draft.txt")),
                  f"a MOVE over a file replaces it ({status})")
        versions = json.loads(subprocess.run([coffer, "--container", container, "-c", "versions --json final.txt"],
                                             capture_output=True, text=True, timeout=120).stdout)["versions"]
        check(len(versions) == 1, f"what the MOVE replaced is a version: {versions}")
        status = request(server, "COPY", "/dav/files/final.txt", headers={"Destination": "/dav/files/final.txt", "Overwrite": "F"})[0]
        check(status in (403, 412), f"a COPY onto itself, or onto a taken name with Overwrite: F, is refused ({status})")

        # PROPPATCH: a dead property is an extended attribute; Coffer's tags are a property.
        body = ('<?xml version="1.0"?><propertyupdate xmlns="DAV:"><set><prop>'
                '<tags xmlns="urn:x-coffer:dav"><tag>work</tag><tag>报告</tag></tags>'
                '<colour xmlns="http://example.com/ns">blue</colour></prop></set></propertyupdate>').encode()
        status, answer, _ = request(server, "PROPPATCH", "/dav/files/final.txt", body)
        check(status == 207 and answer.count(b"200 OK") >= 1 and b"424" not in answer, f"PROPPATCH sets both ({status}: {answer[:300]})")
        found = subprocess.run([coffer, "--container", container, "-c", "find --tag 报告 --walk"], capture_output=True, text=True,
                               timeout=120).stdout
        check(found.split() == ["files:/final.txt"], f"the tags are Coffer's tags: {found!r}")
        stored = os.getxattr(os.path.join(files, "final.txt"), "user.xdg.tags").decode()
        check(sorted(stored.split(",")) == sorted(["work", "报告"]), f"kept as the desktop's tags: {stored!r}")
        stored = os.getxattr(os.path.join(files, "final.txt"), "user.dav.http%3A//example.com/ns:colour")
        check(stored == b"blue", f"the dead property is an extended attribute: {stored!r}")
        status, answer, _ = request(server, "PROPFIND", "/dav/files/final.txt", headers={"Depth": "0"})
        check(status == 207 and b"blue" in answer and "报告".encode() in answer, "PROPFIND allprop shows both")
        body = b'<propertyupdate xmlns="DAV:"><set><prop><getetag>x</getetag><a xmlns="urn:z">1</a></prop></set></propertyupdate>'
        status, answer, _ = request(server, "PROPPATCH", "/dav/files/final.txt", body)
        check(status == 207 and b"403" in answer and b"424" in answer, "a DAV: property is protected, and the rest is not set")
        check(b"urn%3Az:a" not in b" ".join(name.encode() for name in os.listxattr(os.path.join(files, "final.txt"))),
              "all or none: nothing was set")

        huge = "x" * 70_000  # (more than any Linux file system keeps in one attribute)
        body = (f'<propertyupdate xmlns="DAV:"><set><prop><small xmlns="urn:z">1</small>'
                f'<huge xmlns="urn:z">{huge}</huge></prop></set></propertyupdate>').encode()
        status, answer, _ = request(server, "PROPPATCH", "/dav/files/final.txt", body)
        check(status == 207 and b"507" in answer and b"424" in answer, f"a value with no room is 507, the rest 424: {answer[:400]}")
        check(not any(name.startswith("user.dav.urn%3Az") for name in os.listxattr(os.path.join(files, "final.txt"))),
              "all or none: the small one was not kept either")

        # Finder: its ._ and .DS_Store files are kept apart from the files, and served back to it.
        finder = {"User-Agent": "WebDAVFS/3.0.0 (03008000) Darwin/21.6.0 (x86_64)"}
        double = b"\x00\x05\x16\x07" + os.urandom(4000)  # (AppleDouble's magic number, then anything)
        check(request(server, "PUT", "/dav/files/._final.txt", double, headers=finder)[0] == 201, "Finder's ._ file is taken (201)")
        check(request(server, "PUT", "/dav/files/.DS_Store", b"layout", headers=finder)[0] == 201, "and its .DS_Store")
        check(not os.path.exists(os.path.join(files, "._final.txt")) and not os.path.exists(os.path.join(files, ".DS_Store")),
              "neither is among the files")
        status, body, _ = request(server, "GET", "/dav/files/._final.txt", headers=finder)
        check(status == 200 and body == double, "Finder reads its ._ file back as it wrote it")
        status, body, _ = request(server, "PROPFIND", "/dav/files/", headers=dict(finder, Depth="1"))
        check(status == 207 and b"/dav/files/._final.txt" in body and b"/dav/files/.DS_Store" in body, "Finder's listing shows them")
        status, body, _ = request(server, "PROPFIND", "/dav/files/", headers={"Depth": "1"})
        check(status == 207 and b"._final.txt" not in body and b".DS_Store" not in body, "another client's listing does not")
        listed = subprocess.run([coffer, "--container", container, "-c", "ls -a"], capture_output=True, text=True, timeout=120).stdout
        check("._final" not in listed and "DS_Store" not in listed, f"nor does Coffer's own: {listed!r}")
        status = request(server, "MOVE", "/dav/files/._final.txt", headers=dict(finder, Destination="/dav/files/._kept.txt"))[0]
        check(status == 201 and request(server, "GET", "/dav/files/._kept.txt")[1] == double, f"Finder renames its ._ file ({status})")
        status = request(server, "MOVE", "/dav/files/final.txt", headers={"Destination": "/dav/files/._final.txt"})[0]
        check(status == 403 and os.path.exists(os.path.join(files, "final.txt")), f"a file cannot be moved into that store ({status})")
        check(request(server, "DELETE", "/dav/files/._kept.txt", headers=finder)[0] == 204, "and removes it")
        check(request(server, "GET", "/dav/files/._kept.txt")[0] == 404, "gone")
        status = request(server, "PUT", "/dav/files/no-such-folder/._x", b"x", headers=finder)[0]
        check(status == 409, f"a ._ file needs its folder, as any file does ({status})")
        status = request(server, "PUT", "/dav/files/final.txt/._x", b"x", headers=finder)[0]
        check(status == 409, f"and a folder, not a file ({status})")
        status = request(server, "PUT", "/dav/trash/._x", b"x", headers=finder)[0]
        check(status == 403, f"and none is kept on a read-only mount ({status})")
        # Those inside a folder go with it when it moves, and are gone when it is deleted.
        check(request(server, "MKCOL", "/dav/files/Album/")[0] == 201, "a folder for Finder's files")
        request(server, "PUT", "/dav/files/Album/photo.jpg", b"jpeg")
        request(server, "PUT", "/dav/files/Album/._photo.jpg", double, headers=finder)
        status = request(server, "MOVE", "/dav/files/Album/", headers={"Destination": "/dav/files/Album%202/"})[0]
        check(status == 201 and request(server, "GET", "/dav/files/Album%202/._photo.jpg")[1] == double
              and request(server, "GET", "/dav/files/Album/._photo.jpg")[0] == 404, f"Finder's files follow their folder's move ({status})")
        check(request(server, "DELETE", "/dav/files/Album%202/")[0] == 204
              and request(server, "GET", "/dav/files/Album%202/._photo.jpg")[0] == 404, "and go when it is deleted")
        # A name Finder sends decomposed (NFD) is made composed (NFC), and found either way.
        check(request(server, "PUT", "/dav/files/cafe%CC%81.txt", b"nfd", headers=finder)[0] == 201, "an NFD name is taken")
        check("café.txt" in os.listdir(files), f"and made composed: {os.listdir(files)}")
        check(request(server, "GET", "/dav/files/caf%C3%A9.txt")[1] == b"nfd", "it reads back under its composed name")

        # Windows' way of making a file: an empty PUT, a LOCK, the PUT of its contents with the token.
        check(request(server, "PUT", "/dav/files/Windows.docx", b"")[0] == 201, "Windows' empty PUT makes the file")
        lock_body = (b'<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>'
                     b'<D:locktype><D:write/></D:locktype><D:owner><D:href>DESKTOP\\me</D:href></D:owner></D:lockinfo>')
        status, answer, headers = request(server, "LOCK", "/dav/files/Windows.docx", lock_body,
                                          headers={"Timeout": "Second-3600", "Depth": "0"})
        token = headers.get("Lock-Token", "").strip("<>")
        check(status == 200 and token.startswith("opaquelocktoken:") and b"Second-" in answer, f"LOCK answers a token ({status}, {token})")
        check(request(server, "PUT", "/dav/files/Windows.docx", b"other")[0] == 423, "a PUT without the token is refused (423)")

        # The lock outlasts a restart of the server.
        check(server.stop() == 0, "the server stops cleanly")
        server = serve_support.Server(coffer, container)
        check(request(server, "PUT", "/dav/files/Windows.docx", b"other")[0] == 423, "after a restart, the lock still holds")
        status = request(server, "PUT", "/dav/files/Windows.docx", b"the document", headers={"If": f"(<{token}>)"})[0]
        check(status == 204, f"the PUT with the token writes ({status})")
        status, answer, _ = request(server, "PROPFIND", "/dav/files/Windows.docx", headers={"Depth": "0"})
        check(token.encode() in answer and b"DESKTOP" in answer, "PROPFIND's lockdiscovery shows the lock and its owner")
        # Windows sends the token of an UNLOCK without its angle brackets.
        check(request(server, "UNLOCK", "/dav/files/Windows.docx", headers={"Lock-Token": token})[0] == 204, "UNLOCK takes a bare token")
        check(request(server, "PUT", "/dav/files/Windows.docx", b"free")[0] == 204, "unlocked, anyone writes")

        # A conditional save: If-Match with the ETag read, 412 with a stale one; If-None-Match: * only for a new file.
        status, _, headers = request(server, "PUT", "/dav/files/cond.txt", b"one", headers={"If-None-Match": "*"})
        etag = headers.get("ETag")
        check(status == 201 and etag, f"If-None-Match: * makes a new file ({status})")
        check(request(server, "PUT", "/dav/files/cond.txt", b"x", headers={"If-None-Match": "*"})[0] == 412, "and refuses a taken name")
        status, _, headers = request(server, "PUT", "/dav/files/cond.txt", b"two", headers={"If-Match": etag})
        check(status == 204, f"If-Match with the current ETag saves ({status})")
        status = request(server, "PUT", "/dav/files/cond.txt", b"three", headers={"If-Match": etag})[0]
        with open(os.path.join(files, "cond.txt"), "rb") as saved:
            check(status == 412 and saved.read() == b"two", f"If-Match with a stale ETag is refused and writes nothing ({status})")

        # RFC 4331's quotas, when named.
        body = b'<propfind xmlns="DAV:"><prop><quota-available-bytes/><quota-used-bytes/></prop></propfind>'
        status, answer, _ = request(server, "PROPFIND", "/dav/files/", body, headers={"Depth": "0"})
        text = answer.decode()
        import re
        used = re.search(r"<D:quota-used-bytes>(\d+)</D:quota-used-bytes>", text)
        available = re.search(r"<D:quota-available-bytes>(\d+)</D:quota-available-bytes>", text)
        check(status == 207 and used and available and int(used.group(1)) >= 3 << 20 and int(available.group(1)) > 0,
              f"the quota properties say what the files hold and what is free: {text[:400]}")

        # A name Windows cannot hold is listed unchanged, and said to a Windows client.
        check(request(server, "PUT", "/dav/files/a%3Ab.txt", b"colon")[0] == 201, "a name with a colon is made")
        status, body, headers = request(server, "PROPFIND", "/dav/files/", headers={"Depth": "1",
                                        "User-Agent": "Microsoft-WebDAV-MiniRedir/10.0.19045"})
        check(status == 207 and b"/dav/files/a%3Ab.txt" in body and "Coffer-Warning" in headers,
              f"Windows' listing holds the name unchanged, with a warning ({status}, {headers.get('Coffer-Warning')})")

        rclone_check(server)
        rclone_mount_git_check(server, files)
        huge_folder_check(server, files)
        cadaver_check(server, files)
        gio_check(server, files)
        trash = subprocess.run([coffer, "--container", container, "-c", "trash"], capture_output=True, text=True, timeout=120).stdout
        check("files:/gio-gone.txt" in trash, "what gio removed is in Coffer's trash")
        davfs_check(coffer, server, files, container)
        check(server.stop() == 0, "the server stops cleanly")
        # --print-dav-url: what to paste into a file manager, after the page's address.
        server = serve_support.Server(coffer, container, "--print-dav-url")
        line = server.process.stdout.readline().strip()
        check(line == server.base + "/dav/files/", f"--print-dav-url prints WebDAV's address: {line!r}")
        lines = [server.process.stdout.readline() for _ in range(2)]
        check(any(server.token in line and "password" in line for line in lines), f"and the password: {lines}")
        check(server.stop() == 0, "the server stops cleanly")
        tls_check(coffer, container)
        server = serve_support.Server(coffer, container)
    finally:
        check(server.stop() == 0, "the server stops cleanly")
        shutil.rmtree(container, ignore_errors=True)


if __name__ == "__main__":
    main()
