#!/usr/bin/env python3
"""Many small files: 20,000 one-byte files in 20 folders, as an independent tester timed them.

  import      `coffer import DIR --into /`            beside `cp -r DIR DEST && sync`
  copy        `coffer cp -r Small 'Small copy'`      beside `cp -r SRC DEST && sync` in the same folder
  empty-trash `coffer rm Small`, then `empty-trash` timed (the folder's 20,000 files deleted for good),
              beside `rm -rf` of a copy of the folder

Each is run `--rounds` times (default 3) on fresh copies, the sides taking turns at going first; medians
are printed, with Coffer's speed as a share of the reference's (goal ≥ 0.8×; empty-trash under 2 s).

Usage: small_files.py COFFER_BINARY WORK_DIR [--rounds N] [--files N]
"""
import os
import shutil
import statistics
import subprocess
import sys
import time


def timed(command, **options):
    # What earlier steps left dirty is written first, outside the time: each side pays for its own writes.
    subprocess.run(["sync"], check=True)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **options)
    return time.perf_counter() - started


def main():
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    count = int(sys.argv[sys.argv.index("--files") + 1]) if "--files" in sys.argv else 20_000
    source = os.path.join(work, "small-source", "Small")
    if not os.path.isdir(source) or sum(len(files) for _, _, files in os.walk(source)) != count:
        shutil.rmtree(os.path.dirname(source), ignore_errors=True)
        for index in range(count):
            folder = os.path.join(source, f"part{index % 20:02d}")
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"file{index:05d}.txt"), "wb") as out:
                out.write(b"x")
    subprocess.run(["sync"], check=True)
    environment = dict(os.environ, LC_ALL="C.UTF-8")
    times = {"import": [], "cp-sync": [], "copy": [], "cp-sync-inside": [], "empty-trash": [], "rm-rf": []}
    for round_number in range(rounds):
        container = os.path.join(work, "small-container")
        shutil.rmtree(container, ignore_errors=True)
        reference = os.path.join(work, "small-reference")
        shutil.rmtree(reference, ignore_errors=True)
        os.makedirs(reference)
        subprocess.run([coffer, "--container", container, "-c", "pwd"], check=True, stdout=subprocess.DEVNULL, env=environment)
        subprocess.run(["sync"], check=True)
        # The two sides take turns at going first: on this machine whatever runs right after a
        # round's removals is often the slower.
        def both(first, second):
            for step in ((first, second) if round_number % 2 == 0 else (second, first)):
                step()

        inside = os.path.join(container, "Documents", "UserFiles")
        both(lambda: times["import"].append(timed([coffer, "--container", container, "--no-recents", "-c",
                                                   f"import '{source}' --into /"], env=environment)),
             lambda: times["cp-sync"].append(timed(["sh", "-c", f"cp -r '{source}' '{reference}/Small' && sync"])))
        both(lambda: times["copy"].append(timed([coffer, "--container", container, "-c", "cp -r Small 'Small copy'"],
                                                env=environment)),
             lambda: times["cp-sync-inside"].append(timed(["sh", "-c", f"cp -r '{inside}/Small' '{inside}/Small reference' && sync"])))
        subprocess.run([coffer, "--container", container, "-c", "rm 'Small copy' 'Small reference'; empty-trash --yes; rm Small"],
                       check=True, stdout=subprocess.DEVNULL, env=environment)
        times["empty-trash"].append(timed([coffer, "--container", container, "-c", "empty-trash --yes"], env=environment))
        shutil.rmtree(reference, ignore_errors=True)
        shutil.copytree(source, reference)
        times["rm-rf"].append(timed(["rm", "-rf", reference]))
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"{count:,} one-byte files in 20 folders, medians of {rounds} rounds")
    print(f"  import       {median['import']:6.2f} s   cp -r && sync {median['cp-sync']:6.2f} s   "
          f"speed {median['cp-sync'] / median['import']:.2f}× (goal ≥ 0.8×)")
    print(f"  cp -r        {median['copy']:6.2f} s   cp -r && sync {median['cp-sync-inside']:6.2f} s   "
          f"speed {median['cp-sync-inside'] / median['copy']:.2f}× (goal ≥ 0.8×)")
    print(f"  empty-trash  {median['empty-trash']:6.2f} s   rm -rf        {median['rm-rf']:6.2f} s   "
          f"(a folder of {count:,} files; goal < 2 s)")


if __name__ == "__main__":
    main()
