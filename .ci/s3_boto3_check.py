#!/usr/bin/env python3
"""Coffer's S3 mount cross-checked with boto3 on the same server.

    .ci/venv/bin/python .ci/s3_boto3_check.py BINARY

Objects Coffer writes are read back byte for byte by boto3 and its folders are prefixes
(markers for empty ones), with rclone's mtime header; objects boto3 writes, with keys of
spaces, Chinese, `+`, `%`, decomposed accents and a very long key, are listed, read,
copied and moved by Coffer; `user.` attributes travel as object metadata both ways, and what S3
cannot hold is reported. Needs COFFER_TEST_S3_ENDPOINT (and the test keys).
"""
import owned  # every process this check starts is ended with it (.ci/owned.py)
import os, subprocess, sys, tempfile, unicodedata, uuid

import boto3

endpoint = os.environ["COFFER_TEST_S3_ENDPOINT"]
keys = {"AWS_ACCESS_KEY_ID": os.environ.get("COFFER_TEST_S3_ACCESS_KEY", "test:tester"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("COFFER_TEST_S3_SECRET_KEY", "testing")}
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id=keys["AWS_ACCESS_KEY_ID"], aws_secret_access_key=keys["AWS_SECRET_ACCESS_KEY"])
bucket = "coffer-boto3-" + uuid.uuid4().hex[:8]
s3.create_bucket(Bucket=bucket)
binary = os.path.abspath(sys.argv[1])
work = tempfile.mkdtemp(prefix="coffer-boto3-")
container = os.path.join(work, "container")
files = os.path.join(container, "Documents", "UserFiles")
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def coffer(command):
    result = subprocess.run([binary, "--container", container, "--mount", f"b=s3://{bucket}", "--s3-endpoint", endpoint,
                             "-c", command], env=dict(os.environ, LC_ALL="C.UTF-8", **keys), capture_output=True, text=True)
    check(result.returncode == 0, f"coffer -c {command!r}: {result.stderr.strip()}")
    return result.stdout


def body(key):
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()


# Coffer writes: a folder with a small file, one in parts (over 16 MiB) and an empty folder.
coffer("ls")
os.makedirs(os.path.join(files, "Project", "Deep"))
os.makedirs(os.path.join(files, "Project", "Empty"))
contents = {"Project/notes 报告.txt": "héllo 世界\n".encode(), "Project/Deep/plan.md": b"# plan\n",
            "Project/big.bin": os.urandom(20 << 20)}
for name, data in contents.items():
    with open(os.path.join(files, name), "wb") as out:
        out.write(data)
os.utime(os.path.join(files, "Project/Deep/plan.md"), (1_600_000_000.25, 1_600_000_000.25))
coffer("cp -r Project b:/")
for name, data in contents.items():
    check(body(name) == data, f"boto3 reads {name} as Coffer wrote it")
top = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
check([p["Prefix"] for p in top.get("CommonPrefixes", [])] == ["Project/"], f"the folder is a prefix: {top}")
inside = s3.list_objects_v2(Bucket=bucket, Prefix="Project/", Delimiter="/")
check(sorted(p["Prefix"] for p in inside.get("CommonPrefixes", [])) == ["Project/Deep/", "Project/Empty/"], f"{inside}")
marker = s3.head_object(Bucket=bucket, Key="Project/Empty/")
check(marker["ContentLength"] == 0, "an empty folder is a zero-byte marker")
plan = s3.head_object(Bucket=bucket, Key="Project/Deep/plan.md")
check(abs(float(plan["Metadata"].get("mtime", "0")) - 1_600_000_000.25) < 1e-6, f"rclone's mtime: {plan['Metadata']}")
check(s3.list_multipart_uploads(Bucket=bucket).get("Uploads") is None, "no upload left behind")

# boto3 writes keys of every kind; Coffer lists, reads, copies and moves them.
odd = {"odd/with space.txt": b"space", "odd/中文 名.txt": "中文".encode(), "odd/a+b.txt": b"plus",
       "odd/100%.txt": b"percent", unicodedata.normalize("NFD", "odd/café.txt"): b"nfd",
       "odd/" + "/".join(["d" * 200] * 4) + "/long.txt": b"long"}
for key, data in odd.items():
    s3.put_object(Bucket=bucket, Key=key, Body=data)
listing = coffer("ls b:/odd")
for name in ["with space.txt", "中文 名.txt", "a+b.txt", "100%.txt", "d" * 200]:
    check(name in listing, f"ls shows {name}: {listing!r}")
check(unicodedata.normalize("NFC", "café.txt") in unicodedata.normalize("NFC", listing), f"ls shows café: {listing!r}")
shown = coffer("cat 'b:/odd/with space.txt'; cat 'b:/odd/中文 名.txt'; cat 'b:/odd/a+b.txt'; cat 'b:/odd/100%.txt'; "
               "cat 'b:/odd/" + "/".join(["d" * 200] * 4) + "/long.txt'")
for data in [b"space", "中文".encode(), b"plus", b"percent", b"long"]:
    check(data.decode() in shown, f"cat shows {data!r}: {shown!r}")
coffer("mkdir b:/Copies; cp 'b:/odd/a+b.txt' b:/Copies; mkdir b:/Moved; mv 'b:/odd/100%.txt' b:/Moved; mv 'b:/odd/中文 名.txt' b:/Moved")
check(body("Copies/a+b.txt") == b"plus" and body("odd/a+b.txt") == b"plus", "a copy keeps the source")
check(body("Moved/100%.txt") == b"percent" and body("Moved/中文 名.txt") == "中文".encode(), "moved objects arrive whole")
gone = [key for key in ["odd/100%.txt", "odd/中文 名.txt"]
        if s3.list_objects_v2(Bucket=bucket, Prefix=key).get("KeyCount", 0) > 0]
check(gone == [], f"moved objects leave their old keys: {gone}")
coffer("cp -r b:/odd Back")
check(open(os.path.join(files, "Back", "with space.txt"), "rb").read() == b"space", "boto3's object copied to files: whole")

# Tags (issue 35): object metadata `xdg-tags`, set by a server-side copy that keeps the rest.
shown = coffer("tag 'b:/Project/Deep/plan.md' +work +报告; tag 'b:/Project/Deep/plan.md' -work +urgent; info 'b:/Project/Deep/plan.md'")
tagged = s3.head_object(Bucket=bucket, Key="Project/Deep/plan.md")
check(tagged["Metadata"].get("xdg-tags", "").startswith("=?UTF-8?B?"), f"tags are object metadata, encoded for S3: {tagged['Metadata']}")
check(abs(float(tagged["Metadata"].get("mtime", "0")) - 1_600_000_000.25) < 1e-6, "a tag change keeps the other metadata")
check(body("Project/Deep/plan.md") == b"# plan\n" and tagged["ContentType"] == plan["ContentType"], "and the content and its type")
check("Tags:" in shown and "报告, urgent" in shown, f"info shows the tags read back: {shown!r}")
s3.copy_object(Bucket=bucket, Key="Project/Deep/plan.md", CopySource={"Bucket": bucket, "Key": "Project/Deep/plan.md"},
               Metadata={"xdg-tags": "from boto3,other"}, MetadataDirective="REPLACE")
check("from boto3, other" in coffer("info 'b:/Project/Deep/plan.md'"), "tags boto3 set are Coffer's too")

# `user.` attributes (issue 35): to S3 as metadata (names without `user.`, dots as hyphens),
# back as attributes; what S3 cannot hold (a name with capitals, past 2 KB, a folder's) is reported.
os.makedirs(os.path.join(files, "Attrs"))
tagged = os.path.join(files, "Attrs", "tagged.txt")
with open(tagged, "wb") as out:
    out.write(b"tagged\n")
big = os.path.join(files, "Attrs", "big.bin")
with open(big, "wb") as out:
    out.write(os.urandom(20 << 20))
for path, name, value in [(tagged, "user.xdg.tags", "work,报告".encode()), (tagged, "user.xdg.origin.url", b"https://example.org/t"),
                          (tagged, "user.xdg.comment", b"a comment"), (tagged, "user.Mixed", b"x"),
                          (tagged, "user.huge", b"h" * 3000), (big, "user.xdg.tags", b"large"),
                          (os.path.join(files, "Attrs"), "user.xdg.tags", b"folder")]:
    os.setxattr(path, name, value)
run = subprocess.run([binary, "--container", container, "--mount", f"b=s3://{bucket}", "--s3-endpoint", endpoint, "--lang", "en",
                      "-c", "cp -r Attrs b:/"], env=dict(os.environ, LC_ALL="C.UTF-8", **keys), capture_output=True, text=True)
check(run.returncode == 0, f"cp -r Attrs b:/ succeeds: {run.stderr}")
for said in ["“files:/Attrs/tagged.txt”: the copy did not keep user.Mixed: the destination cannot name them",
             "“files:/Attrs/tagged.txt”: the copy did not keep user.huge: they do not fit",
             "“files:/Attrs”: the copy did not keep user.xdg.tags: the destination keeps no extended attributes"]:
    check(said in run.stderr, f"the loss is reported: {said!r} in {run.stderr!r}")
head = s3.head_object(Bucket=bucket, Key="Attrs/tagged.txt")["Metadata"]
check(head.get("xdg-origin-url") == "https://example.org/t" and head.get("xdg-comment") == "a comment",
      f"attributes are object metadata: {head}")
check(head.get("xdg-tags", "").startswith("=?UTF-8?B?") and "huge" not in head and "mixed" not in head, f"{head}")
check(s3.head_object(Bucket=bucket, Key="Attrs/big.bin")["Metadata"].get("xdg-tags") == "large",
      "an upload in parts carries them too")
s3.copy_object(Bucket=bucket, Key="Attrs/from-boto3.txt", CopySource={"Bucket": bucket, "Key": "Attrs/tagged.txt"},
               Metadata={"xdg-tags": "set by boto3", "xdg-comment": "theirs"}, MetadataDirective="REPLACE")
coffer("cp -r b:/Attrs Returned; cp b:/Attrs/tagged.txt b:/Attrs/copy.txt")
returned = os.path.join(files, "Returned")
check(os.getxattr(os.path.join(returned, "tagged.txt"), "user.xdg.tags") == "work,报告".encode(), "tags come back from S3")
check(os.getxattr(os.path.join(returned, "tagged.txt"), "user.xdg.origin.url") == b"https://example.org/t", "and the origin")
check(os.getxattr(os.path.join(returned, "from-boto3.txt"), "user.xdg.comment") == b"theirs", "metadata boto3 set arrives")
check("user.mtime" not in os.listxattr(os.path.join(returned, "tagged.txt")), "the modification time is no attribute")
check(s3.head_object(Bucket=bucket, Key="Attrs/copy.txt")["Metadata"].get("xdg-comment") == "a comment",
      "a copy inside the bucket keeps them")

if failures:
    print(f"{len(failures)} S3 cross-check(s) with boto3 failed", file=sys.stderr)
    sys.exit(1)
print("S3 cross-checks with boto3 passed")
