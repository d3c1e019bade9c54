#!/usr/bin/env python3
"""Coffer's fault suite: the built `coffer` binary under kill -9, a full disk, read-only
storage, concurrent processes and malformed JSON-RPC frames, each followed by an invariant
check of the container.

    python3 FaultSuite/faults.py [--coffer .build/debug/coffer] [--seed N] [--rounds N] [--only NAME…]

Everything random comes from one seed, printed first; `--seed` replays a run. The disk and
read-only scenarios need root (loop and bind mounts) and are skipped, saying so, without it.
Exit status 0 when every invariant held, 1 with the first broken one otherwise.
"""

import os as _os
import sys as _sys
_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))), ".ci"))
import owned  # every process the suite starts is ended with it, on failure too (.ci/owned.py)
import argparse
import base64
import hashlib
import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

PARTIAL = re.compile(r"^\.coffer-partial-[0-9a-f]{8}-[0-9a-f]{1,16}$")
USER_FILES = "Documents/UserFiles"
TRASH = "Library/Trash"
JOURNAL = "Library/Application Support/AppData/Journal"
VERSIONS = "Library/Versions/files"


class Broken(Exception):
    """An invariant that did not hold."""


def expect(condition, message):
    if not condition:
        raise Broken(message)


def digest_file(path):
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()


def digest_tree(root):
    """Relative path → checksum (files) or "folder", for everything below `root`."""
    result = {}
    for folder, folders, files in os.walk(root):
        relative = os.path.relpath(folder, root)
        for name in folders:
            result[os.path.normpath(os.path.join(relative, name))] = "folder"
        for name in files:
            result[os.path.normpath(os.path.join(relative, name))] = digest_file(os.path.join(folder, name))
    return result


def partials_below(*roots):
    found = []
    for root in roots:
        for folder, folders, files in os.walk(root):
            found += [os.path.join(folder, name) for name in folders + files if PARTIAL.match(name)]
    return found


class Coffer:
    """Runs the binary on one container."""

    def __init__(self, binary, container):
        self.binary = binary
        self.container = container

    def command(self, script, extra=()):
        return [self.binary, "--container", self.container, "--lang", "en", *extra, "-c", script]

    def run(self, script, timeout=120, user=None):
        return subprocess.run(self.command(script), capture_output=True, text=True, timeout=timeout,
                              env=environment(), preexec_fn=user)

    def spawn(self, script):
        return subprocess.Popen(self.command(script), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=environment())

    def files(self, relative=""):
        return os.path.join(self.container, USER_FILES, relative)

    def trash(self, relative=""):
        return os.path.join(self.container, TRASH, relative)


def environment():
    env = dict(os.environ)
    env["LANG"] = "C.UTF-8"
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)
    return env


class RPC:
    """`coffer rpc` over pipes, newline-delimited, with answers read on a thread of their own."""

    def __init__(self, binary, container, extra=()):
        self.process = subprocess.Popen([binary, "--container", container, "rpc", "--framing", "ndjson", *extra],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=environment())
        self.answers = queue.Queue()
        self.lines = []
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()
        self.errors = []
        threading.Thread(target=self._read_errors, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line)
            self.answers.put(line)
        self.answers.put(None)

    def _read_errors(self):
        for line in self.process.stderr:
            self.errors.append(line.decode("utf-8", "replace"))

    def send_raw(self, data):
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message):
        self.send_raw(json.dumps(message).encode() + b"\n")

    def request(self, method, params=None):
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def answer(self, request_id, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            expect(remaining > 0, f"no answer to request {request_id!r} within {timeout} s")
            try:
                line = self.answers.get(timeout=remaining)
            except queue.Empty:
                continue
            expect(line is not None, f"coffer rpc ended before answering {request_id!r}: {''.join(self.errors)[-500:]}")
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                return message

    def call(self, method, params=None, timeout=30):
        return self.answer(self.request(method, params), timeout)

    def initialize(self):
        answer = self.call("initialize", {"locale": "en"})
        expect("result" in answer, f"initialize failed: {answer}")
        self.send({"jsonrpc": "2.0", "method": "initialized"})

    def close(self, timeout=30):
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        return self.process.wait(timeout)

    def kill(self):
        self.process.kill()
        self.process.wait(timeout=60)


class RangeServer:
    """An HTTP server on 127.0.0.1 serving `data` at any path ending in `data.bin`, with
    `Range: bytes=N-`, at about `rate` bytes a second; every other path is a 404. It notes each
    request's path and the start of its range (`None` without one)."""

    def __init__(self, data, rate):
        import http.server
        import socketserver
        suite = self
        self.ranges = []
        self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *arguments):
                pass

            def do_GET(self):
                suite.requests.append(self.path)
                if not self.path.endswith("data.bin"):
                    self.send_error(404)
                    return
                asked = self.headers.get("Range")
                start = int(asked.split("=")[1].split("-")[0]) if asked else None
                suite.ranges.append(start)
                self.send_response(206 if asked else 200)
                self.send_header("Content-Length", str(len(data) - (start or 0)))
                self.send_header("ETag", '"fixed"')
                self.send_header("Last-Modified", "Wed, 02 Dec 2026 10:00:00 GMT")
                self.send_header("Accept-Ranges", "bytes")
                if asked:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                piece = 64 << 10
                try:
                    for offset in range(start or 0, len(data), piece):
                        self.wfile.write(data[offset:offset + piece])
                        time.sleep(piece / rate)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Suite:
    def __init__(self, arguments):
        self.binary = os.path.abspath(arguments.coffer)
        self.seed = arguments.seed
        self.random = random.Random(self.seed)
        self.rounds = arguments.rounds
        self.work = tempfile.mkdtemp(prefix="coffer-faults-")
        os.chmod(self.work, 0o755)
        self.host = os.path.join(self.work, "host")
        self.make_host_fixtures()

    # MARK: Fixtures

    def bytes(self, count):
        return self.random.randbytes(count)

    def make_host_fixtures(self):
        os.makedirs(os.path.join(self.host, "Tree"))
        with open(os.path.join(self.host, "big.bin"), "wb") as handle:
            handle.write(self.bytes(48 << 20))
        for index in range(240):
            folder = os.path.join(self.host, "Tree", f"part {index % 6}", "报告" if index % 2 else "sub")
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"file {index:03}.dat"), "wb") as handle:
                handle.write(self.bytes(48 << 10))
        for index in range(3):
            with open(os.path.join(self.host, "Tree", f"large {index}.bin"), "wb") as handle:
                handle.write(self.bytes(4 << 20))
        self.host_digest = digest_tree(self.host)

    def container(self, name):
        coffer = Coffer(self.binary, os.path.join(self.work, name))
        result = coffer.run("ls")
        expect(result.returncode == 0, f"a new container does not open: {result.stderr}")
        return coffer

    # MARK: Invariants

    def check_container(self, coffer, context):
        """After a reopen: no partial left anywhere, no journal of a dead process, a trash
        whose every entry is whole (information and item), the host side untouched."""
        expect(coffer.run("ls").returncode == 0, f"{context}: the container does not reopen")
        roots = [os.path.join(coffer.container, part) for part in (USER_FILES, TRASH, "Library/Caches/Downloading", VERSIONS)]
        leftovers = partials_below(*roots, self.host)
        expect(not leftovers, f"{context}: partials left after recovery: {leftovers[:5]}")
        journals = os.listdir(os.path.join(coffer.container, JOURNAL)) if os.path.isdir(
            os.path.join(coffer.container, JOURNAL)) else []
        expect(not journals, f"{context}: journals of dead processes left: {journals}")
        infos = sorted(os.listdir(coffer.trash("info")))
        items = set(os.listdir(coffer.trash("files")))
        for info in infos:
            expect(info.endswith(".trashinfo"), f"{context}: a stray file in the trash's info/: {info}")
            with open(coffer.trash("info/" + info), encoding="utf-8") as handle:
                text = handle.read()
            expect(text.startswith("[Trash Info]\n") and "\nPath=/" in text and "\nDeletionDate=" in text,
                   f"{context}: an incomplete information file {info}: {text!r}")
            expect(info[: -len(".trashinfo")] in items, f"{context}: information without its item: {info}")
        named = {info[: -len(".trashinfo")] for info in infos}
        expect(items <= named, f"{context}: items in the trash without information: {sorted(items - named)[:5]}")
        expect(digest_tree(self.host) == self.host_digest, f"{context}: the host side changed")

    def versions_of(self, coffer, path):
        """The versions `versions --json` lists of files:/PATH, each (id, checksum of its content):
        a version listed is whole (its entry is made before its content moves in, and a listing
        leaves out an entry whose content never arrived)."""
        listed = coffer.run(f"versions --json {quote(path)}")
        expect(listed.returncode == 0, f"versions {path} failed: {listed.stderr[-300:]}")
        found = []
        for version in json.loads(listed.stdout)["versions"]:
            content = os.path.join(coffer.container, VERSIONS, str(version["id"]))
            expect(os.path.getsize(content) == version["size"], f"version {version['id']} of {path} is not whole")
            found.append((version["id"], digest_file(content)))
        return found

    def trash_contents(self, coffer):
        """Original path (relative to files:) → checksum, for everything in the trash."""
        contents = {}
        prefix = "Path=" + os.path.realpath(coffer.files()) + "/"
        for info in os.listdir(coffer.trash("info")):
            with open(coffer.trash("info/" + info), encoding="utf-8") as handle:
                path = next(line for line in handle.read().splitlines() if line.startswith("Path="))
            expect(path.startswith(prefix), f"an information file points outside files: {path}")
            original = unquote(path[len(prefix):])
            contents[original] = digest_file(coffer.trash("files/" + info[: -len(".trashinfo")]))
        return contents

    # MARK: kill -9

    def kill_rounds(self, name, coffer, start, check, reset):
        """Runs the operation once to time it, then `rounds` times killed at a random moment."""
        began = time.monotonic()
        process = start()
        process.wait(timeout=600)
        span = time.monotonic() - began
        check(f"{name}, uninterrupted")
        reset()
        killed_midway = 0
        for round_number in range(self.rounds):
            delay = self.random.uniform(0.0, span * 1.1)
            process = start()
            time.sleep(delay)
            finished = process.poll() is not None
            if not finished:
                process.send_signal(signal.SIGKILL)
                killed_midway += 1
            process.wait(timeout=600)
            context = f"{name}, round {round_number + 1}, killed after {delay * 1000:.0f} ms"
            self.check_container(coffer, context)
            check(context)
            reset()
        print(f"  {name}: {self.rounds} rounds ({killed_midway} killed mid-way; the operation takes {span * 1000:.0f} ms)")

    def copy_rounds(self, name, source, copy, digest):
        """`cp -r SOURCE COPY` inside files: (SOURCE from the host fixtures), killed at random moments."""
        coffer = self.container(name.replace(" ", "-"))
        fixture = os.path.join(self.host, source)
        (shutil.copytree if os.path.isdir(fixture) else shutil.copy)(fixture, coffer.files(source))
        original = digest(coffer.files(source))

        def check(context):
            expect(digest(coffer.files(source)) == original, f"{context}: the source changed")
            if os.path.exists(coffer.files(copy)):
                expect(digest(coffer.files(copy)) == original, f"{context}: an incomplete copy is visible")

        def reset():
            target = coffer.files(copy)
            if os.path.isdir(target):
                shutil.rmtree(target)
            elif os.path.exists(target):
                os.remove(target)

        self.kill_rounds(name, coffer, lambda: coffer.spawn(f"cp -r {quote(source)} {quote(copy)}"), check, reset)

    def scenario_copy(self):
        self.copy_rounds("copy", "big.bin", "copy.bin", digest_file)

    def scenario_folder_copy(self):
        self.copy_rounds("folder copy", "Tree", "Copy", digest_tree)

    def scenario_import(self):
        coffer = self.container("import")
        big = digest_file(os.path.join(self.host, "big.bin"))
        tree = digest_tree(os.path.join(self.host, "Tree"))
        script = f"import {quote(os.path.join(self.host, 'big.bin'))} {quote(os.path.join(self.host, 'Tree'))}"

        def check(context):
            if os.path.exists(coffer.files("Import/big.bin")):
                expect(digest_file(coffer.files("Import/big.bin")) == big, f"{context}: an incomplete import is visible")
            if os.path.exists(coffer.files("Import/Tree")):
                expect(digest_tree(coffer.files("Import/Tree")) == tree, f"{context}: an incomplete folder import is visible")

        def reset():
            shutil.rmtree(coffer.files("Import"))
            os.mkdir(coffer.files("Import"))

        self.kill_rounds("import", coffer, lambda: coffer.spawn(script), check, reset)

    def replace_rounds(self, name, source, target, digest):
        """`cp -r --replace SOURCE TARGET-FOLDER` over an item of the same name holding other
        content, killed at random moments: the old item is at its place or in the trash, whole,
        and what is at the place is the old item or the whole new one, never a part (issue 30)."""
        coffer = self.container(name.replace(" ", "-"))
        fixture = os.path.join(self.host, source)
        (shutil.copytree if os.path.isdir(fixture) else shutil.copy)(fixture, coffer.files(source))
        new = digest(coffer.files(source))
        place = coffer.files(f"{target}/{source}")

        def make_old():
            os.makedirs(coffer.files(target), exist_ok=True)
            if os.path.isdir(fixture):
                os.makedirs(os.path.join(place, "old"))
                with open(os.path.join(place, "old", "kept.txt"), "wb") as handle:
                    handle.write(b"the old folder's file\n")
            else:
                with open(place, "wb") as handle:
                    handle.write(b"the old file\n" * 1000)
            return digest(place)

        old = make_old()

        is_file = not os.path.isdir(fixture)

        def check(context):
            trashed_old = [item for item in os.listdir(coffer.trash("files"))]
            # A file replaced by a file is kept as a version of it; a folder goes to the trash.
            versions = [checksum for _, checksum in self.versions_of(coffer, f"{target}/{source}")] if is_file else []
            displaced = versions if is_file else [digest(coffer.trash("files/" + item)) for item in trashed_old]
            at_place = digest(place) if os.path.exists(place) else None
            expect(at_place in (old, new, None), f"{context}: the place holds neither the old item nor the whole new one")
            if at_place != old:
                # Replaced (or in the instant between): the old item is kept, whole, once.
                expect(displaced == [old], f"{context}: the replaced item is not kept whole, once: {len(displaced)} kept")
            else:
                expect(not displaced, f"{context}: the old item is both at its place and kept aside")
            if is_file:
                expect(not trashed_old, f"{context}: a replaced file went to the trash: {trashed_old}")
            expect(digest(coffer.files(source)) == new, f"{context}: the source changed")

        def reset():
            expect(coffer.run("empty-trash --yes").returncode == 0, "emptying the trash between rounds failed")
            expect(coffer.run("versions --prune --max-size 0").returncode == 0, "dropping the versions between rounds failed")
            if os.path.isdir(place):
                shutil.rmtree(place)
            elif os.path.exists(place):
                os.remove(place)
            expect(make_old() == old, "the old item could not be made again")

        self.kill_rounds(name, coffer, lambda: coffer.spawn(f"cp -r --replace {quote(source)} {quote(target)}"), check, reset)

    def scenario_replace(self):
        self.replace_rounds("replace", "big.bin", "Target", digest_file)

    def scenario_version_restore(self):
        """`restore --version ID` of a 48 MiB file over the file, killed at random moments: the file
        holds the version or what it had, whole; the version stays; what the file had is kept as a
        version once it is replaced; nothing is half-made."""
        coffer = self.container("version-restore")
        shutil.copy(os.path.join(self.host, "big.bin"), coffer.files("big.bin"))
        old = digest_file(coffer.files("big.bin"))
        with open(coffer.files("new.bin"), "wb") as handle:
            handle.write(self.bytes(24 << 20))
        new = digest_file(coffer.files("new.bin"))
        expect(coffer.run("cp --replace new.bin big.bin").returncode == 0, "saving over the file failed")
        [(kept, checksum)] = self.versions_of(coffer, "big.bin")
        expect(checksum == old, "the version is not what the file had")

        def check(context):
            versions = [checksum for _, checksum in self.versions_of(coffer, "big.bin")]
            at_place = digest_file(coffer.files("big.bin")) if os.path.exists(coffer.files("big.bin")) else None
            expect(at_place in (old, new), f"{context}: the file holds neither the version nor what it had")
            expect(old in versions, f"{context}: the restored version is gone")
            if at_place == old:
                expect(sorted(versions) == sorted([old, new]),
                       f"{context}: what the file had is not kept once: {[{old: 'old', new: 'new'}.get(v, v[:8]) for v in versions]}, "
                       f"{sorted(os.listdir(os.path.join(coffer.container, VERSIONS)))}")
            else:
                expect(versions == [old], f"{context}: a version was kept of a restore that did not happen")
            expect(not os.listdir(coffer.trash("files")), f"{context}: something went to the trash")

        def reset():
            for version_id, checksum in self.versions_of(coffer, "big.bin"):
                if version_id != kept:
                    os.remove(os.path.join(coffer.container, VERSIONS, str(version_id)))
            if digest_file(coffer.files("big.bin")) != new:
                shutil.copy(coffer.files("new.bin"), coffer.files("big.bin"))

        self.kill_rounds("version restore", coffer, lambda: coffer.spawn(f"restore --version {kept} big.bin"), check, reset)

    def scenario_undo(self):
        """`undo SESSION` of a session that copied a 300-file tree, moved a folder, saved over a
        48 MiB file and tagged, killed at random moments in fresh containers: afterwards nothing is
        lost (every file is where the session left it, where it was, in the trash or a version),
        and a second, uninterrupted undo brings the tree back exactly as it was."""
        rounds = max(3, self.rounds // 3)
        killed_midway = 0
        span = None
        for round_number in range(rounds + 1):
            coffer = self.container(f"undo-{round_number}")
            shutil.copytree(os.path.join(self.host, "Tree"), coffer.files("Work"))
            shutil.copy(os.path.join(self.host, "big.bin"), coffer.files("big.bin"))
            with open(coffer.files("new.bin"), "wb") as handle:
                handle.write(self.bytes(8 << 20))
            before = digest_tree(coffer.files())
            every = set()
            for folder, _, names in os.walk(coffer.files()):
                every.update(digest_file(os.path.join(folder, name)) for name in names)
            session = coffer.run("cp -r Work Copy; mv Work Moved; cp --replace new.bin big.bin; tag new.bin +done")
            expect(session.returncode == 0, f"the session to undo failed: {session.stderr[-300:]}")
            sessions = json.loads(coffer.run("changes --json").stdout)["sessions"]
            identifier = sessions[0]["id"]
            began = time.monotonic()
            process = coffer.spawn(f"undo {identifier}")
            if round_number == 0:
                process.wait(timeout=600)
                span = time.monotonic() - began
                context = "undo, uninterrupted"
            else:
                delay = self.random.uniform(0.0, span * 1.1)
                time.sleep(delay)
                if process.poll() is None:
                    process.send_signal(signal.SIGKILL)
                    killed_midway += 1
                process.wait(timeout=600)
                context = f"undo, round {round_number}, killed after {delay * 1000:.0f} ms"
            self.check_container(coffer, context)
            # Nothing lost: every content the files had is in files:, the trash or a version.
            present = set()
            for root in (coffer.files(), coffer.trash("files"), os.path.join(coffer.container, VERSIONS)):
                for folder, _, names in os.walk(root):
                    present.update(digest_file(os.path.join(folder, name)) for name in names)
            expect(every <= present, f"{context}: {len(every - present)} contents lost")
            # What the cut undo reverted is journaled: each change it marked undone names a
            # session that is listed, so it can be undone in turn.
            listed = {entry["id"] for entry in json.loads(coffer.run("changes --json").stdout)["sessions"]}
            undone_by = {change["undoneBy"] for change in json.loads(coffer.run(f"changes --json {identifier}").stdout)["changes"]
                         if "undoneBy" in change}
            expect(undone_by <= listed, f"{context}: undone by a session the journal does not list: {undone_by - listed}")
            finished = coffer.run(f"undo {identifier}")
            expect(finished.returncode in (0, 1), f"{context}: the second undo broke: {finished.stderr[-300:]}")
            expect(digest_tree(coffer.files()) == before, f"{context}: the second undo did not bring the tree back: "
                   f"{finished.stdout[-500:]} {finished.stderr[-300:]}")
            shutil.rmtree(coffer.container, ignore_errors=True)
        print(f"  undo: {rounds} rounds ({killed_midway} killed mid-way; the undo takes {span * 1000:.0f} ms)")

    def scenario_folder_replace(self):
        self.replace_rounds("folder replace", "Tree", "Target", digest_tree)

    def many_files(self, coffer, count=300):
        os.makedirs(coffer.files("Many"))
        expected = {}
        for index in range(count):
            data = f"item {index} ".encode() * (1 + index % 50)
            with open(coffer.files(f"Many/f{index:03}.txt"), "wb") as handle:
                handle.write(data)
            expected[f"Many/f{index:03}.txt"] = hashlib.sha256(data).hexdigest()
        return expected

    def check_exactly_once(self, coffer, expected, context):
        """Every item is in files: or in the trash, once, whole."""
        in_trash = self.trash_contents(coffer)
        for path, checksum in expected.items():
            here = os.path.exists(coffer.files(path))
            there = path in in_trash
            expect(here != there, f"{context}: {path} is {'in both places' if here else 'nowhere'}")
            actual = digest_file(coffer.files(path)) if here else in_trash[path]
            expect(actual == checksum, f"{context}: {path} lost content")

    def scenario_trash(self):
        coffer = self.container("trash")
        expected = self.many_files(coffer)
        script = "rm " + " ".join(quote(path) for path in expected)

        def reset():
            trashed = self.trash_contents(coffer)
            if not trashed:
                return
            restored = coffer.run("restore " + " ".join(os.path.basename(path) for path in trashed))
            expect(restored.returncode == 0, f"restoring after a trash round failed: {restored.stderr[-300:]}")

        self.kill_rounds("trash", coffer, lambda: coffer.spawn(script),
                         lambda context: self.check_exactly_once(coffer, expected, context), reset)

    def scenario_restore(self):
        coffer = self.container("restore")
        expected = self.many_files(coffer)
        names = " ".join(os.path.basename(path) for path in expected)
        trashing = "rm " + " ".join(quote(path) for path in expected)
        expect(coffer.run(trashing).returncode == 0, "trashing the fixture failed")

        def reset():
            present = [path for path in expected if os.path.exists(coffer.files(path))]
            if present:
                result = coffer.run("rm " + " ".join(quote(path) for path in present))
                expect(result.returncode == 0, f"trashing after a restore round failed: {result.stderr[-300:]}")

        self.kill_rounds("restore", coffer, lambda: coffer.spawn("restore " + names),
                         lambda context: self.check_exactly_once(coffer, expected, context), reset)

    def scenario_trash_info(self):
        """`rm` of 500 files into a trash that already holds some, killed at random: the trash's
        `info/` must hold only whole information files after the reopen (an independent tester
        once found partials there that recovery never removed)."""
        coffer = self.container("trash-info")
        expected = self.many_files(coffer, count=500)
        kept = coffer.run("touch old-a.txt old-b.txt; rm old-a.txt old-b.txt")
        expect(kept.returncode == 0, f"trashing the earlier items failed: {kept.stderr[-300:]}")
        before = set(os.listdir(coffer.trash("info")))
        script = "rm Many/*"

        def check(context):
            infos = set(os.listdir(coffer.trash("info")))
            strays = sorted(name for name in infos if not name.endswith(".trashinfo"))
            expect(not strays, f"{context}: stray files in the trash's info/: {strays[:5]}")
            expect(before <= infos, f"{context}: earlier trash items lost their information: {sorted(before - infos)}")
            self.check_exactly_once(coffer, expected, context)

        def reset():
            names = [name[: -len(".trashinfo")] for name in os.listdir(coffer.trash("info"))
                     if name.endswith(".trashinfo") and name[: -len(".trashinfo")].startswith("f")]
            if names:
                restored = coffer.run("restore " + " ".join(names))
                expect(restored.returncode == 0, f"restoring after a round failed: {restored.stderr[-300:]}")

        self.kill_rounds("trash info", coffer, lambda: coffer.spawn(script), check, reset)

    def scenario_download_resume(self):
        """`download URL` from a slow server, killed at random once bytes have arrived; then
        `download --resume` must ask for the rest (a `Range` from where the killed process got
        to, never from zero when it had written something) and the file come out whole."""
        coffer = self.container("download-resume")
        data = self.bytes(24 << 20)
        server = RangeServer(data, rate=12 << 20)
        partials = os.path.join(coffer.container, "Library/Caches/Downloading")
        target = coffer.files("Download/data.bin")
        resumed_midway = 0
        try:
            for round_number in range(max(3, self.rounds // 3)):
                context = f"download, round {round_number + 1}"
                server.ranges.clear()
                process = coffer.spawn(f"download {server.url}/data.bin")
                threshold = self.random.randrange(1 << 20, 20 << 20)
                deadline = time.monotonic() + 60
                written = 0
                while process.poll() is None and time.monotonic() < deadline:
                    sizes = [os.path.getsize(os.path.join(partials, name)) for name in os.listdir(partials)
                             if name.endswith(".download")] if os.path.isdir(partials) else []
                    written = max(sizes, default=0)
                    if written >= threshold:
                        break
                    time.sleep(0.01)
                killed = process.poll() is None
                process.send_signal(signal.SIGKILL) if killed else None
                process.wait(timeout=600)
                if killed:
                    resumed = coffer.run("download --resume")
                    expect(resumed.returncode == 0, f"{context}: the resume failed: {resumed.stderr[-300:]}")
                    starts = [start for start in server.ranges if start is not None]
                    expect(starts and starts[-1] > 0,
                           f"{context}: killed with {written} bytes written, the resume asked {server.ranges}")
                    resumed_midway += 1
                self.check_container(coffer, context)
                expect(os.path.exists(target), f"{context}: the download did not appear")
                with open(target, "rb") as handle:
                    expect(handle.read() == data, f"{context}: the downloaded file differs from the server's")
                os.remove(target)
                cleared = coffer.run("downloads --clear")
                expect(cleared.returncode == 0, f"{context}: downloads --clear failed: {cleared.stderr[-300:]}")
        finally:
            server.stop()
        print(f"  download resume: {resumed_midway} downloads killed mid-way resumed with a Range")

    def scenario_cache_bounds(self):
        """The caches stay bounded: thumbnails past their age or the size limit go when a
        long-lived front end starts; a download that failed for good is not retried and
        `downloads --clear` removes what it kept."""
        coffer = self.container("cache-bounds")
        thumbnails = os.path.join(coffer.container, "Library/Caches/Thumbnails")
        now = time.time()
        made = {}
        for index in range(40):
            folder = ["normal", "large", "fail/coffer-1.0"][index % 3]
            path = os.path.join(thumbnails, folder, f"{index:032x}.png")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(b"\0" * 100_000)
            age = self.random.uniform(0, 400) * 86_400
            os.utime(path, (now - age, now - age))
            made[path] = age
        rpc = RPC(self.binary, coffer.container, extra=("--thumbnail-max-size", "1"))
        try:
            rpc.initialize()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and sum(os.path.exists(path) for path in made) > 10:
                time.sleep(0.05)
        finally:
            rpc.close()
        kept = [path for path in made if os.path.exists(path)]
        expect(all(made[path] < 180 * 86_400 for path in kept), "a thumbnail older than 180 days was kept")
        expect(len(kept) <= 10, f"{len(kept)} thumbnails of 100 kB kept under a 1 MB limit")
        young = sorted((age, path) for path, age in made.items() if age < 180 * 86_400)[:len(kept)]
        expect(sorted(kept) == sorted(path for _, path in young), "the trim did not keep the newest thumbnails")

        server = RangeServer(b"", rate=1 << 20)
        try:
            failed = coffer.run(f"download {server.url}/missing.bin")
            expect(failed.returncode != 0, "a download of a missing file succeeded")
            asked = len(server.requests)
            again = coffer.run("download --resume")
            expect(len(server.requests) == asked, f"a download that failed for good was retried ({again.stdout!r})")
            listed = coffer.run("downloads")
            expect("\tfailed\t" in listed.stdout and "404" in listed.stdout,
                   f"the failed download is not listed: {listed.stdout!r}")
            cleared = coffer.run("downloads --clear")
            expect(cleared.returncode == 0, f"downloads --clear failed: {cleared.stderr[-300:]}")
            listed = coffer.run("downloads")
            expect("failed" not in listed.stdout, f"downloads --clear kept the failed one: {listed.stdout!r}")
            downloading = os.path.join(coffer.container, "Library/Caches/Downloading")
            left = [name for name in os.listdir(downloading) if name != "CACHEDIR.TAG"]
            expect(not left, f"downloads --clear left data behind: {left}")
        finally:
            server.stop()
        print(f"  cache bounds: {len(kept)} of 40 thumbnails kept; a failed download not retried, then cleared")

    def rpc_rounds(self, name, send):
        """`coffer rpc` killed at a random moment while `send` feeds it."""
        coffer = self.container(name)
        data = self.bytes(6 << 20)
        checksum = hashlib.sha256(data).hexdigest()
        target = coffer.files("Download/received.bin")

        class Started:
            def __init__(self, suite):
                self.rpc = RPC(suite.binary, coffer.container)
                self.thread = threading.Thread(target=self.feed, daemon=True)
                self.thread.start()

            def feed(self):
                try:
                    self.rpc.initialize()
                    send(self.rpc, data)
                    self.rpc.close()
                except (Broken, BrokenPipeError, ValueError, OSError):
                    pass  # killed under it

            def poll(self):
                return self.rpc.process.poll()

            def send_signal(self, number):
                self.rpc.process.send_signal(number)

            def wait(self, timeout=600):
                self.thread.join(60)
                return self.rpc.process.wait(timeout=timeout)

        def check(context):
            if os.path.exists(target):
                expect(digest_file(target) == checksum, f"{context}: an incomplete file is visible")

        self.kill_rounds(name, coffer, lambda: Started(self), check,
                         lambda: os.path.exists(target) and os.remove(target))

    def scenario_write(self):
        def send(rpc, data):
            answer = rpc.call("files/write", {"path": "/Download/received.bin",
                                              "data": base64.b64encode(data).decode(), "encoding": "base64"}, 120)
            expect("result" in answer, f"files/write failed: {answer}")

        self.rpc_rounds("write", send)

    def scenario_upload(self):
        def send(rpc, data):
            begun = rpc.call("files/upload/begin", {"path": "/Download/received.bin", "size": len(data)})
            upload = begun["result"]["uploadId"]
            chunk = 1 << 20
            for offset in range(0, len(data), chunk):
                answer = rpc.call("files/upload/append", {"uploadId": upload, "offset": offset,
                                                          "data": base64.b64encode(data[offset:offset + chunk]).decode()})
                expect("result" in answer, f"append failed: {answer}")
            answer = rpc.call("files/upload/commit", {"uploadId": upload}, 120)
            expect("result" in answer, f"commit failed: {answer}")

        self.rpc_rounds("upload", send)

    # MARK: A full disk, read-only storage

    def scenario_disk_full(self):
        if os.geteuid() != 0:
            print("  disk full: skipped (a loop mount needs root)")
            return
        image = os.path.join(self.work, "disk.img")
        mount = os.path.join(self.work, "small")
        os.mkdir(mount)
        subprocess.run(["truncate", "-s", "64M", image], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", image], check=True)
        subprocess.run(["mount", "-o", "loop", image, mount], check=True)
        try:
            self.disk_full_checks(Coffer(self.binary, os.path.join(mount, "c")), mount)
            self.read_only_checks(os.path.join(mount, "c"))
        finally:
            subprocess.run(["umount", "-l", mount], check=False)

    def disk_full_checks(self, coffer, mount):
        expect(coffer.run("ls").returncode == 0, "the container on the small disk does not open")
        huge = os.path.join(self.work, "huge.bin")
        with open(huge, "wb") as handle:
            handle.truncate(0)
            for _ in range(80):
                handle.write(self.bytes(1 << 20))
        huge_folder = os.path.join(self.work, "Huge")
        os.makedirs(os.path.join(huge_folder, "inner"))
        for index in range(20):
            shutil.copy(os.path.join(self.host, "Tree", f"large {index % 3}.bin"),
                        os.path.join(huge_folder, "inner", f"{index}.bin"))
        before = shutil.disk_usage(mount).used

        def no_trace(context):
            leftovers = partials_below(mount)
            expect(not leftovers, f"{context}: partials left: {leftovers[:3]}")
            used = shutil.disk_usage(mount).used
            expect(used - before < 2 << 20, f"{context}: {(used - before) >> 20} MiB still used")

        cases = [
            (f"import {quote(huge)}", "files:/Import/huge.bin", "a file import"),
            (f"import {quote(huge_folder)}", "files:/Import/Huge", "a folder import"),
        ]
        for script, named, context in cases:
            result = coffer.run(script)
            expect(result.returncode == 1, f"{context} onto a full disk succeeded")
            expect("enough space" in result.stderr, f"{context}: not an out-of-space message: {result.stderr}")
            expect(named in result.stderr and ".coffer-partial" not in result.stderr and "upload-" not in result.stderr,
                   f"{context}: the message does not name {named}: {result.stderr}")
            no_trace(context)
        # Within files:, and through the RPC server (a write, an upload).
        shutil.copy(os.path.join(self.host, "big.bin"), coffer.files("big.bin"))
        before = shutil.disk_usage(mount).used
        result = coffer.run("cp big.bin copy.bin")
        expect(result.returncode == 1 and "“files:/copy.bin”" in result.stderr, f"a copy onto a full disk: {result.stderr}")
        no_trace("a copy")
        rpc = RPC(self.binary, coffer.container)
        rpc.initialize()
        data = base64.b64encode(self.bytes(8 << 20)).decode()
        written = 0
        while True:
            answer = rpc.call("files/write", {"path": f"/w{written}.bin", "data": data, "encoding": "base64"})
            if "error" in answer:
                break
            written += 1
            expect(written < 10, "files/write never ran out of space")
        error = answer["error"]
        expect(error["data"]["kind"] == "outOfSpace" and error["data"]["path"] == f"files:/w{written}.bin",
               f"files/write on a full disk: {error}")
        begun = rpc.call("files/upload/begin", {"path": "/up.bin"})["result"]["uploadId"]
        offset = 0
        chunk = base64.b64encode(self.bytes(4 << 20)).decode()
        while True:
            answer = rpc.call("files/upload/append", {"uploadId": begun, "offset": offset, "data": chunk})
            if "error" in answer:
                break
            offset = answer["result"]["received"]
            expect(offset < 64 << 20, "an upload never ran out of space")
        error = answer["error"]
        expect(error["data"]["kind"] == "outOfSpace" and error["data"]["path"] == "files:/up.bin",
               f"an upload on a full disk: {error}")
        expect(rpc.close() == 0, "coffer rpc did not end cleanly after the full disk")
        leftovers = partials_below(mount)
        expect(not leftovers, f"the RPC writes left partials: {leftovers[:3]}")
        expect(coffer.run("ls").returncode == 0, "the container does not reopen after the full disk")
        print(f"  disk full: imports, folder imports, copies, writes and uploads stop with the destination named; nothing left")

    def read_only_checks(self, container):
        view = os.path.join(self.work, "read-only")
        os.mkdir(view)
        subprocess.run(["mount", "--bind", container, view], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", view], check=True)
            coffer = Coffer(self.binary, view)
            listing = coffer.run("ls")
            expect(listing.returncode == 0, f"a read-only container does not open for reading: {listing.stderr}")
            result = coffer.run("mkdir New")
            expect(result.returncode == 1, "mkdir on read-only storage succeeded")
            expect("mounted read-only" in result.stderr and "Copy the item to files:" not in result.stderr,
                   f"read-only storage: {result.stderr}")
        finally:
            subprocess.run(["umount", view], check=False)
        print("  read-only storage: browsing works, changes say the storage is mounted read-only")

    # MARK: Concurrent processes

    def scenario_concurrent(self, workers=8, operations=300):
        coffer = self.container("concurrent")
        os.makedirs(coffer.files("Shared"))
        written = set()
        lock = threading.Lock()
        failures = []
        known_kinds = {"noSuchFile", "fileExists", "notADirectory", "isADirectory", "directoryNotEmpty",
                       "invalidOperation", "cancelled"}

        def worker(number, rng):
            rpc = RPC(self.binary, coffer.container)
            try:
                rpc.initialize()
                for step in range(operations):
                    folder = rng.choice(["/Shared", f"/W{number}"])
                    name = f"{folder}/n{rng.randrange(12)}.txt"
                    other = f"{rng.choice(['/Shared', f'/W{number}'])}/n{rng.randrange(12)}.txt"
                    choice = rng.randrange(9)
                    if choice == 0:
                        content = f"worker {number} step {step}\n" * rng.randrange(1, 400)
                        with lock:
                            written.add(hashlib.sha256(content.encode()).hexdigest())
                        answer = rpc.call("files/write", {"path": name, "data": content,
                                                          "conflict": rng.choice(["fail", "replace", "keepBoth"])})
                    elif choice == 1:
                        answer = rpc.call("files/copy", {"path": name, "toDirectory": rng.choice(["/Shared", f"/W{number}"])})
                    elif choice == 2:
                        answer = rpc.call("files/move", {"path": name, "toDirectory": rng.choice(["/Shared", f"/W{number}"])})
                    elif choice == 3:
                        answer = rpc.call("files/rename", {"path": name, "newName": os.path.basename(other),
                                                           "conflict": rng.choice(["fail", "keepBoth"])})
                    elif choice == 4:
                        answer = rpc.call("files/createDirectory", {"path": f"/W{number}", "intermediate": True})
                    elif choice == 5:
                        answer = rpc.call("files/trash", {"path": name})
                    elif choice == 6:
                        listing = rpc.call("trash/list")
                        items = listing.get("result", {}).get("items", [])
                        if not items:
                            continue
                        answer = rpc.call("trash/restore", {"trashId": rng.choice(items)["trashId"],
                                                            "conflict": "keepBoth"})
                    elif choice == 7:
                        answer = rpc.call("files/list", {"path": folder})
                    else:
                        answer = rpc.call("files/read", {"path": name})
                    if "error" in answer:
                        error = answer["error"]
                        kind = (error.get("data") or {}).get("kind")
                        if error.get("code") != -32803 or kind not in known_kinds:
                            failures.append(f"worker {number}: {error}")
                status = rpc.close()
                if status != 0:
                    failures.append(f"worker {number}: coffer rpc ended with status {status}")
            except Broken as broken:
                failures.append(f"worker {number}: {broken}")
                rpc.kill()

        threads = [threading.Thread(target=worker, args=(number, random.Random(self.random.random())))
                   for number in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        expect(not failures, f"concurrent processes: {failures[:3]}")
        self.check_container(coffer, "concurrent processes")
        every = list(digest_tree(coffer.files()).items()) + [(path, checksum) for path, checksum in
                                                             self.trash_contents(coffer).items()]
        for path, checksum in every:
            if checksum != "folder":
                expect(checksum in written, f"concurrent processes: {path} holds content nobody wrote")
        print(f"  concurrent processes: {workers} × {operations} operations, every answer a known outcome, no content mixed")

    # MARK: Frames

    @staticmethod
    def resident_mib(pid):
        """The process's resident memory now, in MiB (0 once it has gone)."""
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) // 1024
        except OSError:
            pass
        return 0

    def scenario_slow_reader(self, seconds=90):
        """A socket client that asks for 8 MiB reads and never reads an answer: the server
        closes its connection (64 MiB unread, then a stalled write), stays bounded in memory,
        says so on standard error, and goes on serving another client."""
        coffer = self.container("slow-reader")
        with open(coffer.files("big.bin"), "wb") as handle:
            handle.write(self.bytes(8 << 20))
        socket_path = os.path.join(self.work, "slow-reader.sock")
        server = subprocess.Popen([self.binary, "--container", coffer.container, "rpc", "--listen", f"unix:{socket_path}"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment())
        try:
            for _ in range(200):
                if os.path.exists(socket_path):
                    break
                time.sleep(0.05)
            import socket as sockets
            greedy = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
            greedy.connect(socket_path)
            greedy.settimeout(0.5)
            request = {"jsonrpc": "2.0", "method": "files/read", "params": {"path": "/big.bin", "encoding": "base64"}}
            greedy.sendall(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}).encode() + b"\n")
            closed, peak, started, number = False, 0, time.monotonic(), 0
            while time.monotonic() - started < seconds and not closed:
                number += 1
                try:
                    greedy.sendall(json.dumps(dict(request, id=number)).encode() + b"\n")
                except sockets.timeout:
                    pass  # the server reads no more from it: it waits for its answers to be read
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                peak = max(peak, self.resident_mib(server.pid))
                if not closed and number % 20 == 0:
                    # Closed by the server: a read of the socket ends, after what was sent before.
                    try:
                        greedy.setblocking(False)
                        while greedy.recv(1 << 20):
                            pass
                        closed = True
                    except (BlockingIOError, sockets.timeout):
                        pass
                    except (ConnectionResetError, OSError):
                        closed = True
                    finally:
                        greedy.settimeout(0.5)
            greedy.close()
            took = time.monotonic() - started
            expect(closed, f"slow reader: its connection was still open after {seconds} s")
            expect(peak < 640, f"slow reader: the server grew to {peak} MiB (the red team saw 1.1–1.7 GiB)")
            other = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
            other.connect(socket_path)
            other.settimeout(30)
            other.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
                          b'{"jsonrpc":"2.0","id":2,"method":"files/stat","params":{"path":"/big.bin"}}\n')
            answers = b""
            while answers.count(b"\n") < 2:
                answers += other.recv(1 << 16)
            expect(b'"size":8388608' in answers, f"slow reader: another client was not served: {answers[:300]!r}")
            other.close()
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                errors = server.communicate(timeout=30)[1].decode("utf-8", "replace")
            except subprocess.TimeoutExpired:
                server.kill()
                errors = server.communicate(timeout=60)[1].decode("utf-8", "replace")
        expect(server.returncode == 0, f"slow reader: the server ended with {server.returncode}: {errors[-500:]}")
        expect("its connection is closed" in errors, f"slow reader: no line says why the connection was closed: {errors[-500:]}")
        print(f"  slow reader: cut off after {took:.1f} s and {number} requests, the server at most {peak} MiB; "
              "another client served")

    def scenario_upload_flood(self, count=600):
        """One client begins uploads and never finishes them: past 32 it is refused with words
        that say why, and another client's work goes on (descriptors are not exhausted)."""
        coffer = self.container("upload-flood")
        greedy = RPC(self.binary, coffer.container)
        greedy.initialize()
        refused = opened = 0
        for number in range(count):
            answer = greedy.call("files/upload/begin", {"path": f"/flood-{number}.bin"})
            if "result" in answer:
                opened += 1
            else:
                expect(answer["error"]["data"]["kind"] == "tooLarge" and "32 uploads" in answer["error"]["message"],
                       f"upload flood: refused with {answer}")
                refused += 1
        expect(opened == 32 and refused == count - 32, f"upload flood: {opened} opened, {refused} refused")
        other = RPC(self.binary, coffer.container)
        other.initialize()
        begun = other.call("files/upload/begin", {"path": "/other.bin"})
        expect("result" in begun, f"upload flood: another client could not upload: {begun}")
        upload = begun["result"]["uploadId"]
        other.call("files/upload/append", {"uploadId": upload, "offset": 0, "data": base64.b64encode(b"fine").decode()})
        expect("result" in other.call("files/upload/commit", {"uploadId": upload}), "upload flood: the other upload commits")
        expect(other.close() == 0 and greedy.close() == 0, "upload flood: both end cleanly")
        leftovers = [name for name in os.listdir(os.path.join(coffer.container, "Library/Caches/Downloading"))
                     if name != "CACHEDIR.TAG"]
        expect(not leftovers, f"upload flood: the open uploads were removed at the end: {leftovers[:3]}")
        print(f"  upload flood: 32 of {count} opened, the rest refused; another client uploaded; nothing left")

    def scenario_slow_requests(self, count=200):
        """`coffer serve` while 200 connections send half a request each and stop: a request
        with the token is still answered within the request timeout (5 s) and a margin, and
        the half-requests are answered 400 and let go."""
        coffer = self.container("slow-requests")
        server = subprocess.Popen([self.binary, "--container", coffer.container, "--lang", "en", "serve", "--port", "0"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env=environment(), text=True)
        try:
            line = server.stdout.readline()
            match = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]+)", line)
            expect(match is not None, f"slow requests: no address from serve: {line!r}")
            port, token = int(match.group(1)), match.group(2)
            import socket as sockets
            slow = []
            for _ in range(count):
                connection = sockets.create_connection(("127.0.0.1", port), timeout=5)
                connection.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
                slow.append(connection)
            started = time.monotonic()
            legit = sockets.create_connection(("127.0.0.1", port), timeout=30)
            legit.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                          "Connection: close\r\n\r\n".encode())
            head = legit.recv(64)
            waited = time.monotonic() - started
            legit.close()
            expect(head.startswith(b"HTTP/1.1 200"), f"slow requests: the real request got {head!r}")
            expect(waited < 12, f"slow requests: the real request waited {waited:.1f} s")
            # The half-requests are closed by the server (its request timeout), not held forever:
            # those that waited for a worker go 5 s after they get one.
            deadline = time.monotonic() + 25
            open_ones = list(slow)
            while open_ones and time.monotonic() < deadline:
                still = []
                for connection in open_ones:
                    try:
                        connection.settimeout(0.01)
                        connection.recv(4096)  # CivetWeb's 400 for the half-request, or the end
                    except (ConnectionResetError, BrokenPipeError):
                        pass
                    except sockets.timeout:
                        still.append(connection)
                open_ones = still
                time.sleep(0.5)
            dropped = count - len(open_ones)
            for connection in slow:
                connection.close()
            expect(dropped == count, f"slow requests: {count - dropped} half-requests still held after their timeout")
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        expect(server.returncode == 0, f"slow requests: serve ended with {server.returncode}")
        print(f"  slow requests: {count} half-requests; the real one answered in {waited:.1f} s; all let go")

    def scenario_frames(self, count=10000):
        coffer = self.container("frames")
        rpc = RPC(self.binary, coffer.container)
        rpc.initialize()
        valid = [
            {"jsonrpc": "2.0", "id": 1, "method": "files/stat", "params": {"path": "files:/"}},
            {"jsonrpc": "2.0", "id": "s", "method": "files/list", "params": {"path": "/", "limit": 3}},
            {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}},
            {"jsonrpc": "2.0", "id": 2, "method": "files/read", "params": {"path": "/missing", "length": 5}},
            {"jsonrpc": "2.0", "id": 3, "method": "files/search", "params": {"pattern": "x", "limit": 2}},
        ]
        rng = self.random
        sent = 0
        for index in range(count):
            frame = self.mutated(json.dumps(rng.choice(valid)).encode(), rng)
            rpc.send_raw(frame.replace(b"\n", b" ") + b"\n")
            sent += 1
            if index % 250 == 249:
                sentinel = f"sentinel-{index}"
                rpc.send({"jsonrpc": "2.0", "id": sentinel, "method": "files/stat", "params": {"path": "/"}})
                answer = rpc.answer(sentinel, timeout=30)
                expect("result" in answer, f"frames: the server stopped answering after {sent} frames: {answer}")
        status = rpc.close(60)
        expect(status in (0, 1), f"frames: coffer rpc ended with status {status}")
        for line in rpc.lines:
            message = json.loads(line)
            for answer in message if isinstance(message, list) else [message]:
                expect(answer.get("jsonrpc") == "2.0" and ("result" in answer) != ("error" in answer),
                       f"frames: a malformed answer {answer}")
                expect(answer.get("error", {}).get("code") != -32603, f"frames: an internal error {answer}")
        expect(not any("internal error" in line for line in rpc.errors), "frames: internal errors on stderr")
        print(f"  frames: {sent} mutated frames, {len(rpc.lines)} answers, every one well-formed, no internal error")

    @staticmethod
    def mutated(frame, rng):
        choice = rng.randrange(12)
        if choice == 0:
            return frame[: rng.randrange(len(frame))]
        if choice == 1:
            data = bytearray(frame)
            for _ in range(rng.randrange(1, 6)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            return bytes(data)
        if choice == 2:
            return frame.replace(b"}", b",}", 1) if rng.random() < 0.5 else frame.replace(b"]", b",]") + b" "
        if choice == 3:
            return frame.replace(b'"files', b'"fi\tles', 1)
        if choice == 4:
            depth = rng.choice([10, 600, 5000])
            return b'{"jsonrpc":"2.0","id":9,"method":"files/stat","params":{"path":' + b"[" * depth + b"]" * depth + b"}}"
        if choice == 5:
            number = rng.choice([b"1.0", b"18446744073709551616", b"-0", b"1e999", b"01", b"1.", b"NaN", b"true"])
            return frame.replace(b'"id": 1', b'"id": ' + number, 1)
        if choice == 6:
            return frame.replace(b"files", bytes([0xC3, 0x28]), 1)
        if choice == 7:
            return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        if choice == 8:
            return b"[" + b",".join([frame] * rng.randrange(0, 5)) + b"]"
        if choice == 9:
            return rng.choice([b"{}", b"[]", b"[{}]", b"null", b"5", b'"x"', b'{"jsonrpc":"2.0","method":5}',
                               b'{"foo":"boo"}', b'{"jsonrpc":"2.0","id":{},"method":"files/stat"}'])
        if choice == 10:
            return frame.replace(b'"files:/"', b'"' + b"a" * rng.choice([300, 70000]) + b'"', 1)
        return frame.replace(b'"params": {', b'"params": {"extra": [1, {"x": null}], ', 1)


def quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def unquote(text):
    from urllib.parse import unquote as percent_decoded
    return percent_decoded(text)


SCENARIOS = ["copy", "folder_copy", "replace", "folder_replace", "version_restore", "undo", "import", "trash", "trash_info",
             "restore", "write", "upload",
             "download_resume", "cache_bounds", "disk_full", "concurrent", "frames", "slow_reader", "upload_flood",
             "slow_requests"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--coffer", default=".build/debug/coffer")
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randrange(1 << 32))
    parser.add_argument("--rounds", type=int, default=15, help="kill -9 rounds per operation")
    parser.add_argument("--only", nargs="*", choices=SCENARIOS, default=SCENARIOS)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    arguments = parser.parse_args()
    print(f"fault suite: seed {arguments.seed} (replay with --seed {arguments.seed})", flush=True)
    started = time.monotonic()
    suite = Suite(arguments)
    try:
        for name in arguments.only:
            getattr(suite, "scenario_" + name)()
            sys.stdout.flush()
    except Broken as broken:
        print(f"fault suite: FAILED: {broken}\nreplay with: python3 FaultSuite/faults.py --seed {arguments.seed}"
              f" --only {name}", file=sys.stderr)
        return 1
    finally:
        if not arguments.keep:
            shutil.rmtree(suite.work, ignore_errors=True)
    print(f"fault suite: every invariant held ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
