#!/usr/bin/env python3
"""The web page as a user of web file managers expects it, in headless Chromium:

  address    three folders deep, reload, Back and Forward; the focused item, a search with
             its filters and a preview live in the address and come back after a reload; a
             link to a folder opens it in a fresh window
  reconnect  the server is killed and started again (same container, port and token): the
             page says so, tries again, lists its folder again and hears changes, no reload
  download   a link downloaded into the folder shown
  uploads    200 MiB cut by a server killed mid-way resumes from the server's offset (the
             PATCH offsets the audit log saw) and arrives byte-identical; a page reloaded
             mid-upload, given the same file again, goes on from where it was; a folder is
             uploaded with its tree; per-file and total progress
  keyboard   rename (F2), trash (Delete), the trash and restore (Enter), select all, copy
             and paste, without the mouse
  dragging   several items dragged onto a folder, and one onto a place in the side bar; with an
             RGW (COFFER_TEST_S3_ENDPOINT), an S3 mount in the side bar, browsed, and a file
             dragged onto it moved into the bucket; a file of it downloaded whole and by a
             range, and a folder of it shared as a zip
  grid       the grid shows thumbnails; dark mode; the language from Accept-Language
  console    no errors in the browser's console
Screenshots go to the folder given second (Documentation/Web when refreshed by hand).
Usage: page_check.py PATH-TO-COFFER [SCREENSHOTS]   (needs selenium)
"""
import owned  # every process this check starts is ended with it (.ci/owned.py)
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import serve_support
from serve_support import checker, console_errors

COFFER = os.path.abspath(sys.argv[1])
SHOTS = sys.argv[2] if len(sys.argv) > 2 else None
if SHOTS:
    os.makedirs(SHOTS, exist_ok=True)
WORK = tempfile.mkdtemp(prefix="coffer-page-check-")
CONTAINER = os.path.join(WORK, "container")
FILES = os.path.join(CONTAINER, "Documents", "UserFiles")
CACHE = os.path.join(CONTAINER, "Library", "Caches", "Downloading")
AUDIT = os.path.join(CONTAINER, "Library", "Application Support", "AppData", "logs", "audit.jsonl")


check = checker("page_check")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


S3_ENDPOINT = os.environ.get("COFFER_TEST_S3_ENDPOINT")
S3_KEYS = {"AWS_ACCESS_KEY_ID": os.environ.get("COFFER_TEST_S3_ACCESS_KEY", "test:tester"),
           "AWS_SECRET_ACCESS_KEY": os.environ.get("COFFER_TEST_S3_SECRET_KEY", "testing")}
BUCKET = None


def Server(port):
    """The server, with an S3 bucket mounted as `b:` when the tests have an RGW."""
    options = ("--mount", f"b=s3://{BUCKET}", "--s3-endpoint", S3_ENDPOINT) if BUCKET else ()
    return serve_support.Server(COFFER, CONTAINER, port=port, options=options, environment=S3_KEYS if BUCKET else None)


def s3_client():
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=S3_ENDPOINT, region_name="us-east-1", config=Config(s3={"addressing_style": "path"}),
                        aws_access_key_id=S3_KEYS["AWS_ACCESS_KEY_ID"], aws_secret_access_key=S3_KEYS["AWS_SECRET_ACCESS_KEY"])


def patches():
    """The PATCHes the server took, in order: (upload id, offset, bytes)."""
    found = []
    if os.path.exists(AUDIT):
        with open(AUDIT) as log:
            for line in log:
                entry = json.loads(line)
                if entry.get("method") == "appendUploadStream":
                    found.append((entry["upload"], int(entry["offset"]), int(entry["bytes"])))
    return found


def upload_data():
    """The bytes an upload under way holds on the server."""
    return sum(os.path.getsize(os.path.join(CACHE, name)) for name in os.listdir(CACHE) if name.startswith("upload-"))


def digest(path):
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def main():
    global BUCKET
    if S3_ENDPOINT:
        import uuid
        BUCKET = "coffer-page-" + uuid.uuid4().hex[:8]
        s3_client().create_bucket(Bucket=BUCKET)
        s3_client().put_object(Bucket=BUCKET, Key="Shelf/in the bucket.txt", Body=b"remote")
    elif os.environ.get("COFFER_REQUIRE_S3"):
        raise SystemExit("page_check: FAILED: COFFER_REQUIRE_S3 is set but COFFER_TEST_S3_ENDPOINT is not")
    subprocess.run([COFFER, "--container", CONTAINER, "-c", "mkdir Docs Docs/Deeper Docs/Deeper/Deepest Other Photos"],
                   check=True, capture_output=True)
    for name, text in [("Docs/a.txt", "a"), ("Docs/Deeper/b.txt", "b"), ("Docs/Deeper/Deepest/d.txt", "d"),
                       ("Other/c.txt", "c"), ("Other/report 2026.txt", "r"), ("Other/notes.txt", "n")]:
        with open(os.path.join(FILES, name), "w") as out:
            out.write(text)
    subprocess.run(["python3", "-c", """
import struct, zlib, sys
def png(path, colour):
    raw = b"".join(b"\\0" + bytes(colour) * 64 for _ in range(48))
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    open(path, "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 48, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
png(sys.argv[1], (200, 60, 40)); png(sys.argv[2], (40, 120, 200))
""", os.path.join(FILES, "Photos", "red.png"), os.path.join(FILES, "Photos", "blue.png")], check=True)
    port = free_port()
    server = Server(port)
    driver = serve_support.chromium()
    wait = WebDriverWait(driver, 30)
    body = lambda: driver.find_element(By.TAG_NAME, "body")

    def names():
        return driver.execute_script("return [...document.querySelectorAll('#items li .label')].map((e) => e.textContent)")

    def row(name):
        for element in driver.find_elements(By.CSS_SELECTOR, "#items li"):
            labels = element.find_elements(By.CSS_SELECTOR, ".label")
            if labels and labels[0].text == name:
                return element
        raise SystemExit(f"page_check: FAILED: no row {name!r} in {names()}")

    def open_row(name):
        row(name).click()
        body().send_keys(Keys.ENTER)

    def selected():
        return driver.execute_script("return [...document.querySelectorAll('#items li.selected .label')].map((e) => e.textContent)")

    def shot(name):
        if SHOTS:
            driver.save_screenshot(os.path.join(SHOTS, name))

    try:
        driver.get(server.page)
        wait.until(lambda d: "Docs" in names())
        check("token" not in driver.current_url, f"the token left the address: {driver.current_url}")

        # Three folders deep, reload, Back, Forward.
        open_row("Docs")
        wait.until(lambda d: "a.txt" in names())
        check("folder=files%3A%2FDocs" in driver.current_url, f"the folder is in the address: {driver.current_url}")
        open_row("Deeper")
        wait.until(lambda d: "b.txt" in names())
        open_row("Deepest")
        wait.until(lambda d: "d.txt" in names())
        driver.refresh()
        wait.until(lambda d: "d.txt" in names())
        check("Deepest" in driver.current_url, "three folders deep, a reload comes back to the folder")
        driver.back()
        wait.until(lambda d: "b.txt" in names())
        check("folder=files%3A%2FDocs%2FDeeper" in driver.current_url and "focus=Deepest" in driver.current_url,
              f"Back goes to the folder before, its focus on the folder left: {driver.current_url}")
        wait.until(lambda d: selected() == ["Deepest"])
        driver.back()
        wait.until(lambda d: "a.txt" in names())
        driver.forward()
        wait.until(lambda d: "b.txt" in names())
        check(selected() == ["Deepest"], "Forward comes again, with the focus")

        # A preview and the focus in the address, back after a reload.
        row("b.txt").click()
        wait.until(lambda d: "preview=files%3A%2FDocs%2FDeeper%2Fb.txt" in d.current_url)
        driver.refresh()
        wait.until(lambda d: d.find_element(By.ID, "preview-name").text == "b.txt" and d.find_element(By.ID, "preview").is_displayed())
        check(selected() == ["b.txt"], "a reload shows the preview and the focus the address names")

        # A search with a filter in the address.
        driver.get(server.base + "/?folder=files%3A%2FOther")
        wait.until(lambda d: "c.txt" in names())
        search = driver.find_element(By.ID, "search")
        search.send_keys("report")
        wait.until(lambda d: names() == ["report 2026.txt"])
        driver.find_element(By.CSS_SELECTOR, "#filters summary").click()
        from selenium.webdriver.support.ui import Select
        Select(driver.find_element(By.ID, "filter-newer")).select_by_value("7d")
        wait.until(lambda d: "newer=7d" in d.current_url and "q=report" in d.current_url)
        driver.refresh()
        wait.until(lambda d: names() == ["report 2026.txt"])
        check(driver.find_element(By.ID, "search").get_attribute("value") == "report"
              and driver.find_element(By.ID, "filter-newer").get_attribute("value") == "7d",
              "a search and its filters come back after a reload")
        Select(driver.find_element(By.ID, "filter-larger")).select_by_value("1M")
        wait.until(lambda d: names() == [])
        check(True, "a size filter narrows the search")
        driver.back()
        wait.until(lambda d: "larger" not in d.current_url)

        # A link to a folder in a fresh window.
        driver.switch_to.new_window("window")
        driver.get(server.base + "/?folder=files%3A%2FDocs%2FDeeper%2FDeepest")
        wait.until(lambda d: "d.txt" in names())
        check(True, "a link to a folder opens it in a fresh window")
        driver.close()
        driver.switch_to.window(driver.window_handles[0])

        # Keyboard only: rename, trash, restore, select all, copy and paste.
        driver.get(server.base + "/?folder=files%3A%2FOther")
        wait.until(lambda d: "notes.txt" in names())
        body().send_keys(Keys.HOME)
        while selected() != ["notes.txt"]:
            body().send_keys(Keys.ARROW_DOWN)
        body().send_keys(Keys.F2)
        field = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#items li input"))
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys("笔记.txt", Keys.ENTER)
        wait.until(lambda d: "笔记.txt" in names())
        check(os.path.exists(os.path.join(FILES, "Other", "笔记.txt")) and selected() == ["笔记.txt"],
              "renamed with F2, the focus stays on it")
        body().send_keys(Keys.DELETE)
        wait.until(lambda d: "笔记.txt" not in names())
        check(not os.path.exists(os.path.join(FILES, "Other", "笔记.txt")), "trashed with Delete")
        driver.find_element(By.ID, "show-trash").send_keys(Keys.ENTER)
        wait.until(lambda d: "笔记.txt" in names())
        body().send_keys(Keys.HOME)
        while selected() != ["笔记.txt"]:
            body().send_keys(Keys.ARROW_DOWN)
        body().send_keys(Keys.ENTER)
        wait.until(lambda d: os.path.exists(os.path.join(FILES, "Other", "笔记.txt")))
        check(True, "restored from the trash with Enter")
        body().send_keys(Keys.BACKSPACE)
        wait.until(lambda d: "c.txt" in names())
        body().send_keys(Keys.CONTROL, "a")
        wait.until(lambda d: len(selected()) == len(names()) == 3)
        check("3 selected" in driver.find_element(By.ID, "status").text, "Ctrl-A selects every item and says how many")
        body().send_keys(Keys.CONTROL, "c")
        driver.get(server.base + "/?folder=files%3A%2FDocs")
        wait.until(lambda d: "a.txt" in names())
        driver.execute_script("document.getElementById('items').focus()")
        # The page's clipboard lives as long as the page: copy again here, then paste in another folder.
        body().send_keys(Keys.CONTROL, "a")
        body().send_keys(Keys.CONTROL, "c")
        open_row("Deeper")
        wait.until(lambda d: "b.txt" in names())
        body().send_keys(Keys.CONTROL, "v")
        wait.until(lambda d: "a.txt" in names() and os.path.exists(os.path.join(FILES, "Docs", "Deeper", "a.txt")))
        check(os.path.exists(os.path.join(FILES, "Docs", "a.txt")), "Ctrl-C, Ctrl-V copies into the folder shown")

        # Several items dragged onto a folder; one onto a place in the side bar.
        driver.get(server.base + "/?folder=files%3A%2FOther")
        wait.until(lambda d: "c.txt" in names())
        subprocess.run([COFFER, "--container", CONTAINER, "-c", "mkdir Other/Box"], check=True, capture_output=True)
        wait.until(lambda d: "Box" in names())
        row("c.txt").click()
        from selenium.webdriver import ActionChains
        ActionChains(driver).key_down(Keys.CONTROL).click(row("report 2026.txt")).key_up(Keys.CONTROL).perform()
        check(sorted(selected()) == ["c.txt", "report 2026.txt"], "Ctrl-click adds to the selection")
        drag = """
            const [item, target] = arguments;
            const data = new DataTransfer();
            item.dispatchEvent(new DragEvent('dragstart', {dataTransfer: data, bubbles: true}));
            target.dispatchEvent(new DragEvent('dragover', {dataTransfer: data, bubbles: true, cancelable: true}));
            target.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true}));
        """
        driver.execute_script(drag, row("c.txt"), row("Box"))
        wait.until(lambda d: "c.txt" not in names() and "report 2026.txt" not in names())
        check(os.path.exists(os.path.join(FILES, "Other", "Box", "c.txt"))
              and os.path.exists(os.path.join(FILES, "Other", "Box", "report 2026.txt")), "two items dragged onto a folder move")
        row("笔记.txt").click()
        files_place = driver.find_element(By.CSS_SELECTOR, "#places button[data-path='files:/']")
        driver.execute_script(drag, row("笔记.txt"), files_place)
        wait.until(lambda d: "笔记.txt" not in names())
        check(os.path.exists(os.path.join(FILES, "笔记.txt")), "an item dragged onto a place in the side bar moves there")

        # An S3 mount in the side bar: listed, and a file dragged onto it is moved into the bucket.
        if BUCKET:
            driver.get(server.base + "/?folder=files%3A%2FOther")
            wait.until(lambda d: "Box" in names())
            bucket_place = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#places button[data-path='b:/']"))
            with open(os.path.join(FILES, "Other", "to the bucket.txt"), "w") as out:
                out.write("for S3")
            wait.until(lambda d: "to the bucket.txt" in names())
            row("to the bucket.txt").click()
            driver.execute_script(drag, row("to the bucket.txt"), bucket_place)
            wait.until(lambda d: "to the bucket.txt" not in names())
            stored = s3_client().get_object(Bucket=BUCKET, Key="to the bucket.txt")["Body"].read()
            check(stored == b"for S3" and not os.path.exists(os.path.join(FILES, "Other", "to the bucket.txt")),
                  "a file dragged onto the S3 mount in the side bar is moved into the bucket")
            bucket_place.click()
            wait.until(lambda d: "Shelf" in names() and "to the bucket.txt" in names())
            open_row("Shelf")
            wait.until(lambda d: "in the bucket.txt" in names())
            check("folder=b%3A%2FShelf" in driver.current_url, "the S3 mount is browsed like any folder, in the address too")
            # A file of the bucket is sent as one read ahead of the client: whole, and a range across pieces.
            import urllib.parse
            import urllib.request
            large = os.urandom(3 * 1024 * 1024 + 12345)
            s3_client().put_object(Bucket=BUCKET, Key="Shelf/large.bin", Body=large)
            address = f"{server.base}/content?path={urllib.parse.quote('b:/Shelf/large.bin', safe='')}"
            bearer = {"Authorization": f"Bearer {server.token}"}
            with urllib.request.urlopen(urllib.request.Request(address, headers=bearer), timeout=60) as answer:
                check(answer.read() == large, "a file of the S3 mount is downloaded whole through /content")
            asked = {**bearer, "Range": f"bytes={(1 << 20) - 7}-{(2 << 20) + 9}"}
            with urllib.request.urlopen(urllib.request.Request(address, headers=asked), timeout=60) as answer:
                check(answer.status == 206 and answer.read() == large[(1 << 20) - 7:(2 << 20) + 10],
                      "and a range of it that spans two pieces")
            # A folder of the bucket shared, as a zip: each file read ahead as a whole download is.
            import io
            import zipfile
            made = subprocess.run([COFFER, "--container", CONTAINER, "--mount", f"b=s3://{BUCKET}", "--s3-endpoint", S3_ENDPOINT,
                                   "-c", "share b:/Shelf"], capture_output=True, text=True, env={**os.environ, **S3_KEYS}, timeout=60)
            link = re.search(r"/s/[A-Za-z0-9_-]+", made.stdout)
            check(link is not None, f"a folder of the S3 mount is shared: {made.stdout!r} {made.stderr!r}")
            with urllib.request.urlopen(server.base + link.group(0) + "/zip", timeout=60) as answer:
                archive = zipfile.ZipFile(io.BytesIO(answer.read()))
            check(archive.read("Shelf/large.bin") == large and archive.read("Shelf/in the bucket.txt") == b"remote",
                  f"and its zip holds its files whole: {archive.namelist()}")

        # The grid, with thumbnails.
        driver.get(server.base + "/?folder=files%3A%2FPhotos")
        wait.until(lambda d: "red.png" in names())
        driver.find_element(By.ID, "layout").click()
        wait.until(lambda d: d.execute_script(
            "return [...document.querySelectorAll('#items.grid li img')].filter((i) => i.complete && i.naturalWidth > 0).length") == 2)
        check(True, "the grid shows the images' thumbnails")
        shot("web-grid.png")
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        dark = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        check(dark != "rgb(255, 255, 255)", f"dark mode follows prefers-color-scheme: {dark}")
        shot("web-dark.png")
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        driver.find_element(By.ID, "layout").click()

        # The language from Accept-Language.
        driver.execute_cdp_cmd("Emulation.setUserAgentOverride", {
            "userAgent": driver.execute_script("return navigator.userAgent"), "acceptLanguage": "zh-CN,zh;q=0.9"})
        driver.refresh()
        wait.until(lambda d: d.find_element(By.ID, "new-folder").text == "新建文件夹")
        check(True, "the page speaks the language of Accept-Language")
        driver.execute_cdp_cmd("Emulation.setUserAgentOverride", {
            "userAgent": driver.execute_script("return navigator.userAgent"), "acceptLanguage": "en-US,en"})

        # Uploads: a folder with its tree.
        tree = os.path.join(tempfile.mkdtemp(dir=WORK), "Trip")
        os.makedirs(os.path.join(tree, "day 1"))
        os.makedirs(os.path.join(tree, "empty"))
        for relative, text in [("readme.txt", "trip"), ("day 1/日记.txt", "第一天")]:
            with open(os.path.join(tree, relative), "w") as out:
                out.write(text)
        driver.get(server.base + "/?folder=files%3A%2FDocs")
        wait.until(lambda d: d.find_element(By.ID, "new-folder").text == "New folder" and "a.txt" in names())
        driver.find_element(By.ID, "upload-folder").send_keys(tree)
        wait.until(lambda d: os.path.exists(os.path.join(FILES, "Docs", "Trip", "day 1", "日记.txt")))
        with open(os.path.join(FILES, "Docs", "Trip", "day 1", "日记.txt")) as arrived:
            check(arrived.read() == "第一天" and os.path.isfile(os.path.join(FILES, "Docs", "Trip", "readme.txt")),
                  "a folder is uploaded with its tree")
        wait.until(lambda d: "Trip" in names())

        # A download the page starts: from a link into the folder shown, with its progress.
        served = tempfile.mkdtemp(dir=WORK)
        payload = os.urandom(12 << 20)
        with open(os.path.join(served, "from the web.bin"), "wb") as out:
            out.write(payload)
        import functools
        import http.server
        import threading
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def copyfile(self, source, output):
                # About 5 MB a second: time to watch the bar move.
                while chunk := source.read(256 << 10):
                    output.write(chunk)
                    time.sleep(0.05)
        web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=served))
        threading.Thread(target=web.serve_forever, daemon=True).start()
        driver.find_element(By.ID, "download-link").click()
        alert = wait.until(lambda d: d.switch_to.alert)
        alert.send_keys(f"http://127.0.0.1:{web.server_address[1]}/from%20the%20web.bin")
        alert.accept()
        # Its bar follows its bytes, one item (issue 48: one address counted as two items).
        seen_reports = []
        deadline = time.monotonic() + 60
        while "from the web.bin" not in names() and time.monotonic() < deadline:
            reading = driver.execute_script(
                "const a = document.querySelector('#activity-list .activity');"
                "return a ? [a.querySelector('progress').value, a.querySelector('.muted').textContent] : null")
            if reading and reading[1]:
                seen_reports.append((int(reading[0]), reading[1]))
            time.sleep(0.1)
        measured = []
        for value, note in seen_reports:
            match = re.match(r"(\d+) of (\d+) items, (\d+) of (\d+) bytes", note)
            if match:
                measured.append((value, int(match.group(2)), int(match.group(3)) * 100 // int(match.group(4))))
        check(measured and all(items == 1 for _, items, _ in measured),
              f"the page counts a download as one item: {seen_reports[:3]}")
        check(all(value == percent for value, _, percent in measured) and any(0 < value < 100 for value, _, _ in measured),
              f"the page's bar follows the download's bytes: {measured[:5]}")
        wait.until(lambda d: "from the web.bin" in names())
        with open(os.path.join(FILES, "Docs", "from the web.bin"), "rb") as arrived:
            check(arrived.read() == payload, "a link downloaded from the page arrives in the folder shown")
        wait.until(lambda d: not d.find_element(By.ID, "activity").is_displayed())
        web.shutdown()

        # 200 MiB cut by a server killed mid-way: it resumes from the server's offset.
        big = os.path.join(tempfile.mkdtemp(dir=WORK), "big upload.bin")
        with open(big, "wb") as out:
            for _ in range(200):
                out.write(os.urandom(1 << 20))
        # Slowed to about 40 MB/s, so that the server can be killed while the upload is under way.
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 40_000_000})
        before = len(patches())
        driver.find_element(By.ID, "upload").send_keys(big)
        deadline = time.monotonic() + 120
        while upload_data() < 30 << 20 and time.monotonic() < deadline:
            time.sleep(0.02)
        held = upload_data()
        check(30 << 20 <= held < 200 << 20, f"the upload is under way: {held} bytes on the server")
        shot("web-uploads.png")
        server.process.kill()
        server.process.wait(timeout=30)
        wait.until(lambda d: "Waiting for the connection" in d.find_element(By.ID, "uploads-list").text)
        check(True, "the upload waits for the connection")
        server = Server(port)
        WebDriverWait(driver, 180).until(lambda d: os.path.exists(os.path.join(FILES, "Docs", "big upload.bin")))
        check(digest(os.path.join(FILES, "Docs", "big upload.bin")) == digest(big), "the 200 MiB upload arrives byte-identical")
        seen = patches()[before:]
        uploaded = [entry for entry in seen if entry[0] == seen[0][0]]
        offsets = [offset for _, offset, _ in uploaded]
        check(len({entry[0] for entry in seen}) == 1 and offsets[0] == 0 and offsets == sorted(set(offsets))
              and uploaded[-1][1] + uploaded[-1][2] == 200 << 20 and sum(count for _, _, count in uploaded) <= 200 << 20,
              f"after the restart the same upload went on from the server's offset, never from zero: PATCH offsets {offsets}")

        # A page reloaded mid-upload, given the same file again, goes on from where it was.
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 20_000_000})
        medium = os.path.join(tempfile.mkdtemp(dir=WORK), "medium.bin")
        with open(medium, "wb") as out:
            out.write(os.urandom(60 << 20))
        before = len(patches())
        driver.find_element(By.ID, "upload").send_keys(medium)
        while upload_data() < 10 << 20 and time.monotonic() < deadline + 120:
            time.sleep(0.02)
        driver.refresh()
        wait.until(lambda d: "a.txt" in names())
        driver.find_element(By.ID, "upload").send_keys(medium)
        WebDriverWait(driver, 120).until(lambda d: os.path.exists(os.path.join(FILES, "Docs", "medium.bin")))
        check(digest(os.path.join(FILES, "Docs", "medium.bin")) == digest(medium), "the reloaded upload arrives byte-identical")
        seen = patches()[before:]
        offsets = [offset for _, offset, _ in seen]
        check(len({entry[0] for entry in seen}) == 1 and offsets[0] == 0 and offsets == sorted(set(offsets))
              and sum(count for _, _, count in seen) == 60 << 20,
              f"after the reload the same upload went on where it was: PATCH offsets {offsets}")
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        check(os.listdir(CACHE) == ["CACHEDIR.TAG"], f"nothing of the uploads is left on the server: {os.listdir(CACHE)}")

        # Versions in the preview pane, with Restore; each session's changes, with Undo.
        notes = os.path.join(FILES, "Other", "draft.txt")

        def notes_text():
            with open(notes) as file:
                return file.read()
        for text in ("zero", "one", "two", "three"):
            subprocess.run([COFFER, "--container", CONTAINER, "-c", "write --replace Other/draft.txt"], input=text.encode(),
                           check=True, capture_output=True)
        driver.get(server.base + "/?folder=files%3A%2FOther")
        wait.until(lambda d: "draft.txt" in names())
        row("draft.txt").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#versions li")) == 3)
        driver.find_elements(By.CSS_SELECTOR, "#versions li")[-1].find_element(By.CSS_SELECTOR, "button.restore-version").click()
        wait.until(lambda d: notes_text() == "zero" and len(d.find_elements(By.CSS_SELECTOR, "#versions li")) == 4)
        check(True, "the preview lists a file's versions, newest first; Restore puts the oldest back and keeps what the file had")
        driver.find_element(By.ID, "changes").click()
        wait.until(lambda d: d.find_element(By.ID, "changes-dialog").is_displayed()
                   and any("this session" in li.text for li in d.find_elements(By.CSS_SELECTOR, "#sessions li")))
        mine = [li for li in driver.find_elements(By.CSS_SELECTOR, "#sessions li") if "this session" in li.text]
        check(len(mine) == 1 and "1 change" in mine[0].text, f"the Changes dialog lists this page's session: {[li.text for li in mine]}")
        mine[0].find_element(By.CSS_SELECTOR, "button.undo-session").click()
        wait.until(lambda d: notes_text() == "three")
        check(True, "Undo reverts the page's session: the file has what it had before the restore")
        driver.find_element(By.CSS_SELECTOR, "#changes-dialog button[value=close]").click()

        # The server goes away and comes back on the same port with the same token.
        driver.get(server.base + "/?folder=files%3A%2FOther")
        wait.until(lambda d: "Box" in names())
        driver.execute_script("window.notReloaded = true")
        server.process.kill()
        server.process.wait(timeout=30)
        wait.until(lambda d: "trying again" in d.find_element(By.ID, "message").text)
        check(True, "the page says the connection was lost and tries again")
        with open(os.path.join(FILES, "Other", "while away.txt"), "w") as out:
            out.write("new")
        server = Server(port)
        wait.until(lambda d: "while away.txt" in names())
        check(driver.execute_script("return window.notReloaded === true"), "it lists its folder again, without a reload")
        with open(os.path.join(FILES, "Other", "after.txt"), "w") as out:
            out.write("later")
        wait.until(lambda d: "after.txt" in names())
        check(True, "and hears changes again")
        errors = [entry for entry in console_errors(driver)
                  if "/rpc" not in entry["message"] and "/tus/" not in entry["message"] and "ERR_CONNECTION_REFUSED" not in entry["message"]]
        check(not errors, f"no errors in the browser's console but the server's absence: {errors}")
    finally:
        driver.quit()
        server.stop()
        shutil.rmtree(WORK, ignore_errors=True)
    print("page_check: every check held")


if __name__ == "__main__":
    main()
