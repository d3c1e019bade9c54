#!/usr/bin/env python3
"""Runs one step of CI under a time limit, and fails it with evidence when it hangs or leaves
anything running.

    python3 .ci/step.py [--keep] NAME SECONDS -- COMMAND [ARGUMENT ...]

The command runs in a session of its own, with `COFFER_CI_STEP=NAME` in its environment: its
children inherit it, and the test harness gives it (with `COFFER_TEST_CHILD`) to whatever it
starts, even with an environment of its own, so a process that left the session (a daemon) is
still found. Then:

- when it overruns SECONDS, the step prints the process tree of everything it started and the
  thread stacks (`gdb -batch`) of the test processes and of every `coffer` among them, ends them
  all (SIGTERM, then SIGKILL after a grace), and fails with status 124;
- when it ends, anything it started that is still running (in its session, or marked in its
  environment) is printed, ended, and fails the step, whatever the command's own status;
- a SIGTERM or SIGINT to this runner ends the step's processes the same way before it goes.

`--keep` is for a step that starts a server the later steps need (the Ceph RGW): what it leaves
running is allowed, and only its time is limited.

`timeout` alone would not do: it ends the command, but not what the command started in other
process groups (the test harness gives each child a group of its own).
"""
import os
import signal
import subprocess
import sys
import time

GRACE = 5            # seconds between SIGTERM and SIGKILL
STACK_LIMIT = 6      # processes whose thread stacks are printed on a hang


def read(path, binary=False):
    try:
        with open(path, "rb") as file:
            data = file.read()
        return data if binary else data.decode("utf-8", "replace")
    except OSError:
        return b"" if binary else ""


def stat_fields(pid):
    """(state, ppid, pgid, session) of `pid`, or None when it is gone."""
    text = read(f"/proc/{pid}/stat")
    if not text:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[2]), int(fields[3])


def belongs(pid, session, step):
    """Whether `pid` was started by this step: in its session, or carrying its marks."""
    fields = stat_fields(pid)
    if fields is None or fields[0] in ("Z", "X"):
        return False
    if fields[3] == session:
        return True
    environment = read(f"/proc/{pid}/environ", binary=True).split(b"\0")
    return f"COFFER_CI_STEP={step}".encode() in environment


def members(session, step):
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me and belongs(int(name), session, step):
            found.append(int(name))
    return sorted(found)


def show_tree(pids):
    if not pids:
        return
    listing = subprocess.run(["ps", "-o", "pid,ppid,pgid,sid,etime,stat,args", "-p", ",".join(map(str, pids))],
                             capture_output=True, text=True, timeout=30)
    print(listing.stdout, end="", flush=True)


def show_stacks(pids):
    """Thread stacks of the test processes (`*.xctest`) and `coffer` processes among `pids`."""
    def command(pid):
        return read(f"/proc/{pid}/cmdline").replace("\0", " ")

    def program(pid):
        return read(f"/proc/{pid}/cmdline").split("\0")[0]
    chosen = [pid for pid in pids if program(pid).endswith(".xctest")]
    chosen += [pid for pid in pids if pid not in chosen and os.path.basename(program(pid)) == "coffer"]
    for pid in chosen[:STACK_LIMIT]:
        print(f"---- thread stacks of {pid}: {command(pid)[:200]}", flush=True)
        try:
            stacks = subprocess.run(["gdb", "-batch", "-nx", "-p", str(pid), "-ex", "thread apply all bt"],
                                    capture_output=True, text=True, timeout=120)
            print("\n".join(line for line in stacks.stdout.splitlines() if line.startswith(("Thread", "#"))), flush=True)
        except (OSError, subprocess.TimeoutExpired) as error:
            print(f"(gdb could not read it: {error})", flush=True)


def running(pid):
    fields = stat_fields(pid)
    return fields is not None and fields[0] not in "ZX"


def end(pids, session, step):
    """SIGTERM, then SIGKILL after the grace, to each of `pids`; then again to whatever of the
    step is still found (started meanwhile), until nothing is."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline and any(running(pid) for pid in pids):
        time.sleep(0.1)
    for _ in range(10):
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)
        pids = members(session, step)
        if not pids:
            return


def main():
    arguments = sys.argv[1:]
    keep = arguments[:1] == ["--keep"]
    if keep:
        arguments = arguments[1:]
    if len(arguments) < 4 or arguments[2] != "--":
        sys.exit("usage: step.py [--keep] NAME SECONDS -- COMMAND [ARGUMENT ...]")
    step, limit, command = arguments[0], float(arguments[1]), arguments[3:]
    print(f"==== step {step} (at most {int(limit)} s): {' '.join(command)}", flush=True)
    began = time.monotonic()
    started = {}

    def interrupted(number, frame):
        print(f"==== step {step}: interrupted by signal {number}; ending what it started", flush=True)
        if "child" in started:
            session = started["child"].pid
            left = members(session, step)
            show_tree(left)
            end(left + [session], session, step)
        sys.exit(128 + number)
    # Caught before the command starts: a signal in between still ends what it started.
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    child = subprocess.Popen(command, start_new_session=True, env=dict(os.environ, COFFER_CI_STEP=step))
    started["child"] = child
    session = child.pid

    try:
        status = child.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        print(f"==== step {step} FAILED: still running after {int(limit)} s. What it started:", flush=True)
        left = members(session, step)
        show_tree(left)
        show_stacks(left)
        end(left + [child.pid], session, step)
        child.wait(timeout=60)
        sys.exit(124)

    # Whatever it started is meant to be gone by now; a moment for processes on their way out.
    deadline = time.monotonic() + 3
    left = [] if keep else members(session, step)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = members(session, step)
    elapsed = time.monotonic() - began
    if left:
        print(f"==== step {step} FAILED: it ended (status {status}) after {elapsed:.0f} s, "
              f"but left {len(left)} process(es) running:", flush=True)
        show_tree(left)
        end(left, session, step)
        sys.exit(status or 1)
    print(f"==== step {step}: status {status} after {elapsed:.0f} s", flush=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
