"""`coffer mount` of an S3 mount (issue 54) against the real Ceph RGW, cross-checked with boto3: files written
through the mount are the objects boto3 reads, and objects boto3 writes are the files the mount shows. A new
file, an append, a truncating save, rsync -a in and diff -r, tar both ways, rm -r as one trash item; a save
over a change made meanwhile elsewhere keeps both; one version per save, none of an empty file; opens of one
file share its copy, which follows a rename and is dropped by a delete; the local check's programs (git,
SQLite in WAL mode with two writers, nvim, an office suite's save, stress-ng and fio). Faults:
kill -9 while a file's upload is under way, then the next mount sends what was left; a store that stops
answering gives EIO after --timeout, never a hang.

Usage: mount_s3_check.py COFFER   (COFFER_TEST_S3_ENDPOINT names the RGW)"""
import hashlib
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import boto3
from botocore.config import Config

import serve_support
import mount_check
from mount_check import mounted, run

check = serve_support.checker("mount_s3_check")
ENDPOINT = os.environ.get("COFFER_TEST_S3_ENDPOINT", "")
os.environ.setdefault("AWS_ACCESS_KEY_ID", os.environ.get("COFFER_TEST_S3_ACCESS_KEY", "test:tester"))
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", os.environ.get("COFFER_TEST_S3_SECRET_KEY", "testing"))


def client():
    return boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))


def Mount(coffer, container, point, bucket, endpoint=None, *extra):
    """`coffer mount POINT --mount b=s3://BUCKET --mount b` (the service's options read after `mount` too)."""
    return mount_check.Mount(coffer, container, point, "--mount", f"b=s3://{bucket}", "--s3-endpoint", endpoint or ENDPOINT,
                             "--mount", "b", *extra)


def coffer_lines(coffer, container, bucket, command):
    done = subprocess.run([coffer, "--container", container, "--lang", "en", "--mount", f"b=s3://{bucket}", "--s3-endpoint", ENDPOINT,
                           "-c", command], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return done.stdout.splitlines()


def body(s3, bucket, key):
    try:
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except s3.exceptions.NoSuchKey:
        return None


def keys(s3, bucket, prefix=""):
    listed = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(item["Key"] for page in listed for item in page.get("Contents", []) if not item["Key"].startswith(".Versions"))


def files(coffer, container, s3, bucket, point):
    s3.put_object(Bucket=bucket, Key="Shelf/existing.txt", Body=b"remote v1\n")
    with open(os.path.join(point, "Shelf", "existing.txt"), "rb") as handle:
        check(handle.read() == b"remote v1\n", "an object boto3 put is read through the mount")

    new = os.path.join(point, "新 note.txt")
    with open(new, "w") as handle:
        handle.write("hello\n")
        handle.flush()
        check(os.path.exists(new), "a new file is there while it is still being written")
    check(body(s3, bucket, "新 note.txt") == b"hello\n", "a new file is the object boto3 reads once it is closed")
    with open(os.path.join(point, "empty"), "w"):
        pass
    check(body(s3, bucket, "empty") == b"", "an empty new file (touch) is an empty object")

    existing = os.path.join(point, "Shelf", "existing.txt")
    with open(existing, "a") as handle:
        handle.write("more\n")
    check(body(s3, bucket, "Shelf/existing.txt") == b"remote v1\nmore\n", "an append reaches the object")
    with open(existing, "w") as handle:
        handle.write("saved anew\n")
    check(body(s3, bucket, "Shelf/existing.txt") == b"saved anew\n", "a truncating save reaches the object")
    versions = [line for line in coffer_lines(coffer, container, bucket, "versions b:/Shelf/existing.txt") if line[:1].isdigit()]
    check(len(versions) == 2, f"each save kept what it replaced as one version, none of an empty file ({versions})")
    check(not [line for line in coffer_lines(coffer, container, bucket, "versions b:/新 note.txt") if line[:1].isdigit()],
          "a new file has no version of its empty start")

    # An fsync sends what was written so far; the file stays open and writable.
    with open(os.path.join(point, "log.txt"), "w") as handle:
        handle.write("one\n")
        handle.flush()
        os.fsync(handle.fileno())
        check(body(s3, bucket, "log.txt") == b"one\n", "fsync sends what was written so far")
        handle.write("two\n")
    check(body(s3, bucket, "log.txt") == b"one\ntwo\n", "and the close what came after")

    # Truncated while open: the copy is cut, not the bucket's object (which a new file does not have yet).
    with open(os.path.join(point, "cut.txt"), "w") as handle:
        handle.write("hello")
        handle.flush()
        os.ftruncate(handle.fileno(), 0)
        handle.seek(0)
        handle.write("x")
    check(body(s3, bucket, "cut.txt") == b"x", "a new file truncated while open is sent as cut")

    # Changed meanwhile elsewhere: both are kept, nothing lost.
    shared = os.path.join(point, "shared.txt")
    s3.put_object(Bucket=bucket, Key="shared.txt", Body=b"first\n")
    with open(shared, "r+") as handle:
        handle.read()
        s3.put_object(Bucket=bucket, Key="shared.txt", Body=b"changed by boto3\n")
        handle.seek(0)
        handle.write("changed through the mount\n")
    names = keys(s3, bucket, "shared")
    kept = [body(s3, bucket, name) for name in names]
    check(b"changed by boto3\n" in kept and b"changed through the mount\n" in kept and len(names) == 2,
          f"a save over a change made elsewhere keeps both ({names})")


def trees(coffer, container, s3, bucket, point, work):
    source = os.path.join(work, "tree")
    os.makedirs(os.path.join(source, "子 folder", "deeper"))
    for index in range(40):
        with open(os.path.join(source, "子 folder", f"file {index}.txt"), "w") as handle:
            handle.write(f"line {index}\n" * (index + 1))
    with open(os.path.join(source, "子 folder", "deeper", "random.bin"), "wb") as handle:
        handle.write(random.Random(54).randbytes(3 << 20))
    open(os.path.join(source, "empty file"), "w").close()
    run(["rsync", "-rt", source + "/", os.path.join(point, "tree")], "rsync copies a tree into the S3 mount")
    run(["diff", "-r", source, os.path.join(point, "tree")], "diff -r finds it equal through the mount")
    check(hashlib.sha256(body(s3, bucket, "tree/子 folder/deeper/random.bin")).hexdigest()
          == hashlib.sha256(open(os.path.join(source, "子 folder", "deeper", "random.bin"), "rb").read()).hexdigest(),
          "the 3 MiB file is the object boto3 reads")
    archive = os.path.join(work, "tree.tar")
    run(["tar", "-cf", archive, "-C", point, "tree"], "tar reads the tree from the mount")
    run(["tar", "-xf", archive, "-C", point, "--transform", "s/^tree/untarred/"], "and writes it back under another name")
    run(["diff", "-r", source, os.path.join(point, "untarred")], "the round trip is equal")
    before = trash_names(coffer, container, bucket)
    run(["rm", "-r", os.path.join(point, "untarred")], "rm -r of the tree")
    deadline = time.monotonic() + 20
    while "b/untarred" not in trash_names(coffer, container, bucket) and time.monotonic() < deadline:
        time.sleep(0.3)
    added = [name for name in trash_names(coffer, container, bucket) if name not in before]
    check(added == ["b/untarred"], f"rm -r leaves one folder in the trash ({added})")
    # (The trash lists the folder as its move begins; the bucket's keys follow as it ends.)
    while keys(s3, bucket, "untarred/") and time.monotonic() < deadline:
        time.sleep(0.3)
    check(not keys(s3, bucket, "untarred/"), "and the bucket no longer lists it")
    coffer_lines(coffer, container, bucket, "restore b/untarred")
    deadline = time.monotonic() + 10
    while not os.path.isdir(os.path.join(point, "untarred")) and time.monotonic() < deadline:
        time.sleep(0.3)
    run(["diff", "-r", source, os.path.join(point, "untarred")], "restored, the folder is whole again")


def programs(coffer, container, bucket, point, work):
    """The programs of the local check on the S3 mount: git clone and fsck, rsync -a and tar (a
    smaller tree: each file is a few requests to the store), SQLite in WAL mode with two writers
    (each commit's fsync sends the log whole), nvim, an office suite's save, and the stressors."""
    mount_check.programs(point, work, tree_files=30, rows=50)

    mount_check.editor(point, coffer, container, lambda name: versions(coffer, container, bucket, name))

    before = trash_names(coffer, container, bucket)
    document = os.path.join(point, "report.odt")
    with open(document, "wb") as made:
        made.write(b"first draft")
    temporary = os.path.join(point, "lu4242abc.tmp")
    with open(temporary, "wb") as made:
        made.write(b"second draft")
        made.flush()
        os.fsync(made.fileno())
        made.write(b", whole")
    os.rename(temporary, document)
    check(len(versions(coffer, container, bucket, "report.odt")) == 1, "an office suite's save over the document keeps one version")
    # (What the programs above deleted may reach the trash meanwhile: a deletion is held a moment.)
    added = [name for name in trash_names(coffer, container, bucket) if name not in before]
    check(not [name for name in added if "report" in name or "lu4242" in name], f"and puts nothing in the trash ({added})")
    # (The store keeps no user.* attributes: stress-ng skips --xattr there. An fsync sends a
    # copy whole, so fio syncs once at the end.)
    mount_check.stressors(point, [name for name in mount_check.STRESSORS if name != "xattr"], fio_size="8M", fio_fsync=0)


def versions(coffer, container, bucket, name):
    return [line for line in coffer_lines(coffer, container, bucket, f"versions b:/{name}") if line[:1].isdigit()]


def open_copies(coffer, container, s3, bucket, point):
    """Every open of a file written through a copy shares the copy: a second program opens a new file
    not yet sent, and reads what the first wrote; a file renamed or deleted while open is sent
    where it went, or nowhere."""
    first = os.open(os.path.join(point, "shared copy.txt"), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(first, b"written by one")
    with open(os.path.join(point, "shared copy.txt"), "rb") as second:
        check(second.read() == b"written by one", "a second open of a new file not yet sent reads what the first wrote")
    listed = os.listdir(point)
    check(listed.count("shared copy.txt") == 1, f"a new file not yet sent is in its folder's listing, once ({sorted(listed)})")
    sizes = {entry.name: entry.stat().st_size for entry in os.scandir(point)}
    check(sizes.get("shared copy.txt") == 14, f"and the listing's attributes give its size as written ({sizes})")
    os.close(first)
    s3.put_object(Bucket=bucket, Key="appended while open.txt", Body=b"stored\n")
    appending = os.open(os.path.join(point, "appended while open.txt"), os.O_WRONLY | os.O_APPEND)
    os.write(appending, b"and more, not yet sent\n")
    listed = [(entry.name, entry.stat().st_size) for entry in os.scandir(point) if entry.name == "appended while open.txt"]
    check(listed == [("appended while open.txt", 30)],
          f"a stored file with changes not yet sent is listed once, as it is now ({listed})")
    os.close(appending)

    kept = os.open(os.path.join(point, "temporary.123"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(kept, b"begun ")
    os.rename(os.path.join(point, "temporary.123"), os.path.join(point, "renamed while open.txt"))
    os.write(kept, b"and finished")
    os.close(kept)
    check(body(s3, bucket, "renamed while open.txt") == b"begun and finished" and body(s3, bucket, "temporary.123") is None,
          "a file renamed while open is sent whole under its new name only")

    # A big file (sent in parts) renamed while open, then written: the store's copy of it has another
    # ETag, which the open copy takes as its own, so the close replaces it rather than keeping both.
    big = random.Random(20).randbytes(20 << 20)
    s3.put_object(Bucket=bucket, Key="big before.bin", Body=b"")
    with open(os.path.join(point, "big before.bin"), "r+b") as handle:
        handle.write(big)
        handle.flush()
        os.fsync(handle.fileno())
        os.rename(os.path.join(point, "big before.bin"), os.path.join(point, "big after.bin"))
        handle.write(b"tail")
    check(body(s3, bucket, "big after.bin") == big + b"tail" and keys(s3, bucket, "big") == ["big after.bin"],
          f"a 20 MiB file renamed while open is sent to its new name, replacing it ({keys(s3, bucket, 'big')})")
    s3.delete_object(Bucket=bucket, Key="big after.bin")

    os.mkdir(os.path.join(point, "folder before"))
    inside = os.open(os.path.join(point, "folder before", "new.txt"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(inside, b"in a folder ")
    os.rename(os.path.join(point, "folder before"), os.path.join(point, "folder after"))
    os.write(inside, b"renamed around it")
    os.close(inside)
    check(body(s3, bucket, "folder after/new.txt") == b"in a folder renamed around it" and not keys(s3, bucket, "folder before"),
          "a new file in a folder renamed while it is open is sent whole into the folder's new name")

    gone = os.open(os.path.join(point, "deleted while open"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(gone, b"x" * 100)
    os.unlink(os.path.join(point, "deleted while open"))
    os.write(gone, b"written after the unlink")
    os.close(gone)
    # (A deletion is held a moment, so that a folder emptied by rm -r goes to the trash whole.)
    deadline = time.monotonic() + 20
    while body(s3, bucket, "deleted while open") is not None and time.monotonic() < deadline:
        time.sleep(0.3)
    time.sleep(1)
    check(body(s3, bucket, "deleted while open") is None, "a file deleted while open does not come back when it is closed")
    check("b/deleted while open" in trash_names(coffer, container, bucket), "what it held when deleted is in the trash")


def big_folder(s3, bucket, point):
    """A folder of 2,500 objects (three pages of ListObjectsV2) lists whole through the mount, each name
    once, as boto3 lists it, with each file's size."""
    import concurrent.futures
    names = [f"item {index:04d} 条.txt" for index in range(2_500)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda name: s3.put_object(Bucket=bucket, Key="Big/" + name, Body=b"x" * (int(name[5:9]) % 7)), names))
    listed = os.listdir(os.path.join(point, "Big"))
    check(sorted(listed) == sorted(names), f"a folder of 2,500 objects lists whole through the mount ({len(listed)} names)")
    sizes = {entry.name: entry.stat().st_size for entry in os.scandir(os.path.join(point, "Big"))}
    check(all(sizes.get(name) == int(name[5:9]) % 7 for name in names), "with each file's size")
    with open(os.path.join(point, "Big", names[-1]), "rb") as last:
        check(last.read() == b"x" * (2_499 % 7), "and the last page's files read as stored")


def trash_names(coffer, container, bucket):
    return [line.split("  ")[0] for line in coffer_lines(coffer, container, bucket, "trash") if "  " in line]


def killed(coffer, container, s3, bucket, point):
    """kill -9 while a big file is being sent, and while another is written but not yet closed: the next mount
    sends both, each once."""
    data = random.Random(9).randbytes(48 << 20)
    mount = Mount(coffer, container, point, bucket)
    unsent = os.open(os.path.join(point, "unsent.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.write(unsent, data[:1 << 20])
    path = os.path.join(point, "big.bin")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.write(descriptor, data)
    syncing = threading.Thread(target=lambda: _ignore(lambda: os.fsync(descriptor)))
    syncing.start()
    time.sleep(0.3)
    mount.stop(signal.SIGKILL)
    syncing.join(timeout=60)
    _ignore(lambda: os.close(descriptor))
    _ignore(lambda: os.close(unsent))
    check(not syncing.is_alive(), "a program waiting on the killed mount is let go")
    mount = Mount(coffer, container, point, bucket)
    deadline = time.monotonic() + 120
    while (body(s3, bucket, "big.bin") != data or body(s3, bucket, "unsent.bin") is None) and time.monotonic() < deadline:
        time.sleep(0.5)
    check(body(s3, bucket, "big.bin") == data, "after kill -9 the next mount sends the file being sent, whole")
    check(body(s3, bucket, "unsent.bin") == data[:1 << 20], "and the file written but not closed")
    check(keys(s3, bucket, "big") == ["big.bin"] and keys(s3, bucket, "unsent") == ["unsent.bin"],
          f"each once ({keys(s3, bucket, 'big') + keys(s3, bucket, 'unsent')})")
    with open(path, "rb") as handle:
        check(hashlib.sha256(handle.read()).digest() == hashlib.sha256(data).digest(), "and reads it back through the mount")
    check(mount.stop() == 0 and not mounted(point), "and unmounts cleanly")
    uploads = os.path.join(container, "Library", "Caches", "Downloading")
    check(not [name for name in os.listdir(uploads) if name.startswith("mount-")], "no copy is left on disk once sent")


def _ignore(body):
    try:
        body()
    except OSError:
        pass


def silent_store(coffer, container, point):
    """An S3 endpoint that accepts connections and never answers: calls fail with EIO after --timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []
    stop = threading.Event()

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
        mount = Mount(coffer, container, point, "silent", endpoint, "--timeout", "3")
        started = time.monotonic()
        done = subprocess.run(["ls", point], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        took = time.monotonic() - started
        check(done.returncode != 0 and "Input/output error" in done.stderr and took < 20,
              f"a store that does not answer gives EIO after the timeout ({took:.1f} s: {done.stderr.strip()})")
        started = time.monotonic()
        status = mount.stop()
        took = time.monotonic() - started
        check(status == 0 and not mounted(point) and took < 30, f"and the mount still ends cleanly, in {took:.1f} s")
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


def main():
    coffer = sys.argv[1]
    if not (os.path.exists("/dev/fuse") and os.geteuid() == 0):
        raise SystemExit("mount_s3_check: it needs /dev/fuse and root")
    if not ENDPOINT:
        raise SystemExit("mount_s3_check: set COFFER_TEST_S3_ENDPOINT to a running RGW")
    s3 = client()
    bucket = "mount-" + uuid.uuid4().hex[:12]
    s3.create_bucket(Bucket=bucket)
    work = tempfile.mkdtemp(prefix="coffer-mount-s3-check-")
    container, point = os.path.join(work, "container"), os.path.join(work, "mnt")
    os.makedirs(point)
    mount = Mount(coffer, container, point, bucket)
    try:
        files(coffer, container, s3, bucket, point)
        open_copies(coffer, container, s3, bucket, point)
        big_folder(s3, bucket, point)
        trees(coffer, container, s3, bucket, point, work)
        programs(coffer, container, bucket, point, work)
    finally:
        if mount.process.poll() is None:
            status = mount.stop()
            check(status == 0 and not mounted(point), f"SIGTERM unmounts and ends coffer mount ({status})")
        else:
            print(open(mount.log.name).read())
    killed(coffer, container, s3, bucket, point)
    silent_store(coffer, container, point)
    subprocess.run(["rm", "-rf", work], timeout=300)


if __name__ == "__main__":
    main()
