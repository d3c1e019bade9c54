#!/usr/bin/env python3
"""End-to-end checks of `coffer serve` in a real browser (headless Chromium driven by Selenium),
with browser-less clients for the security rules and the load.

  browser   open the page with the token; navigate; create a folder; rename in place; upload
            through the file input (bytes checked on disk); download it back; move by drag and
            drop; trash and restore; search; a change made by another process appears without
            reloading; a name conflict answered "keep both"; the language switched; a folder of
            100,000 entries shows its first rows in under a second; an XSS corpus of names and
            contents runs nothing. Screenshots at desktop and phone sizes.
  security  no token -> 403; a wrong Host -> 421; a cross-origin WebSocket -> refused; `..`,
            encoded slashes and links in URLs and over the WebSocket -> no escape; users' HTML
            served as a sandboxed attachment; --new-token ends the old sessions.
  load      50 WebSocket clients doing mixed operations for 30 s, then SIGTERM: no error,
            exit 0, nothing partial left.

Usage: web_check.py PATH-TO-COFFER [SCREENSHOT-DIR]   (needs selenium, websockets, Pillow)
"""
import owned  # every process this check starts is ended with it (.ci/owned.py)
import asyncio
import base64
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import websockets
from PIL import Image
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

COFFER = os.path.abspath(sys.argv[1])
SHOTS = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
XSS_NAMES = ['<img src=x onerror="window.pwned=1">.png', '"><svg onload=window.pwned=1>.txt',
             "javascript:window.pwned=1.html", "{{constructor.constructor('window.pwned=1')()}}.txt"]
XSS_CONTENT = b'<html><body><script>window.pwned=1;document.title="pwned"</script><img src=x onerror="window.pwned=1"></body></html>'


def text_of(path):
    """A file's text, or None while it is not there (a save swaps the old file out, then the new one in)."""
    try:
        with open(path) as file:
            return file.read()
    except FileNotFoundError:
        return None


def check(condition, what):
    if not condition:
        raise SystemExit(f"web_check: FAILED: {what}")
    print(f"web_check: ok: {what}")


class Server:
    def __init__(self, container, *extra):
        self.container = container
        # Its log goes to a file: a pipe nobody reads would fill and stop the server.
        self.log = tempfile.NamedTemporaryFile(prefix="coffer-serve-", suffix=".log", delete=False)
        self.process = subprocess.Popen([COFFER, "--container", container, "--lang", "en", "serve", "--port", "0", *extra],
                                        stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"(http://[^/\s]+)/\?token=([0-9a-f]+)", line)
        if not match:
            raise SystemExit(f"web_check: no address from coffer serve: {line!r} {open(self.log.name).read()}")
        self.base, self.token = match.group(1), match.group(2)
        self.url = f"{self.base}/?token={self.token}"
        self.host = self.base[len("http://"):]

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=30)
        if status != 0:
            print(f"web_check: the server ended with {status}; its log:\n{open(self.log.name).read()[-4000:]}")
        return status


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


OPENER = urllib.request.build_opener(NoRedirects)


def http(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with OPENER.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


async def rpc_socket(server, origin=None, token=None, capabilities=None):
    headers = {"Authorization": f"Bearer {token or server.token}"}
    socket = await websockets.connect(f"ws://{server.host}/rpc", origin=origin or server.base,
                                      additional_headers=headers, max_size=32 << 20)
    socket.next_id = 0

    socket.answer = None  # answers the server's requests (`conflict/ask`), when the client said it would

    async def call(method, params=None):
        socket.next_id += 1
        await socket.send(json.dumps({"jsonrpc": "2.0", "id": socket.next_id, "method": method, "params": params or {}}))
        while True:
            message = json.loads(await socket.recv())
            if "method" in message and "id" in message and socket.answer:
                await socket.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": await socket.answer(message)}))
            elif message.get("id") == socket.next_id:
                return message
    socket.call = call
    await call("initialize", {"locale": "en", "capabilities": capabilities or {}})
    return socket


def security(server, root):
    status, _, _ = http(server.base + "/")
    check(status == 403, "no token: 403")
    status, _, _ = http(server.base + "/app.js")
    check(status == 403, "no token for the script either: 403")
    status, _, _ = http(server.base + "/", {"Host": "evil.example:80", "Authorization": f"Bearer {server.token}"})
    check(status == 421, "a wrong Host (DNS rebinding): refused")
    status, headers, _ = http(server.base + "/", {"Authorization": f"Bearer {server.token}"})
    check(status == 200 and "script-src 'self'" in headers.get("Content-Security-Policy", ""), "strict CSP on the page")
    status, headers, _ = http(server.url)
    cookie = headers.get("Set-Cookie", "")
    check(status == 303 and "HttpOnly" in cookie and "SameSite=Strict" in cookie,
          "the token becomes an HttpOnly, SameSite=Strict cookie")
    # Browsers send 127.0.0.1's cookies to every port: the cookie is named for this port and holds
    # a key derived from the token, never the token (issue 32).
    port = server.base.rsplit(":", 1)[1]
    name, value = cookie.split(";")[0].split("=", 1)
    check(name == f"coffer_{port}" and server.token not in cookie and len(value) == 64,
          f"the cookie is named for the port and holds no token ({name})")
    status, _, _ = http(server.base + "/", {"Cookie": f"{name}={value}"})
    check(status == 200, "the browser key opens the page")
    status, _, _ = http(server.base + "/", {"Cookie": f"coffer_{int(port) + 1}={value}"})
    check(status == 403, "under another port's name it does not")

    bearer = {"Authorization": f"Bearer {server.token}"}
    for path in ["files:/../../etc/passwd", "/../../../etc/passwd", "files:/..%2F..%2Fetc%2Fpasswd", "files:/link-out",
                 "files:/%2e%2e/%2e%2e/etc/passwd", "trash:/../../../../etc/passwd"]:
        status, _, body = http(f"{server.base}/content?path={urllib.parse.quote(path, safe='')}", bearer)
        check(status in (400, 404) and b"root:" not in body and b"SECRET" not in body, f"/content {path}: no escape ({status})")
    # A FIFO (and a device, where one could be made) is refused at once, as by every front end:
    # `unsupported`, never "is a folder", never a hang.
    specials = ["files:/fifo"] + (["files:/null-device"] if os.path.exists(f"{root}/null-device") else [])
    for path in specials:
        status, headers, _ = http(f"{server.base}/content?path={urllib.parse.quote(path, safe='')}", bearer)
        check(status == 400 and headers.get("X-Coffer-Error") == "unsupported", f"/content {path}: refused as unsupported")
    status, headers, _ = http(f"{server.base}/content?path=files:/Photos/notes.txt%00.png", bearer)
    check(status == 400 and headers.get("X-Coffer-Error") == "invalidName", "a NUL in ?path= is refused, not cut short")
    status, headers, body = http(f"{server.base}/content?path={urllib.parse.quote('files:/Photos/notes.txt')}",
                                 dict(bearer, Range="bytes=5-99999999999999999999999"))
    check(status == 206 and body == b" line\nsecond line\n", "a Range ending past 64 bits reads to the end")
    status, _, body = http(f"{server.base}/content/../../etc/passwd", bearer)
    check(status == 404 and b"root:" not in body, "a path in the URL itself reaches nothing")
    status, headers, _ = http(f"{server.base}/content?path={urllib.parse.quote('files:/page.html')}", bearer)
    check(status == 200 and headers.get("Content-Disposition", "").startswith("attachment")
          and "sandbox" in headers.get("Content-Security-Policy", ""), "users' HTML is a sandboxed attachment")
    status, headers, body = http(f"{server.base}/content?path={urllib.parse.quote('files:/Photos/big.bin')}",
                                 dict(bearer, Range="bytes=100-199"))
    check(status == 206 and len(body) == 100 and headers.get("Content-Range") == "bytes 100-199/300000", "Range: 206 with the bytes")

    async def sockets():
        try:
            await rpc_socket(server, origin="http://evil.example")
            check(False, "a cross-origin WebSocket is refused")
        except websockets.exceptions.InvalidStatus as error:
            check(error.response.status_code == 403, "a cross-origin WebSocket is refused (403)")
        try:
            await rpc_socket(server, token="0" * 48)
            check(False, "a WebSocket with a wrong token is refused")
        except websockets.exceptions.InvalidStatus:
            check(True, "a WebSocket with a wrong token is refused")
        socket = await rpc_socket(server)
        # The confinement cases of the other front ends' tests, replayed over the WebSocket: climbing
        # out, a prefix sibling of the root, encoded slashes, a link out, a FIFO (no hang), a host path.
        for path in ["../../etc", "files:/../../etc/passwd", "files:/Photos/../../../etc", "files:/../UserFiles-evil/x.txt",
                     "/link-out", "files:/..%2f..%2fetc", "files:/fifo", "/etc/passwd"]:
            answer = await asyncio.wait_for(socket.call("files/read", {"path": path, "encoding": "text"}), timeout=10)
            check("error" in answer and not any(word in json.dumps(answer) for word in ("root:", "EVIL", "SECRET")),
                  f"over the WebSocket, reading {path}: refused ({answer['error'].get('data', {}).get('kind')})")
        for path in ["files:/../escape.txt", "../../UserFiles-evil/y.txt"]:
            answer = await socket.call("files/write", {"path": path, "data": "x", "conflict": "replace"})
            check("error" in answer, f"over the WebSocket, writing {path}: refused")
        answer = await socket.call("files/write", {"path": "files:/link-out", "data": "x", "conflict": "replace"})
        check(open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(root))), "outside-secret.txt")).read()
              == "SECRET outside the mount\n", "a write to a link out never reaches its target")
        check(not os.path.exists(os.path.join(os.path.dirname(root), "escape.txt"))
              and os.listdir(os.path.join(os.path.dirname(root), "UserFiles-evil")) == ["x.txt"], "nothing written outside")

        # The page's errors suggest nothing of `coffer rpc`'s methods or options (its hints are Core's).
        answer = await socket.call("files/list", {"path": "nomount:/"})
        suggestion = answer.get("error", {}).get("data", {}).get("suggestion", "")
        check(answer.get("error", {}).get("data", {}).get("kind") == "unknownMount" and suggestion
              and "initialize" not in suggestion and "coffer rpc" not in suggestion, f"a web error's hint names no RPC method: {suggestion!r}")

        # A replace over the WebSocket keeps what it replaces, restorable byte for byte (a file as a
        # version, a folder in the trash); a folder is replaced by a file only when asked (issue 30).
        os.makedirs(f"{root}/Replace/Album", exist_ok=True)
        for index in range(4):
            with open(f"{root}/Replace/Album/{index}.jpg", "wb") as file:
                file.write(bytes([index]) * 1000)
        with open(f"{root}/Replace/notes.txt", "wb") as file:
            file.write(b"old notes \xe7\xac\x94\xe8\xae\xb0\n")
        answer = await socket.call("files/write", {"path": "files:/Replace/notes.txt", "data": "new", "conflict": "replace"})
        check("result" in answer, "over the WebSocket, a write replaces a file")
        answer = await socket.call("files/write", {"path": "files:/Replace/Album", "data": "oops", "conflict": "replace"})
        check(answer.get("error", {}).get("data", {}).get("kind") == "fileExists" and len(os.listdir(f"{root}/Replace/Album")) == 4,
              "over the WebSocket, a write never replaces a folder unless asked")
        answer = await socket.call("files/write", {"path": "files:/Replace/Album", "data": "asked", "conflict": "replaceFolder"})
        check("result" in answer and open(f"{root}/Replace/Album").read() == "asked", "replaceFolder puts a file in a folder's place")
        items = (await socket.call("trash/list"))["result"]["items"]
        trashed = {item["originalPath"]: item["trashId"] for item in items}
        check("files:/Replace/Album" in trashed and "files:/Replace/notes.txt" not in trashed,
              "the replaced folder is in the trash, the replaced file is not")
        versions = (await socket.call("files/versions", {"path": "files:/Replace/notes.txt"}))["result"]["versions"]
        check(len(versions) == 1 and versions[0]["frontEnd"] == "web", f"the replaced file is a version, kept by the web: {versions}")
        answer = await socket.call("files/restoreVersion", {"path": "files:/Replace/notes.txt", "id": versions[0]["id"]})
        check("result" in answer and open(f"{root}/Replace/notes.txt", "rb").read() == b"old notes \xe7\xac\x94\xe8\xae\xb0\n",
              "the version restored over what replaced it, byte for byte")
        answer = await socket.call("trash/restore", {"trashId": trashed["files:/Replace/Album"], "conflict": "replaceFolder"})
        check("result" in answer and len(os.listdir(f"{root}/Replace/Album")) == 4, "the folder restored over what replaced it")
        # No conflict argument: the web's row of the defaults table asks (issue 31). A client that
        # did not say it answers `conflict/ask` cannot be asked: the copy fails, as at a piped REPL.
        answer = await socket.call("files/copy", {"path": "files:/Replace/notes.txt", "toDirectory": "files:/Replace"})
        check(answer.get("error", {}).get("data", {}).get("kind") == "fileExists",
              "a copy onto a taken name, with no one to ask, fails by the table")
        # A client that answers is asked by the session, told what is there, and its answer holds.
        asking = await rpc_socket(server, capabilities={"conflictQuestions": True})
        questions = []

        async def answering(message):
            questions.append(message["params"])
            return {"choice": "keepBoth"}
        asking.answer = answering
        answer = await asking.call("files/copy", {"path": "files:/Replace/notes.txt", "toDirectory": "files:/Replace"})
        check(answer.get("result", {}).get("path") == "files:/Replace/notes (2).txt", "asked, a copy onto a taken name keeps both")
        check(len(questions) == 1 and questions[0]["path"] == "files:/Replace/notes.txt"
              and questions[0]["existing"]["kind"] == "file"
              and "“notes.txt” (a file, 17 B) already exists in files:/Replace." in questions[0]["message"]
              and "kept as a version" in questions[0]["message"], f"the question says what is there: {questions}")
        # Cancel: nothing happens, and the answer says so.
        asking.answer = lambda message: asyncio.sleep(0, {"choice": "cancel"})
        answer = await asking.call("files/rename", {"path": "files:/Replace/notes (2).txt", "newName": "notes.txt"})
        check(answer.get("error", {}).get("code") == -32800
              and os.path.exists(f"{root}/Replace/notes (2).txt"), f"a cancelled question leaves both where they were: {answer}")
        await asking.close()
        audit = os.path.join(os.path.dirname(os.path.dirname(root)), "Library", "Application Support", "AppData", "logs", "audit.jsonl")
        entries = [json.loads(line) for line in open(audit, encoding="utf-8") if line.strip()]
        copies = [(entry["outcome"], entry["paths"]) for entry in entries if entry["frontEnd"] == "web" and entry["method"] == "copy"]
        check(copies[-2:] == [("fileExists", ["files:/Replace/notes.txt", "files:/Replace"]),
                              ("ok", ["files:/Replace/notes.txt", "files:/Replace/notes (2).txt"])],
              f"the copies' audit entries are the REPL's, RPC's and MCP's: {copies[-2:]}")
        os.remove(f"{root}/Replace/notes (2).txt")
        check(open(f"{root}/Replace/notes.txt", "rb").read() == b"old notes \xe7\xac\x94\xe8\xae\xb0\n"
              and sorted(os.listdir(f"{root}/Replace/Album")) == [f"{index}.jpg" for index in range(4)]
              and open(f"{root}/Replace/Album/3.jpg", "rb").read() == bytes([3]) * 1000, "restored byte for byte")
        await socket.close()
    asyncio.run(sockets())
    bad_frames(server)


def raw_websocket(server):
    """A WebSocket opened by hand, to send frames no library would (RFC 6455 allows a server
    to fail the connection for them)."""
    import socket as sockets
    connection = sockets.create_connection(("127.0.0.1", int(server.base.rsplit(":", 1)[1])), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    connection.sendall((f"GET /rpc HTTP/1.1\r\nHost: {server.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: {server.base}\r\n"
                        f"Authorization: Bearer {server.token}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += connection.recv(4096)
    check(head.startswith(b"HTTP/1.1 101"), f"a hand-made WebSocket opens ({head[:40]!r})")
    return connection


def frame(opcode, payload, fin=True, rsv=0):
    """One masked client frame."""
    mask = os.urandom(4)
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    length = len(payload)
    if length < 126:
        head = bytes([first, 0x80 | length])
    elif length < 1 << 16:
        head = bytes([first, 0x80 | 126]) + length.to_bytes(2, "big")
    else:
        head = bytes([first, 0x80 | 127]) + length.to_bytes(8, "big")
    return head + mask + bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))


def closed_by_server(connection, timeout=10):
    """Whether the server ends the connection (a close frame, then the end) within `timeout`."""
    connection.settimeout(timeout)
    try:
        while True:
            data = connection.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except OSError:
        return False


def bad_frames(server):
    """RFC 6455 §5.2/§5.4 and the message limit: a reserved bit, a reserved opcode, a continuation
    with no message begun, and a message whose fragments pass 16 MiB each fail the connection
    (issue 32); the server keeps serving others."""
    for name, data in [("a reserved bit", frame(1, b"{}", rsv=4)), ("a reserved opcode", frame(3, b"{}")),
                       ("a continuation with no message begun", frame(0, b"{}"))]:
        connection = raw_websocket(server)
        connection.sendall(data)
        check(closed_by_server(connection), f"{name} fails the WebSocket")
        connection.close()
    connection = raw_websocket(server)
    piece = b"x" * (1 << 20)
    sent = 0
    try:
        connection.sendall(frame(1, b'{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"path":"' + piece, fin=False))
        for _ in range(20):
            connection.sendall(frame(0, piece, fin=False))
            sent += 1
    except OSError:
        pass
    check(closed_by_server(connection), f"fragments past 16 MiB fail the WebSocket (sent {sent} MiB more)")
    connection.close()
    status, _, _ = http(server.base + "/", {"Authorization": f"Bearer {server.token}"})
    check(status == 200, "the server still answers")


def browser(server, root, screenshots):
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,860", "--lang=en-US"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    owned.adopt(driver.quit)
    downloads = tempfile.mkdtemp(prefix="coffer-web-downloads-")
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    wait = WebDriverWait(driver, 15)

    def names():
        return driver.execute_script(
            "return [...document.querySelectorAll('#items li .name span:last-child')].map((e) => e.textContent)")

    def row(name):
        for element in driver.find_elements(By.CSS_SELECTOR, "#items li"):
            label = element.find_elements(By.CSS_SELECTOR, ".name span:last-child")
            if label and label[0].text == name:
                return element
        raise SystemExit(f"web_check: FAILED: no row {name!r} in {names()}")

    def click_row(name, double=False):
        """Clicks a row, again when a live update has just redrawn the list."""
        for _ in range(30):
            try:
                element = row(name)
                if double:
                    webdriver.ActionChains(driver).double_click(element).perform()
                else:
                    element.click()
                return
            except StaleElementReferenceException:
                time.sleep(0.1)
        raise SystemExit(f"web_check: FAILED: the row {name!r} kept changing")

    def shot(name):
        if screenshots:
            driver.save_screenshot(os.path.join(screenshots, name))

    def no_script_ran():
        try:
            driver.switch_to.alert
            return False
        except NoAlertPresentException:
            pass
        return not driver.execute_script("return window.pwned === 1")

    try:
        driver.get(server.url)
        wait.until(lambda d: "Photos" in names())
        check(driver.current_url.rstrip("/") == server.base, "the token leaves the address bar")
        check(no_script_ran() and all(name in names() for name in XSS_NAMES), "XSS names are shown as text and run nothing")
        shot("web-files.png")

        # Navigate, and come back by the breadcrumbs.
        click_row("Photos", double=True)
        wait.until(lambda d: "photo.png" in names())
        check([b.text for b in driver.find_elements(By.CSS_SELECTOR, "#breadcrumbs button")] == ["files", "Photos"], "breadcrumbs")

        # Favourites: the folder marked from the page is in the side bar (and the REPL's `fav`); one click
        # from anywhere goes back to it.
        driver.find_element(By.ID, "add-favourite").click()
        wait.until(lambda d: [b.text for b in d.find_elements(By.CSS_SELECTOR, "#favourites-list button")] == ["Photos"])
        favourites = subprocess.run([COFFER, "--container", server.container, "-c", "fav"], capture_output=True, text=True).stdout
        check("files:/Photos" in favourites, f"a favourite marked on the page is the REPL's too: {favourites!r}")
        driver.find_elements(By.CSS_SELECTOR, "#breadcrumbs button")[0].click()
        wait.until(lambda d: "Photos" in names() and "photo.png" not in names())
        driver.find_element(By.CSS_SELECTOR, "#favourites-list button").click()
        wait.until(lambda d: "photo.png" in names())
        check(True, "a favourite in the side bar opens its folder")

        # A preview: the image, its facts.
        click_row("photo.png")
        wait.until(lambda d: "640 × 480" in d.find_element(By.ID, "preview-facts").text)
        # The image loads after the facts are shown: waited for, not read at once (a loaded CI is slower).
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#preview-body img").get_attribute("naturalWidth") == "640")
        check(True, "image preview")
        shot("web-preview.png")

        # New folder.
        driver.find_element(By.ID, "new-folder").click()
        alert = wait.until(lambda d: d.switch_to.alert)
        alert.send_keys("Albums")
        alert.accept()
        wait.until(lambda d: "Albums" in names())
        check(os.path.isdir(f"{root}/Photos/Albums"), "new folder on disk")

        # Rename in place (F2).
        click_row("notes.txt")
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.F2)
        field = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#items li input"))
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys("笔记 2026.txt", Keys.ENTER)
        wait.until(lambda d: "笔记 2026.txt" in names())
        check(os.path.exists(f"{root}/Photos/笔记 2026.txt") and not os.path.exists(f"{root}/Photos/notes.txt"), "renamed on disk")

        # Edit a text and save it over the version read; another writer's save in between is
        # not overwritten without a word: the page asks, and "keep editing" loses nothing.
        click_row("笔记 2026.txt")
        wait.until(lambda d: d.find_element(By.ID, "edit")).click()
        area = wait.until(lambda d: d.find_element(By.ID, "editor"))
        area.send_keys(Keys.CONTROL, "a")
        area.send_keys("mine, from the page")
        with open(f"{root}/Photos/笔记 2026.txt", "w") as file:
            file.write("theirs, from another program")
        driver.find_element(By.ID, "save").click()
        wait.until(lambda d: d.find_element(By.ID, "changed").get_attribute("open") is not None)
        shot("web-changed.png")
        said = driver.find_element(By.ID, "changed-text").text
        check("changed by someone else after it was read" in said, f"a refused save says the file changed: {said!r}")
        driver.find_element(By.ID, "keep-editing").click()
        check(open(f"{root}/Photos/笔记 2026.txt").read() == "theirs, from another program", "a refused save writes nothing")
        check(driver.find_element(By.ID, "editor").get_attribute("value") == "mine, from the page", "keep editing keeps the text")
        driver.find_element(By.ID, "save").click()
        wait.until(lambda d: d.find_element(By.ID, "changed").get_attribute("open") is not None)
        driver.find_element(By.ID, "overwrite").click()
        wait.until(lambda d: text_of(f"{root}/Photos/笔记 2026.txt") == "mine, from the page")
        kept = subprocess.run([COFFER, "--container", server.container, "-c", "versions 'Photos/笔记 2026.txt'"],
                              capture_output=True, text=True, timeout=60).stdout
        check(len(kept.splitlines()) >= 1 and "web" in kept, f"what an overwrite replaced is a version: {kept!r}")
        area = driver.find_element(By.ID, "editor")
        area.send_keys(" again")
        driver.find_element(By.ID, "save").click()
        wait.until(lambda d: text_of(f"{root}/Photos/笔记 2026.txt") == "mine, from the page again")
        check(driver.find_element(By.ID, "changed").get_attribute("open") is None, "a save over its own version asks nothing")
        # Changed once more: kept aside in files:/Recovered, the file left as the other writer left it.
        with open(f"{root}/Photos/笔记 2026.txt", "w") as file:
            file.write("theirs again")
        driver.find_element(By.ID, "editor").send_keys(" and more")
        driver.find_element(By.ID, "save").click()
        wait.until(lambda d: d.find_element(By.ID, "changed").get_attribute("open") is not None)
        driver.find_element(By.ID, "keep-recovered").click()
        wait.until(lambda d: text_of(f"{root}/Recovered/笔记 2026.txt") == "mine, from the page again and more")
        check(text_of(f"{root}/Photos/笔记 2026.txt") == "theirs again", "keeping in Recovered leaves the file alone")

        # Upload through the file input.
        source = os.path.join(tempfile.mkdtemp(), "upload me.bin")
        payload = os.urandom(2_500_000)
        with open(source, "wb") as file:
            file.write(payload)
        picker = driver.find_element(By.ID, "upload")
        picker.send_keys(source)
        wait.until(lambda d: "upload me.bin" in names())
        with open(f"{root}/Photos/upload me.bin", "rb") as file:
            check(file.read() == payload, "uploaded bytes are on disk, identical")

        # Download it back.
        click_row("upload me.bin")
        wait.until(lambda d: d.find_element(By.ID, "download").get_attribute("href"))
        driver.find_element(By.ID, "download").click()
        target = os.path.join(downloads, "upload me.bin")
        for _ in range(100):
            if os.path.exists(target) and os.path.getsize(target) == len(payload):
                break
            time.sleep(0.1)
        with open(target, "rb") as file:
            check(file.read() == payload, "downloaded back, identical")

        # The conflict question: the same name again, answered "keep both".
        picker = driver.find_element(By.ID, "upload")
        picker.send_keys(source)
        wait.until(lambda d: d.find_element(By.ID, "conflict").get_attribute("open") is not None)
        shot("web-conflict.png")
        question = driver.find_element(By.ID, "conflict-text").text
        check("“upload me.bin” (a file," in question and "already exists in files:/Photos." in question
              and "If it is replaced, it is kept as a version." in question,
              f"the session's conflict question says what is there and where a replace puts it: {question!r}")
        driver.find_element(By.ID, "keep-both").click()
        wait.until(lambda d: "upload me (2).bin" in names())
        check(os.path.exists(f"{root}/Photos/upload me (2).bin"), "keep both: a second copy under a new name")

        # Move by drag and drop onto a folder.
        driver.execute_script("""
            const [item, folder] = arguments;
            const data = new DataTransfer();
            item.dispatchEvent(new DragEvent('dragstart', {dataTransfer: data, bubbles: true}));
            folder.dispatchEvent(new DragEvent('dragover', {dataTransfer: data, bubbles: true, cancelable: true}));
            folder.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true}));
        """, row("upload me (2).bin"), row("Albums"))
        wait.until(lambda d: "upload me (2).bin" not in names())
        check(os.path.exists(f"{root}/Photos/Albums/upload me (2).bin"), "moved by drag and drop")

        # Trash (Delete key) and restore. One item of that name goes to the trash from the REPL first,
        # so that the trash holds two of them below (what an overwrite replaced is a version now).
        subprocess.run([COFFER, "--container", server.container, "-c",
                        "cp 'Photos/笔记 2026.txt' 'Photos/笔记 copy.txt'; rm 'Photos/笔记 2026.txt'; "
                        "mv 'Photos/笔记 copy.txt' 'Photos/笔记 2026.txt'"], check=True, capture_output=True, timeout=60)
        wait.until(lambda d: "笔记 copy.txt" not in names() and "笔记 2026.txt" in names())
        click_row("笔记 2026.txt")
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.DELETE)
        wait.until(lambda d: "笔记 2026.txt" not in names())
        check(not os.path.exists(f"{root}/Photos/笔记 2026.txt"), "trashed")
        driver.find_element(By.ID, "show-trash").click()
        wait.until(lambda d: "笔记 2026.txt" in names())
        shot("web-trash.png")
        # (The item the REPL trashed above is there under the same name.)
        trashed = names().count("笔记 2026.txt")
        row("笔记 2026.txt").find_element(By.TAG_NAME, "button").click()
        wait.until(lambda d: names().count("笔记 2026.txt") == trashed - 1)
        check(os.path.exists(f"{root}/Photos/笔记 2026.txt"), "restored to where it was")
        # One item of the trash deleted for good, asked first (issue 48: only the REPL could).
        check(trashed >= 2, "the item the REPL trashed is in the trash too")

        def trash_count():
            """The trash's items that came from files:/Photos/笔记 2026.txt (one line each: the name in
            the trash, which may be `笔记 2026 (2).txt`, then where it came from)."""
            listed = subprocess.run([COFFER, "--container", server.container, "-c", "trash"], capture_output=True,
                                    text=True, timeout=60).stdout
            return sum(1 for line in listed.splitlines() if "files:/Photos/笔记 2026.txt" in line)

        # The page settles first: its rows are the trash's own (what the restore left) for half a
        # second, so the row chosen below is not one of a list about to be drawn again.
        settled_since, deadline = None, time.monotonic() + 15
        while time.monotonic() < deadline:
            agrees = names().count("笔记 2026.txt") == trashed - 1 == trash_count()
            settled_since = (settled_since or time.monotonic()) if agrees else None
            if settled_since and time.monotonic() - settled_since >= 0.5:
                break
            time.sleep(0.1)
        # Every message the page shows from here on is kept, for a failure to quote.
        driver.execute_script("""
            window.shownMessages = [];
            new MutationObserver(() => window.shownMessages.push(document.getElementById("message").textContent))
                .observe(document.getElementById("message"), { childList: true, characterData: true, subtree: true });""")
        before = subprocess.run([COFFER, "--container", server.container, "-c", "trash"], capture_output=True,
                                text=True, timeout=60).stdout
        click_row("笔记 2026.txt")
        chosen = driver.execute_script("return [...document.querySelectorAll('#items li.selected')].map((e) => e.outerHTML)")
        driver.find_element(By.ID, "delete-forever").click()
        question = wait.until(lambda d: d.find_element(By.ID, "confirm").is_displayed() and d.find_element(By.ID, "confirm"))
        check("for good" in question.text, f"deleting for good asks first: {question.text!r}")
        driver.find_element(By.ID, "confirm-yes").click()
        wait.until(lambda d: names().count("笔记 2026.txt") == trashed - 2)
        # The page may show that count while it draws the trash again (an empty list on the way,
        # when two were there): the trash itself is asked, until it agrees or ten seconds pass.
        deadline = time.monotonic() + 10
        while True:
            left = trash_count()
            if left == trashed - 2 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if left != trashed - 2:
            after = subprocess.run([COFFER, "--container", server.container, "-c", "trash"], capture_output=True,
                                   text=True, timeout=60).stdout
            audit = os.path.join(server.container, "Library", "Application Support", "AppData", "logs", "audit.jsonl")
            lines = [line for line in open(audit, encoding="utf-8") if "rash" in line][-6:]
            shown = driver.execute_script("return window.shownMessages")
            check(False, f"Delete Permanently deletes that item of the trash alone: {left} of {trashed} left; the page said "
                         f"{shown!r}; chosen {chosen!r}; the trash before {before!r} and after {after!r}; audit {lines!r}; "
                         f"console {driver.get_log('browser')[-5:]!r}")
        check(True, "Delete Permanently deletes that item of the trash alone")
        driver.find_element(By.ID, "leave-trash").click()

        # Search as you type.
        search = driver.find_element(By.ID, "search")
        search.send_keys("photo")
        wait.until(lambda d: "photo.png" in names() and "Albums" not in names())
        check(True, "search as you type")
        search.send_keys(Keys.CONTROL, "a")
        search.send_keys(Keys.BACKSPACE)
        wait.until(lambda d: "Albums" in names())

        # A change made by another program appears without reloading.
        with open(f"{root}/Photos/from elsewhere.txt", "w") as file:
            file.write("written by another process\n")
        wait.until(lambda d: "from elsewhere.txt" in names())
        check(True, "a change from another process appears live")

        # Keyboard: down, Enter opens a folder, Backspace goes up.
        driver.find_element(By.ID, "listing").click()
        body = driver.find_element(By.TAG_NAME, "body")
        click_row("Albums")
        body.send_keys(Keys.ENTER)
        wait.until(lambda d: "upload me (2).bin" in names())
        body.send_keys(Keys.BACKSPACE)
        wait.until(lambda d: "Albums" in names())
        check(True, "keyboard navigation")

        # A folder of 100,000 entries shows its first rows in under a second.
        driver.find_element(By.CSS_SELECTOR, "#breadcrumbs button").click()
        wait.until(lambda d: "Many" in names())
        started = time.monotonic()
        click_row("Many", double=True)
        wait.until(lambda d: "item 000001.txt" in names())
        elapsed = time.monotonic() - started
        # Timed, but not judged here (this machine's load decides it): Benchmarks/web.py measures
        # the release build. What must hold is that one page is drawn, not 100,000 rows.
        check(len(names()) == 500 and driver.find_element(By.ID, "more").is_displayed(),
              f"100,000 entries: the first page of 500 rows after {elapsed:.2f} s, the rest on demand")
        driver.find_element(By.CSS_SELECTOR, "#breadcrumbs button").click()
        wait.until(lambda d: "Photos" in names())

        # Phone width.
        driver.set_window_size(360, 740)
        time.sleep(0.3)
        check(driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1"),
              "usable at 360 px: nothing wider than the screen")
        shot("web-phone.png")
        driver.set_window_size(1280, 860)

        # The language.
        from selenium.webdriver.support.ui import Select
        Select(driver.find_element(By.ID, "language")).select_by_value("zh-Hans")
        wait.until(lambda d: d.find_element(By.ID, "new-folder").text == "新建文件夹")
        wait.until(lambda d: "Photos" in names())
        check(True, "switched to Simplified Chinese")
        driver.find_element(By.ID, "new-folder").click()
        alert = wait.until(lambda d: d.switch_to.alert)
        alert.send_keys("Photos")
        alert.accept()
        wait.until(lambda d: d.find_element(By.ID, "message").is_displayed())
        check("已存在" in driver.find_element(By.ID, "message").text, "errors in the user's language")
        shot("web-chinese.png")
        check(no_script_ran(), "after everything, no script of a user's file ran")
        severe = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE" and "favicon" not in entry["message"]]
        check(not severe, f"no errors in the browser's console: {severe}")
    finally:
        driver.quit()


def load(server, root):
    async def client(number, deadline, errors):
        socket = await rpc_socket(server)
        folder = f"files:/load/{number}"
        await socket.call("files/createDirectory", {"path": folder, "intermediate": True})
        count = 0
        while time.monotonic() < deadline:
            count += 1
            choice = random.random()
            name = f"{folder}/f{count % 7}.txt"
            if choice < 0.3:
                answer = await socket.call("files/write", {"path": name, "data": "x" * random.randint(1, 5000), "conflict": "replace"})
            elif choice < 0.6:
                answer = await socket.call("files/list", {"path": folder})
            elif choice < 0.7:
                answer = await socket.call("files/copy", {"path": name, "toDirectory": folder, "conflict": "keepBoth"})
            elif choice < 0.8:
                begun = await socket.call("files/upload/begin", {"path": f"{folder}/up{count}.bin", "conflict": "replace"})
                if "result" in begun:
                    upload = begun["result"]["uploadId"]
                    await socket.call("files/upload/append", {"uploadId": upload, "offset": 0,
                                                              "data": base64.b64encode(os.urandom(100_000)).decode()})
                    answer = await socket.call("files/upload/commit", {"uploadId": upload})
                else:
                    answer = begun
            elif choice < 0.9:
                answer = await socket.call("files/stat", {"path": folder})
            else:
                answer = await socket.call("files/search", {"query": "f1", "limit": 10})
            error = answer.get("error")
            if error and error.get("data", {}).get("kind") not in ("noSuchFile",):
                errors.append(error)
        await socket.close()
        return count

    async def run():
        deadline = time.monotonic() + float(os.environ.get("COFFER_WEB_LOAD_SECONDS", "30"))
        errors = []
        counts = await asyncio.gather(*(client(number, deadline, errors) for number in range(50)))
        return sum(counts), errors

    total, errors = asyncio.run(run())
    check(not errors, f"50 clients for 30 s: {total} requests, no error {errors[:3]}")


def nested_forms_pdf(levels=28):
    """A few KB of PDF whose page draws a form drawing the next twice, `levels` deep."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /XObject << /F 5 0 R >> >> >>",
               "<< /Length 5 >>\nstream\n/F Do\nendstream"]
    for level in range(levels):
        last = level == levels - 1
        content = "0 0 1 rg 0 0 200 200 re f" if last else "/F Do /F Do"
        resources = "" if last else f"/Resources << /XObject << /F {6 + level} 0 R >> >> "
        objects.append(f"<< /Type /XObject /Subtype /Form /BBox [0 0 200 200] {resources}/Length {len(content)} >>\n"
                       f"stream\n{content}\nendstream")
    text, offsets = "%PDF-1.4\n", []
    for index, body in enumerate(objects):
        offsets.append(len(text))
        text += f"{index + 1} 0 obj\n{body}\nendobj\n"
    table = len(text)
    text += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n" + "".join(f"{offset:010d} 00000 n \n" for offset in offsets)
    text += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{table}\n%%EOF\n"
    return text.encode()


def stops_while_rendering(container, root):
    """The page asks a thumbnail of a PDF that would render for hours; SIGTERM still ends the
    server within a couple of seconds (the decoder is a child process, killed on stop)."""
    with open(f"{root}/forms.pdf", "wb") as file:
        file.write(nested_forms_pdf())
    server = Server(container)
    def ask():
        try:
            http(f"{server.base}/thumbnail?path={urllib.parse.quote('files:/forms.pdf')}&size=256",
                 {"Authorization": f"Bearer {server.token}"})
        except OSError:
            pass  # the server went away under it, as it should
    asked = threading.Thread(target=ask, daemon=True)
    asked.start()
    time.sleep(1.5)
    started = time.monotonic()
    status = server.stop()
    took = time.monotonic() - started
    check(status == 0 and took < 5, f"SIGTERM during a hostile render: a clean exit in {took:.2f} s")
    os.remove(f"{root}/forms.pdf")


def opening(container, work):
    """`serve --open`: the browser is handed a file only its owner reads, holding an address that
    lets in once; neither the token nor a usable address is in any process's arguments."""
    fake = os.path.join(work, "bin")
    os.makedirs(fake, exist_ok=True)
    record = os.path.join(work, "xdg-open-args")
    with open(os.path.join(fake, "xdg-open"), "w") as file:
        file.write(f"#!/bin/sh\nprintf '%s' \"$*\" > '{record}'\n")
    os.chmod(os.path.join(fake, "xdg-open"), 0o755)
    runtime = os.path.join(work, "runtime")
    os.makedirs(runtime, mode=0o700)
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}", XDG_RUNTIME_DIR=runtime)
    original = os.environ.copy()
    os.environ.update(env)
    try:
        server = Server(container, "--open")
    finally:
        os.environ.clear()
        os.environ.update(original)
    for _ in range(100):
        if os.path.exists(record):
            break
        time.sleep(0.05)
    argument = open(record).read()
    check(server.token not in argument and "once=" not in argument and argument.startswith(runtime + "/"),
          f"--open hands the opener a file path, no token or address: {argument!r}")
    info = os.stat(argument)
    check(stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid(), "the file is readable by its owner only")
    page = open(argument).read()
    match = re.search(r'url=(http://[^"]+/\?once=[0-9a-f]+)"', page)
    check(match is not None and server.token not in page, "it sends the browser to a one-time address")
    status, headers, _ = http(match.group(1))
    check(status == 303 and headers.get("Set-Cookie", "").startswith(f"coffer_{server.base.rsplit(':', 1)[1]}="),
          "the one-time address is traded for the cookie")
    status, _, _ = http(match.group(1))
    check(status == 403, "and lets nobody in a second time")
    log = open(server.log.name).read()
    check(server.token not in log, "the token is in no log line")
    check(server.stop() == 0 and not os.path.exists(argument), "the file is removed when the server stops")


def main():
    work = tempfile.mkdtemp(prefix="coffer-web-check-")
    container = os.path.join(work, "container")
    subprocess.run([COFFER, "--container", container, "-c", "mkdir Photos Many"], check=True, stdout=subprocess.DEVNULL)
    root = os.path.join(container, "Documents", "UserFiles")
    Image.new("RGB", (640, 480), (40, 120, 200)).save(f"{root}/Photos/photo.png")
    with open(f"{root}/Photos/notes.txt", "w") as file:
        file.write("first line\nsecond line\n")
    with open(f"{root}/Photos/big.bin", "wb") as file:
        file.write(os.urandom(300_000))
    with open(f"{root}/page.html", "wb") as file:
        file.write(XSS_CONTENT)
    for name in XSS_NAMES:
        with open(os.path.join(root, name), "wb") as file:
            file.write(XSS_CONTENT)
    # A link out of the mount, to a file of ours (never a system file: a failure must not harm the machine).
    secret = os.path.join(work, "outside-secret.txt")
    with open(secret, "w") as file:
        file.write("SECRET outside the mount\n")
    os.symlink(secret, f"{root}/link-out")
    os.mkfifo(f"{root}/fifo")
    try:  # a character device, as root can make one (the same as /dev/null)
        os.mknod(f"{root}/null-device", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pass
    os.makedirs(os.path.join(container, "Documents", "UserFiles-evil"))
    with open(os.path.join(container, "Documents", "UserFiles-evil", "x.txt"), "w") as file:
        file.write("EVIL")
    for index in range(100_000):
        os.close(os.open(f"{root}/Many/item {index:06d}.txt", os.O_CREAT | os.O_WRONLY, 0o644))

    server = Server(container)
    try:
        security(server, root)
        browser(server, root, SHOTS)
        load(server, root)
    finally:
        status = server.stop()
    check(status == 0, "SIGTERM: a clean exit (status 0)")
    leftovers = [os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names
                 if name.startswith(".coffer-partial-")]
    check(not leftovers, f"nothing partial left ({leftovers[:3]})")

    # A new token (another `coffer serve --new-token` on the container) ends the sessions of the old one.
    server = Server(container)
    async def renewed():
        socket = await rpc_socket(server)
        second = Server(container, "--new-token")
        try:
            check(second.token != server.token, "--new-token issues a new token")
            while True:
                await asyncio.wait_for(socket.recv(), timeout=5)
        except websockets.exceptions.ConnectionClosed:
            return second
        except asyncio.TimeoutError:
            second.stop()
            return None
    second = asyncio.run(renewed())
    check(second is not None, "a new token closes the sessions of the old one")
    status, _, _ = http(server.base + "/", {"Authorization": f"Bearer {server.token}"})
    check(status == 403, "the old token no longer opens the page")
    status, _, _ = http(server.base + "/", {"Authorization": f"Bearer {second.token}"})
    check(status == 200, "the new one does")
    check(second.stop() == 0 and server.stop() == 0, "both servers stop cleanly")
    opening(container, work)
    stops_while_rendering(container, os.path.join(container, "Documents", "UserFiles"))
    shutil.rmtree(work, ignore_errors=True)
    print("web_check: every check passed")


if __name__ == "__main__":
    main()
