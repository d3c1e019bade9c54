#!/usr/bin/env python3
"""Thumbnails of a folder of photos: `coffer -c 'ls --thumbnails photos'` beside libvips' own
`vipsthumbnail` on the same files, then what a listing with thumbnails costs once they are made.

Usage: thumbnails.py COFFER_BINARY WORK_DIR [--photos N] [--rounds N] [--quick]

  cold      the thumbnail cache emptied before each round: Coffer makes 128-pixel PNGs of N
            JPEGs of 12 megapixels (4000 x 3000), as many at once as there are cores, into its
            freedesktop cache; `vipsthumbnail -s 128 -o tn_%s.png` makes the same from the
            same files (one process, as a user runs it). Goal: Coffer at least as fast (>= 1.0).
  warm      `ls --thumbnails photos` once every thumbnail is current, beside a plain `ls photos`.
            Goal: no more than 5 % slower.
  start-up  `coffer -c pwd` and the shared libraries it maps (LD_DEBUG), beside `preview` of a
            photo: libvips is loaded only when a preview needs it. Goal: under 15 ms.

The photos are one generated JPEG (shapes and noise, about 2.4 MB) copied N times; the page
cache is warm for both sides. Medians over the rounds, the two sides taking turns.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time


def option(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def make_photo(path):
    """A 4000 x 3000 JPEG with the detail of a photo, made by libvips' command line."""
    work = os.path.dirname(path)
    steps = [
        ["vips", "gaussnoise", f"{work}/noise.v", "4000", "3000", "--sigma", "40", "--mean", "128"],
        ["vips", "xyz", f"{work}/xyz.v", "4000", "3000"],
        ["vips", "extract_band", f"{work}/xyz.v", f"{work}/x.v", "0"],
        ["vips", "linear", f"{work}/x.v", f"{work}/ramp.v", "0.06", "0"],
        ["vips", "add", f"{work}/noise.v", f"{work}/ramp.v", f"{work}/mixed.v"],
        ["vips", "bandjoin", f"{work}/mixed.v {work}/noise.v {work}/ramp.v", f"{work}/rgb.v"],
        ["vips", "cast", f"{work}/rgb.v", f"{work}/rgb8.v", "uchar"],
        ["vips", "gaussblur", f"{work}/rgb8.v", f"{work}/soft.v", "0.8"],
        ["vips", "copy", f"{work}/soft.v", f"{path}[Q=90]"],
    ]
    for step in steps:
        subprocess.run(step, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for name in ("noise", "xyz", "x", "ramp", "mixed", "rgb", "rgb8", "soft"):
        os.remove(f"{work}/{name}.v")


def timed(argv, env, setup=None):
    if setup:
        setup()
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def libraries(argv, env):
    """The shared objects a run maps, as the dynamic loader reports them."""
    result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(env, LD_DEBUG="files"),
                            text=True, errors="replace")
    return {line.split("file=")[1].split()[0] for line in result.stderr.splitlines()
            if "file=" in line and "[0];  needed by" not in line}


def main():
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    quick = "--quick" in sys.argv
    count = option("--photos", 50 if quick else 200)
    rounds = option("--rounds", 3 if quick else 5)
    env = dict(os.environ, LANG="C.UTF-8", NO_COLOR="1", HOME=work)
    os.makedirs(work, exist_ok=True)
    container = os.path.join(work, "thumbnails-container")
    shutil.rmtree(container, ignore_errors=True)
    subprocess.run([coffer, "--container", container, "-c", "mkdir photos"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    photos = os.path.join(container, "Documents", "UserFiles", "photos")
    source = os.path.join(work, "photo-12mp.jpg")
    if not os.path.exists(source):
        make_photo(source)
    for index in range(count):
        shutil.copyfile(source, os.path.join(photos, f"IMG_{index:04d}.jpg"))
    files = sorted(os.path.join(photos, name) for name in os.listdir(photos))
    cache = os.path.join(container, "Library", "Caches", "Thumbnails")
    reference_out = os.path.join(work, "vipsthumbnail-out")

    def empty_cache():
        for sub in ("normal", "fail"):
            shutil.rmtree(os.path.join(cache, sub), ignore_errors=True)

    def empty_reference():
        shutil.rmtree(reference_out, ignore_errors=True)
        os.makedirs(reference_out)

    listing = [coffer, "--container", container, "-c", "ls photos"]
    with_thumbnails = [coffer, "--container", container, "-c", "ls --thumbnails photos"]
    reference = ["vipsthumbnail", "-s", "128", "-o", os.path.join(reference_out, "tn_%s.png")] + files

    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(timed(with_thumbnails, env, empty_cache))
        theirs.append(timed(reference, env, empty_reference))
    made = len([name for name in os.listdir(os.path.join(cache, "normal")) if name.endswith(".png")])
    if made != count or len(os.listdir(reference_out)) != count:
        raise SystemExit(f"expected {count} thumbnails, Coffer made {made}")

    plain, warm = [], []
    for _ in range(rounds * 6):
        plain.append(timed(listing, env))
        warm.append(timed(with_thumbnails, env))

    startup = [timed([coffer, "--container", container, "-c", "pwd"], env) for _ in range(rounds * 6)]
    at_start = libraries([coffer, "--container", container, "-c", "pwd"], env)
    previewing = libraries([coffer, "--container", container, "-c", "preview photos/IMG_0000.jpg"], env)

    ours_m, theirs_m = statistics.median(ours), statistics.median(theirs)
    plain_m, warm_m = statistics.median(plain), statistics.median(warm)
    print(f"thumbnails of {count} JPEGs of 12 megapixels, 128 px, {os.cpu_count()} cores; medians of {rounds} rounds")
    print(f"  cold  coffer ls --thumbnails {ours_m:7.3f} s   vipsthumbnail {theirs_m:7.3f} s   "
          f"ratio vipsthumbnail/coffer time {theirs_m / ours_m:.2f}  (goal >= 1.0: {'met' if theirs_m >= ours_m else 'NOT met'})")
    overhead = warm_m / plain_m - 1
    print(f"  warm  ls --thumbnails {warm_m * 1000:7.1f} ms   ls {plain_m * 1000:7.1f} ms   "
          f"overhead {overhead * 100:+.1f} %  (goal <= 5 %: {'met' if overhead <= 0.05 else 'NOT met'})")
    startup_m = statistics.median(startup)
    vips_at_start = any("libvips" in name for name in at_start)
    print(f"  start-up coffer -c pwd {startup_m * 1000:.1f} ms, {len(at_start)} shared objects"
          f"{' (libvips among them!)' if vips_at_start else ', no libvips'}; preview maps {len(previewing)}"
          f"  (goal < 15 ms: {'met' if startup_m < 0.015 and not vips_at_start else 'NOT met'})")


if __name__ == "__main__":
    main()
