#!/usr/bin/env python3
"""What reliability costs: restoring beside trashing, and start-up with recovery.

Usage: recovery.py COFFER_BINARY WORK_DIR [--before OLD_BINARY] [--quick]

  restore   coffer -c 'restore f000 … f499' beside coffer -c 'cd T; rm f000 … f499' (500 files,
            by name). Goal: restoring costs no more than twice trashing.
  startup   coffer -c pwd on an existing container: with nothing to recover, and with ten journals
            of killed processes to settle (ten folders each, one partial in each folder).

With --before, a build of an earlier commit runs the same commands in the same run, alternating
with the current one, so the machine's load falls on both alike. Medians are printed.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

ENV = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
COUNT = 500


def run(binary, container, script):
    started = time.perf_counter()
    subprocess.run([binary, "--container", container, "-c", script], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=ENV, check=True)
    return time.perf_counter() - started


def restore_round(binary, container):
    files = os.path.join(container, "Documents", "UserFiles", "T")
    shutil.rmtree(os.path.join(container, "Library", "Trash"), ignore_errors=True)
    shutil.rmtree(files, ignore_errors=True)
    os.makedirs(files)
    for index in range(COUNT):
        with open(os.path.join(files, f"f{index:03d}"), "w") as handle:
            handle.write("x")
    names = " ".join(f"f{index:03d}" for index in range(COUNT))
    subprocess.run(["sync"], check=True)
    trashing = run(binary, container, "cd T; rm " + names)
    subprocess.run(["sync"], check=True)
    restoring = run(binary, container, "restore " + names)
    return trashing, restoring


def leave_dead_journals(container, journals=10, folders=10):
    """What ten killed processes leave: a journal each, naming folders with one partial in each."""
    user_files = os.path.join(container, "Documents", "UserFiles")
    journal_folder = os.path.join(container, "Library", "Application Support", "AppData", "Journal")
    os.makedirs(journal_folder, exist_ok=True)
    for journal in range(journals):
        owner = f"{0xdead0000 + journal:08x}"
        lines = []
        for folder in range(folders):
            name = f"J{journal}-{folder}"
            os.makedirs(os.path.join(user_files, "Busy", name), exist_ok=True)
            with open(os.path.join(user_files, "Busy", name, f".coffer-partial-{owner}-1"), "w") as handle:
                handle.write("half")
            lines.append('{"root":"%s","folder":["Busy","%s"]}' % (user_files, name))
        with open(os.path.join(journal_folder, owner + ".journal"), "w") as handle:
            handle.write("\n".join(lines) + "\n")


def main():
    binary, work = sys.argv[1], sys.argv[2]
    before = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
    runs = 3 if "--quick" in sys.argv else 7
    builds = [("current", binary)] + ([("before", before)] if before else [])
    os.makedirs(work, exist_ok=True)

    print(f"restore vs trash, {COUNT} files by name, medians of {runs}")
    results = {label: [] for label, _ in builds}
    for _ in range(runs):
        for label, program in builds:
            container = os.path.join(work, "restore-" + label)
            results[label].append(restore_round(program, container))
    for label, _ in builds:
        trashing = statistics.median(t for t, _ in results[label])
        restoring = statistics.median(r for _, r in results[label])
        print(f"  {label:8} trash {trashing * 1000:8.1f} ms   restore {restoring * 1000:8.1f} ms   "
              f"restore/trash {restoring / trashing:5.2f}  (goal <= 2)")

    print(f"start-up, coffer -c pwd on an existing container, medians of {runs * 5}")
    for label, program in builds:
        container = os.path.join(work, "startup-" + label)
        run(program, container, "pwd")
    quiet = {label: [] for label, _ in builds}
    settling = {label: [] for label, _ in builds}
    for _ in range(runs * 5):
        for label, program in builds:
            container = os.path.join(work, "startup-" + label)
            quiet[label].append(run(program, container, "pwd"))
            leave_dead_journals(container)
            settling[label].append(run(program, container, "pwd"))
    for label, _ in builds:
        print(f"  {label:8} nothing to recover {statistics.median(quiet[label]) * 1000:6.1f} ms   "
              f"ten dead journals (100 folders) {statistics.median(settling[label]) * 1000:6.1f} ms")
    if before:
        ratio = statistics.median(quiet["current"]) / statistics.median(quiet["before"])
        print(f"  start-up current/before with nothing to recover: {ratio:.2f}")


if __name__ == "__main__":
    main()
