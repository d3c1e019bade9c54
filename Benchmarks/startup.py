#!/usr/bin/env python3
"""Time from launch to the first prompt in a real terminal, Coffer beside bash.

Usage: startup.py COFFER_BINARY WORK_DIR [--quick]

  coffer    `coffer --container DIR` on an existing container with a full history (1,000 lines)
  bash      `bash --norc --noprofile -i`, also on GNU readline (reference)

Each program starts on a fresh pseudo-terminal; the clock stops when its prompt has been
written. Goal: under 50 ms for Coffer (median).
"""
import os
import pty
import select
import statistics
import subprocess
import sys
import time


def time_to_prompt(argv, prompt, env, runs):
    times = []
    for _ in range(runs):
        master, slave = pty.openpty()
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
                                   start_new_session=True)
        os.close(slave)
        seen = b""
        while prompt not in seen:
            ready, _, _ = select.select([master], [], [], 10)
            if not ready:
                raise SystemExit(f"no prompt from {argv[0]} after 10 s; saw {seen!r}")
            seen += os.read(master, 4096)
        times.append(time.perf_counter() - start)
        os.write(master, b"\x04")  # Ctrl-D
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        os.close(master)
    return statistics.median(times), min(times), max(times)


def main():
    coffer, work = sys.argv[1], sys.argv[2]
    runs = 10 if "--quick" in sys.argv else 30
    container = os.path.join(work, "container")
    env = dict(os.environ, LANG="C.UTF-8", TERM="xterm", NO_COLOR="1", HOME=work)
    env.pop("LC_ALL", None)
    subprocess.run([coffer, "--container", container, "-c", "pwd"], stdout=subprocess.DEVNULL, check=True, env=env)
    history = os.path.join(container, "Library", "Application Support", "AppData", "history")
    with open(history, "w") as file:
        file.writelines(f"ls -l folder{i}\n" for i in range(1000))

    coffer_time = time_to_prompt([coffer, "--container", container], b"files:/> ", env, runs)
    bash_env = dict(env, PS1="bash$ ")
    bash_time = time_to_prompt(["bash", "--norc", "--noprofile", "-i"], b"bash$ ", bash_env, runs)

    print("startup to first prompt (pseudo-terminal)")
    for label, (median, low, high) in [("coffer", coffer_time), ("bash", bash_time)]:
        print(f"  {label:<9} median {median*1000:7.1f} ms  (min {low*1000:.1f}, max {high*1000:.1f})")
    print(f"  ratio coffer/bash time: {coffer_time[0]/bash_time[0]:.2f}")
    print(f"  goal: coffer under 50 ms -> {'met' if coffer_time[0] < 0.050 else 'NOT met'}")


if __name__ == "__main__":
    main()
