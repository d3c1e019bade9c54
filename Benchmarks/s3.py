#!/usr/bin/env python3
"""Coffer's S3 mount beside boto3 on the same S3 server (a Ceph RGW here).

    PYTHON_WITH_BOTO3 Benchmarks/s3.py BINARY WORKDIR [--endpoint URL] [--size MIB] [--objects N] [--rounds N]

Three figures, each Coffer and boto3 alternating in one run, medians printed with the
ratio boto3 time / Coffer time (above 1: Coffer is faster):
- upload: `coffer -c 'cp big.bin b:/'` against boto3's transfer manager (`upload_file`);
- download: `coffer -c 'cp b:/big.bin back.bin'` against `download_file`;
- listing: `coffer -c 'ls b:/Many'` (10,000 objects) against a paginated
  `list_objects_v2` with the `/` delimiter;
and the peak resident memory of Coffer's upload and download (the download's goal: < 60 MiB).
Keys come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (default: the test server's).
"""
import argparse, os, shutil, statistics, subprocess, sys, time, uuid
from concurrent.futures import ThreadPoolExecutor

import boto3
from boto3.s3.transfer import TransferConfig

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("workdir")
parser.add_argument("--endpoint", default=os.environ.get("AWS_ENDPOINT_URL", "http://127.0.0.1:18480"))
parser.add_argument("--size", type=int, default=1024, help="MiB")
parser.add_argument("--objects", type=int, default=10_000)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--ceph-conf", help="the test cluster's ceph.conf: deleted objects are collected between rounds")
args = parser.parse_args()

os.environ.setdefault("AWS_ACCESS_KEY_ID", "test:tester")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
s3 = boto3.client("s3", endpoint_url=args.endpoint, region_name="us-east-1")
bucket = "coffer-bench-" + uuid.uuid4().hex[:8]
s3.create_bucket(Bucket=bucket)

work = os.path.abspath(args.workdir)
shutil.rmtree(work, ignore_errors=True)
container = os.path.join(work, "container")
files = os.path.join(container, "Documents", "UserFiles")
binary = os.path.abspath(args.binary)
env = dict(os.environ, LC_ALL="C.UTF-8")


peaks = {}  # command → the peak resident memory of each run, in MiB
# The peak is read by a small Python of its own that runs coffer: a child forked from this
# process (boto3 loaded) would inherit this one's high-water mark.
PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def coffer(command):
    started = time.perf_counter()
    answer = subprocess.run(["python3", "-c", PEAK, binary, "--container", container, "--mount", f"b=s3://{bucket}",
                             "--s3-endpoint", args.endpoint, "-c", command], env=env, capture_output=True, text=True)
    code, peak = answer.stdout.split()
    assert code == "0", f"coffer -c {command!r} exited with {code}: {answer.stderr}"
    peaks.setdefault(command, []).append(int(peak) / 1024)
    return time.perf_counter() - started


def timed(body):
    started = time.perf_counter()
    body()
    return time.perf_counter() - started


def delete(key):
    s3.delete_object(Bucket=bucket, Key=key)


def cold(body):
    """Runs `body` with Coffer's content cache emptied: the upload before kept the file there,
    and a download from the disk would measure neither the network nor the read-ahead."""
    cache = os.path.join(container, "Library", "Caches", "Remote")
    for name in os.listdir(cache) if os.path.isdir(cache) else []:
        if name != "CACHEDIR.TAG":
            os.remove(os.path.join(cache, name))
    return body()


def collect():
    """RGW frees deleted objects' data hours later; the test cluster keeps it in 2 GiB of memory."""
    if args.ceph_conf:
        subprocess.run(["radosgw-admin", "-c", args.ceph_conf, "gc", "process", "--include-all"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


coffer("ls")  # makes the container
big = os.path.join(files, "big.bin")
with open(big, "wb") as out:
    block = os.urandom(1 << 20)
    for _ in range(args.size):
        out.write(block)
back = os.path.join(files, "back.bin")
config = TransferConfig()  # boto3's defaults: 8 MiB parts, 10 threads

results = {"upload": ([], []), "download": ([], []), "listing": ([], [])}
# Coffer makes a download durable before it appears (fdatasync, then rename); boto3 does
# not, so its download is timed again with an fsync, as Benchmarks/bench.py times `cp && sync`.
synced = []


def download_synced(target):
    s3.download_file(bucket, "coffer.bin", target, Config=config)
    with open(target, "rb+") as file:
        os.fsync(file.fileno())


# The test server keeps objects in memory (Ceph's memstore, 2 GiB): one big object at a time.
for round in range(args.rounds):
    results["upload"][1].append(timed(lambda: s3.upload_file(big, bucket, "boto3.bin", Config=config)))
    delete("boto3.bin")
    collect()
    results["upload"][0].append(coffer("cp big.bin b:/coffer.bin"))
    # Both download the object Coffer wrote, to files removed after, taking turns at going
    # first: on this machine the second of two back-to-back gigabytes is often the slower.
    downloads = [lambda: results["download"][1].append(timed(lambda: s3.download_file(bucket, "coffer.bin", back + ".boto3",
                                                                                      Config=config))),
                 lambda: results["download"][0].append(cold(lambda: coffer("cp b:/coffer.bin back.bin")))]
    for download in (downloads if round % 2 == 0 else reversed(downloads)):
        download()
    synced.append(timed(lambda: download_synced(back + ".synced")))
    os.remove(back + ".synced")
    assert os.path.getsize(back) == os.path.getsize(big) == os.path.getsize(back + ".boto3")
    assert open(back, "rb").read(1 << 20) == open(big, "rb").read(1 << 20)
    os.remove(back)
    os.remove(back + ".boto3")
    delete("coffer.bin")
    collect()

# Listing: 10,000 small objects in one folder, written with boto3 from 16 threads.
with ThreadPoolExecutor(16) as pool:
    list(pool.map(lambda i: s3.put_object(Bucket=bucket, Key=f"Many/file {i:05}.txt", Body=b"x"), range(args.objects)))


def boto3_listing():
    names = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="Many/", Delimiter="/"):
        names += [item["Key"] for item in page.get("Contents", [])]
    assert len(names) == args.objects


for round in range(args.rounds + 2):
    results["listing"][1].append(timed(boto3_listing))
    results["listing"][0].append(coffer("ls b:/Many"))

with ThreadPoolExecutor(16) as pool:
    list(pool.map(delete, [f"Many/file {i:05}.txt" for i in range(args.objects)]))
s3.delete_bucket(Bucket=bucket)
print(f"S3 on {args.endpoint}, {args.size} MiB file, {args.objects} objects, {args.rounds} rounds (medians)")
print(f"{'':10} {'coffer':>10} {'boto3':>10} {'boto3/coffer':>13}")
for name, (mine, theirs) in results.items():
    a, b = statistics.median(mine), statistics.median(theirs)
    extra = f"   {args.size / a:.0f} vs {args.size / b:.0f} MiB/s" if name != "listing" else ""
    print(f"{name:10} {a * 1000:8.0f} ms {b * 1000:8.0f} ms {b / a:12.2f}×{extra}")
    if name == "download":
        c = statistics.median(synced)
        print(f"{'  +fsync':10} {'':11} {c * 1000:8.0f} ms {c / a:12.2f}×   boto3 with an fsync of the file, as Coffer does")
for command in ("cp big.bin b:/coffer.bin", "cp b:/coffer.bin back.bin"):
    print(f"peak RSS of coffer -c '{command}': {statistics.median(peaks[command]):.0f} MiB (median; goal < 60 MiB for the download)")
