"""`coffer mount` (issue 54) checked with the programs people run in a folder: Python's own file calls,
git (clone, then fsck), rsync -a and diff -r, tar both ways, SQLite in WAL mode with two writing processes, an
office suite's save (a temporary file renamed over the document) and an editor's truncating save, each
through a mount started as a user starts it. Coffer's meaning underneath: what is deleted is in the trash,
editors' scratch files are not, what a save replaces is one version. A change made beside the mount is
seen at once, though the kernel may trust its cache for a minute. Ending: SIGTERM and `fusermount3 -u`
unmount cleanly; after `kill -9`, the next `coffer mount` takes the dead mount point over.

Usage: mount_check.py COFFER"""
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import serve_support

check = serve_support.checker("mount_check")


def mounted(point):
    with open("/proc/self/mounts") as mounts:
        return any(line.split()[1] == point for line in mounts)


class Mount:
    """`coffer mount POINT` in the foreground, as a user runs it; ready when it says so."""

    def __init__(self, coffer, container, point, *extra):
        self.point = point
        self.log = tempfile.NamedTemporaryFile(prefix="coffer-mount-", suffix=".log", delete=False)
        self.process = subprocess.Popen([coffer, "--container", container, "--lang", "en", "mount", point, *extra],
                                        stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        if "mounted at" not in line or not mounted(point):
            self.process.kill()
            self.process.wait(timeout=30)
            raise SystemExit(f"mount_check: FAILED: coffer mount did not start: {line!r} {open(self.log.name).read()}")

    def stop(self, number=signal.SIGTERM):
        self.process.send_signal(number)
        return self.process.wait(timeout=60)

    def errors(self):
        return open(self.log.name).read()


def coffer_json(coffer, container, command):
    run = subprocess.run([coffer, "--container", container, "--lang", "en", "-c", command], capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    return json.loads(run.stdout)


def trash_names(coffer, container):
    """The names in the trash, as `trash` lists them (a name, then two spaces and where it was)."""
    listed = subprocess.run([coffer, "--container", container, "--lang", "en", "-c", "trash"], capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL).stdout
    return [line.split("  ")[0] for line in listed.splitlines() if "  " in line]


def in_trash(coffer, container, name, expected=True):
    """Whether `name` is in the trash within 10 s (a deletion is held a moment, so `rm -r` leaves one folder)."""
    deadline = time.monotonic() + 10
    while True:
        found = name in trash_names(coffer, container)
        if found == expected or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def run(arguments, what, cwd=None, timeout=300):
    done = subprocess.run(arguments, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, cwd=cwd)
    check(done.returncode == 0, what if done.returncode == 0 else f"{what}: {done.stderr[-600:]}")
    return done.stdout


def basics(coffer, container, point, files):
    name = os.path.join(point, "笔记 notes.txt")
    with open(name, "w") as made:
        made.write("第一版\n")
    with open(os.path.join(files, "笔记 notes.txt")) as stored:
        check(stored.read() == "第一版\n", "a file written through the mount is Coffer's file")
    os.makedirs(os.path.join(point, "a/b/c"))
    check(os.path.isdir(os.path.join(files, "a/b/c")), "folders made through the mount are Coffer's")
    with open(os.path.join(point, "a/b/c/data.bin"), "wb") as made:
        made.write(os.urandom(3 << 20))
    check(os.path.getsize(os.path.join(point, "a/b/c/data.bin")) == 3 << 20, "a 3 MiB file has its size")
    os.rename(os.path.join(point, "a/b/c/data.bin"), os.path.join(point, "a/data.bin"))
    check(os.path.exists(os.path.join(files, "a/data.bin")) and not os.path.exists(os.path.join(files, "a/b/c/data.bin")),
          "a rename moves the file")
    check(sorted(os.listdir(os.path.join(point, "a"))) == ["b", "data.bin"], "a listing shows what is there")
    with open(os.path.join(point, "a/data.bin"), "r+b") as changed:
        changed.seek(1 << 20)
        changed.write(b"in place")
    with open(os.path.join(files, "a/data.bin"), "rb") as stored:
        stored.seek(1 << 20)
        check(stored.read(8) == b"in place", "a write at an offset changes the file in place")
    try:
        os.rmdir(os.path.join(point, "a"))
        check(False, "rmdir of a folder with files fails")
    except OSError as error:
        check(error.errno == 39, f"rmdir of a folder with files fails with ENOTEMPTY ({error.errno})")
    # A link in Coffer's folder that leads out of it is not followed through the mount; one inside is.
    os.symlink("/etc/passwd", os.path.join(files, "out"))
    os.symlink("a/data.bin", os.path.join(files, "inside"))
    try:
        open(os.path.join(point, "out")).read()
        check(False, "a link that leads out is not followed through the mount")
    except OSError as error:
        check(error.errno == 13, f"a link that leads out is not followed through the mount (errno {error.errno})")
    check(os.readlink(os.path.join(point, "inside")) == "a/data.bin" and os.path.getsize(os.path.join(point, "inside")) == 3 << 20,
          "a link inside the mount is followed")
    # ln -s through the mount: a link that stays inside is made, one that would lead out is refused.
    os.symlink("../a/data.bin", os.path.join(point, "a", "made link"))
    check(os.readlink(os.path.join(files, "a", "made link")) == "../a/data.bin"
          and os.path.getsize(os.path.join(point, "a", "made link")) == 3 << 20, "ln -s makes a link that stays inside")
    # Two links that each look inside would climb out together: `up` leads to `..`, `up/../..` from there.
    os.symlink("..", os.path.join(point, "a", "up"))
    for target in ["/etc/passwd", "../../etc/passwd", "up/../.."]:
        try:
            os.symlink(target, os.path.join(point, "a", "escape"))
            check(False, f"ln -s {target} is refused")
        except OSError as error:
            check(error.errno == 13 and not os.path.lexists(os.path.join(files, "a", "escape")),
                  f"ln -s {target} is refused with EACCES and makes nothing (errno {error.errno})")
    try:
        os.symlink("data.bin", os.path.join(point, "a", "made link"))
        check(False, "ln -s over an existing name is refused")
    except OSError as error:
        check(error.errno == 17, f"ln -s over an existing name is refused with EEXIST ({error.errno})")
    os.remove(os.path.join(point, "a", "up"))
    os.remove(os.path.join(point, "a", "made link"))
    check(in_trash(coffer, container, "made link"), "a link deleted through the mount is in the trash")

    # Deleting goes to the trash; an editor's lock file is deleted for good.
    os.remove(name)
    check(not os.path.exists(name), "a deleted file is gone from the mount at once")
    check(in_trash(coffer, container, "笔记 notes.txt"), "a file deleted through the mount is in the trash")
    lock = os.path.join(point, ".~lock.report.odt#")
    with open(lock, "w") as made:
        made.write("me,host\n")
    os.remove(lock)
    time.sleep(2)
    check(not in_trash(coffer, container, ".~lock.report.odt#", expected=False)
          and not os.path.exists(os.path.join(files, os.path.basename(lock))),
          "an office suite's lock file is deleted for good, not put in the trash")

    # rm -r of a 1,000-file tree leaves one restorable folder in the trash.
    for folder in ["Project/src/深", "Project/docs"]:
        os.makedirs(os.path.join(point, folder))
    for index in range(1000):
        with open(os.path.join(point, ["Project", "Project/src/深", "Project/docs"][index % 3], f"part {index}.txt"), "w") as made:
            made.write(str(index) * index)
    run(["rm", "-r", os.path.join(point, "Project")], "rm -r removes a tree")
    check(not os.path.exists(os.path.join(point, "Project")), "the tree is gone from the mount")
    check(in_trash(coffer, container, "Project"), "rm -r leaves the folder in the trash")
    names = trash_names(coffer, container)
    check(not any(name.startswith("part ") for name in names) and names.count("Project") == 1,
          f"as one item, not one per file: {names}")
    run([coffer, "--container", container, "-c", "restore Project"], "restore puts the folder back")
    restored = sum(len(names) for _, _, names in os.walk(os.path.join(point, "Project")))
    check(restored == 1000, f"with everything that was in it, seen through the mount ({restored} files)")

    # user.* attributes are Coffer's attributes, user.xdg.tags its tags.
    tagged = os.path.join(point, "Project/docs/part 2.txt")
    os.setxattr(tagged, "user.xdg.tags", b"work,urgent")
    shown = subprocess.run([coffer, "--container", container, "-c", "tag 'Project/docs/part 2.txt' +later"], capture_output=True,
                           text=True, timeout=120).stdout
    check("work" in shown and "urgent" in shown, f"tags set through the mount are Coffer's tags: {shown!r}")
    check(os.getxattr(tagged, "user.xdg.tags") == b"work,urgent,later", "and tags set by Coffer are read through the mount")
    os.setxattr(tagged, "user.comment", "评论".encode())
    check(os.getxattr(tagged, "user.comment") == "评论".encode() and "user.comment" in os.listxattr(tagged),
          "a user attribute is kept and listed")
    os.removexattr(tagged, "user.comment")
    check("user.comment" not in os.listxattr(tagged), "and removed")


def saves(coffer, container, point, files):
    """An office suite's save (a new file renamed over the document) and an editor's truncating
    save each keep the replaced content as one version, and put nothing in the trash."""
    before = len(trash_names(coffer, container))
    document = os.path.join(point, "report.odt")
    with open(document, "wb") as made:
        made.write(b"first draft")
    temporary = os.path.join(point, "lu4242abc.tmp")
    with open(temporary, "wb") as made:
        made.write(b"second draft")
    os.rename(temporary, document)
    versions = coffer_json(coffer, container, "versions --json report.odt")["versions"]
    check(len(versions) == 1 and versions[0]["frontEnd"] == "mount" and versions[0]["size"] == len(b"first draft"),
          f"an office suite's save over the document keeps one version: {versions}")
    with open(document, "wb") as made:
        made.write(b"third draft, longer")
    versions = coffer_json(coffer, container, "versions --json report.odt")["versions"]
    check(len(versions) == 2, f"a truncating save keeps the replaced content as one version: {versions}")
    with open(os.path.join(files, "report.odt"), "rb") as stored:
        check(stored.read() == b"third draft, longer", "the document holds what was saved last")
    check(len(trash_names(coffer, container)) == before, "and nothing went to the trash")


def programs(point, work, tree_files=200, rows=300):
    """git, rsync, tar and SQLite work in the mount as on a disk (`tree_files` copied by rsync
    and tar, `rows` inserted by each of two SQLite writers)."""
    source = os.path.join(work, "repository")
    git = ["git", "-c", "user.name=Coffer CI", "-c", "user.email=ci@coffer.invalid"]
    run(git + ["init", "-q", source], "git init")
    for index in range(1, 6):
        os.makedirs(os.path.join(source, "目录", str(index)), exist_ok=True)
        with open(os.path.join(source, "目录", str(index), f"file {index}.bin"), "wb") as made:
            made.write(os.urandom(index * 40_000))
        run(git + ["-C", source, "add", "-A"], "git add")
        run(git + ["-C", source, "commit", "-q", "-m", f"commit {index}"], "git commit")
    clone = os.path.join(point, "clone")
    run(["git", "clone", "-q", source, clone], "git clones a repository into the mount")
    run(["git", "-C", clone, "fsck", "--full", "--strict"], "git fsck finds the clone whole")
    log = run(["git", "-C", clone, "log", "--oneline"], "git log").splitlines()
    check(len(log) == 5, f"with its five commits: {log}")

    tree = os.path.join(work, "tree")
    for folder in ["x", "x/深 层", "y"]:
        os.makedirs(os.path.join(tree, folder), exist_ok=True)
    for index in range(tree_files):
        with open(os.path.join(tree, ["x", "x/深 层", "y"][index % 3], f"f{index:03d} 文件.txt"), "wb") as made:
            made.write(os.urandom(index * 37))
    open(os.path.join(tree, "empty"), "w").close()
    run(["rsync", "-a", tree + "/", os.path.join(point, "synced") + "/"], "rsync -a copies a tree in")
    run(["diff", "-r", tree, os.path.join(point, "synced")], "diff -r finds it equal through the mount")
    run(["tar", "-C", work, "-cf", os.path.join(point, "tree.tar"), "tree"], "tar writes an archive into the mount")
    os.makedirs(os.path.join(point, "unpacked"))
    run(["tar", "-C", os.path.join(point, "unpacked"), "-xf", os.path.join(point, "tree.tar")], "tar unpacks it there")
    run(["diff", "-r", tree, os.path.join(point, "unpacked", "tree")], "diff -r finds the unpacked tree equal")

    database = os.path.join(point, "notes.sqlite")
    connection = sqlite3.connect(database)
    mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    connection.execute("CREATE TABLE notes (writer INTEGER, n INTEGER)")
    connection.commit()
    connection.close()
    check(mode == "wal", f"SQLite takes WAL mode in the mount ({mode})")
    writer = ("import sqlite3, sys\n"
              "c = sqlite3.connect(sys.argv[1], timeout=60)\n"
              "for n in range(int(sys.argv[3])):\n"
              "    c.execute('INSERT INTO notes VALUES (?, ?)', (int(sys.argv[2]), n)); c.commit()\n")
    writers = [subprocess.Popen([sys.executable, "-c", writer, database, str(number), str(rows)]) for number in (1, 2)]
    codes = [process.wait(timeout=300) for process in writers]
    connection = sqlite3.connect(database)
    count = connection.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
    integrity = connection.execute("PRAGMA integrity_check").fetchone()[0]
    connection.close()
    check(codes == [0, 0] and count == 2 * rows and integrity == "ok",
          f"two processes write SQLite in WAL mode at once: {count} rows, {integrity}")


def editor(point, coffer, container, versions_of=None):
    """Neovim edits a file in the mount and writes it: its swap file beside the file, and the file renamed
    aside as a backup (`edited.txt~`) while the new one is written, then deleted: it becomes a version.
    `versions_of(name)` lists a file's versions (default: of `files:`)."""
    if versions_of is None:
        versions_of = lambda name: coffer_json(coffer, container, f"versions --json {name}")["versions"]
    text = os.path.join(point, "edited.txt")
    with open(text, "w") as made:
        made.write("first line\n")
    done = subprocess.run(["nvim", "--headless", "--clean", "-c", "set directory=. backupcopy=no writebackup",
                           "-c", "normal Gosecond line", "-c", "wq", text], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, cwd=point)
    with open(text) as written:
        content = written.read()
    check(done.returncode == 0 and content == "first line\nsecond line\n", f"nvim edits and writes a file in the mount: {content!r}")
    versions = versions_of("edited.txt")
    check(len(versions) == 1, f"its write keeps what the file held as one version: {versions}")
    check(not any(name.endswith((".swp", "~")) for name in os.listdir(point)), "and leaves no swap file or backup behind")


STRESSORS = ["dir", "rename", "flock", "fcntl", "xattr", "fallocate", "seek", "hdd"]


def stressors(point, names=STRESSORS, fio_size="32M", fio_fsync=64):
    """stress-ng's file-system stressors with --verify, and fio writing with crc32c checks (an
    `fsync` every `fio_fsync` writes, 0 for one at the end)."""
    folder = os.path.join(point, "stress")
    os.makedirs(folder)
    for stressor in names:
        done = subprocess.run(["stress-ng", f"--{stressor}", "1", f"--{stressor}-ops", "200", "--verify", "--timeout", "20s",
                               "--temp-path", folder], capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL, cwd=folder)
        check(done.returncode == 0 and "successful run completed" in done.stderr + done.stdout,
              f"stress-ng --{stressor} --verify passes" if done.returncode == 0 else f"stress-ng --{stressor}: {(done.stderr + done.stdout)[-800:]}")
    syncs = [f"--fsync={fio_fsync}"] if fio_fsync else ["--end_fsync=1"]
    done = subprocess.run(["fio", "--name=coffer", f"--directory={folder}", f"--size={fio_size}", "--rw=randwrite", "--bs=4k",
                           "--verify=crc32c", "--do_verify=1", "--ioengine=psync", "--numjobs=2", *syncs],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, cwd=folder)
    check(done.returncode == 0 and "err= 0" in done.stdout and "verify" not in done.stderr,
          "fio writes at random with crc32c checks, every block read back right" if done.returncode == 0 else f"fio: {done.stdout[-800:]} {done.stderr[-800:]}")
    run(["rm", "-rf", folder], "the stressors' files are removed")


def listings(point, files):
    """A big folder is read as the kernel asks, a batch at a time: every name once, and again after a rewind."""
    big = os.path.join(files, "big folder")
    os.makedirs(big)
    names = {f"entry {index:05d} 条目" for index in range(20_000)}
    for name in names:
        open(os.path.join(big, name), "w").close()
    shown = os.listdir(os.path.join(point, "big folder"))
    check(len(shown) == len(names) and set(shown) == names, f"a folder of {len(names)} entries lists each once ({len(shown)})")
    descriptor = os.open(os.path.join(point, "big folder"), os.O_RDONLY | os.O_DIRECTORY)
    try:
        # os.listdir of a descriptor rewinds it first: the second pass starts over.
        first, second = os.listdir(descriptor), os.listdir(descriptor)
        check(sorted(first) == sorted(second) == sorted(names), "read again from its start, it lists the same")
    finally:
        os.close(descriptor)
    head = subprocess.run(f"ls -f '{os.path.join(point, 'big folder')}' | head -3", shell=True, capture_output=True,
                          text=True, timeout=120)
    check(len(head.stdout.splitlines()) == 3, "a listing left after its first names ends cleanly")
    shutil.rmtree(big)


def fresh(coffer, container, point, files):
    """Changes made elsewhere reach the kernel's caches at once, even when it may trust them for a minute."""
    mount = Mount(coffer, container, point, "--cache-timeout", "60")
    try:
        os.makedirs(os.path.join(point, "fresh"))
        for name in ["grows.txt", "goes.txt"]:
            with open(os.path.join(point, "fresh", name), "w") as handle:
                handle.write("hello\n")
        with open(os.path.join(point, "fresh", "grows.txt")) as handle:
            handle.read()
        os.stat(os.path.join(point, "fresh", "goes.txt"))
        time.sleep(2.5)   # what the mount itself changed is the kernel's own for two seconds
        with open(os.path.join(files, "fresh", "grows.txt"), "a") as handle:
            handle.write("more, written beside the mount\n")
        subprocess.run([coffer, "--container", container, "-c", "rm fresh/goes.txt"], capture_output=True, timeout=120,
                       stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (os.stat(os.path.join(point, "fresh", "grows.txt")).st_size == 6
                                               or os.path.exists(os.path.join(point, "fresh", "goes.txt"))):
            time.sleep(0.1)
        with open(os.path.join(point, "fresh", "grows.txt")) as handle:
            check(handle.read() == "hello\nmore, written beside the mount\n",
                  "a file changed beside the mount is read anew at once, with --cache-timeout 60")
        check(not os.path.exists(os.path.join(point, "fresh", "goes.txt")), "a file another front end deleted is gone at once")

        # The kernel keeps a file's pages from one open to the next only while the file is as it
        # was read or as the mount's own writes left it. Changed beside the mount within the two
        # seconds in which no notification is sent (the mount wrote it), with the same size and
        # its old modification time put back, it is still read anew at the next open.
        kept = os.path.join(point, "fresh", "kept.txt")
        with open(kept, "w") as handle:
            handle.write("written through the mount\n")
        with open(kept) as handle:
            check(handle.read() == "written through the mount\n", "a file written through the mount reads back")
        beside = os.path.join(files, "fresh", "kept.txt")
        before = os.stat(beside)
        with open(beside, "r+") as handle:
            handle.write("WRITTEN")
        os.utime(beside, ns=(before.st_atime_ns, before.st_mtime_ns))
        with open(kept) as handle:
            check(handle.read() == "WRITTEN through the mount\n",
                  "a same-size change beside the mount, its time put back, is read at the next open")
    finally:
        check(mount.stop() == 0 and not mounted(point), "that mount ends cleanly too")


def main():
    coffer = sys.argv[1]
    if not (os.path.exists("/dev/fuse") and os.geteuid() == 0):
        raise SystemExit("mount_check: it needs /dev/fuse and root")
    work = tempfile.mkdtemp(prefix="coffer-mount-check-")
    container, point = os.path.join(work, "container"), os.path.join(work, "mnt")
    os.makedirs(point)
    subprocess.run([coffer, "--container", container, "-c", "ls"], check=True, capture_output=True, timeout=120)
    files = os.path.join(container, "Documents", "UserFiles")
    mount = Mount(coffer, container, point)
    try:
        basics(coffer, container, point, files)
        saves(coffer, container, point, files)
        programs(point, work)
        editor(point, coffer, container)
        listings(point, files)
        stressors(point)
    finally:
        if mount.process.poll() is None:
            status = mount.stop()
            check(status == 0 and not mounted(point), f"SIGTERM unmounts and ends coffer mount ({status})")
        else:
            print(mount.errors())

    fresh(coffer, container, point, files)

    # Unmounted from outside, coffer mount ends by itself.
    mount = Mount(coffer, container, point)
    run(["fusermount3", "-u", point], "fusermount3 -u unmounts it")
    check(mount.process.wait(timeout=60) == 0, "and coffer mount ends with status 0")

    # Killed, it leaves a dead mount point; the next mount takes it over.
    mount = Mount(coffer, container, point)
    mount.stop(signal.SIGKILL)
    mount = Mount(coffer, container, point)
    check(os.path.exists(os.path.join(point, "report.odt")), "after kill -9 the next coffer mount serves the folder again")
    check(mount.stop() == 0 and not mounted(point), "and unmounts cleanly")
    subprocess.run(["rm", "-rf", work], timeout=300)


if __name__ == "__main__":
    main()
