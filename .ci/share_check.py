#!/usr/bin/env python3
"""End-to-end checks of share links (`coffer share`, `coffer serve`'s /s/ID) over HTTP and in
headless Chromium, as a visitor without the access token meets them.

  pinned     a file share serves that file and nothing else; a folder share its tree: a sibling,
             the parent, `..` (plain and encoded), an encoded slash and a link inside that points
             out are refused
  ending     an expired link answers 410; a revoked one 404, also to the next range of a download
             under way; a download limit ends the link after that many finished downloads
  password   asked before anything is shown; wrong ones are rate-limited (429, Retry-After)
  drop box   uploads land in the folder, never over anything, and nothing of it is listed; the
             multipart bodies are cross-checked with python-multipart's reading of the same bytes
  closed     the token-protected browser stays closed to a visitor; --share-only serves links only
  audit      every access is in the audit log with the share, the client and the bytes
  zip        a shared folder downloads as a .zip streamed by libarchive (read back with zipfile)
  browser    Chromium opens a file share and downloads it, and unlocks a password share
Usage: share_check.py PATH-TO-COFFER   (needs selenium and python-multipart)
"""
import owned  # every process this check starts is ended with it (.ci/owned.py)
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

import serve_support
from serve_support import checker

COFFER = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="coffer-share-check-")
CONTAINER = os.path.join(WORK, "container")
FILES = os.path.join(CONTAINER, "Documents", "UserFiles")
AUDIT = os.path.join(CONTAINER, "Library", "Application Support", "AppData", "logs", "audit.jsonl")


check = checker("share_check")


def coffer(command, stdin=""):
    result = subprocess.run([COFFER, "--container", CONTAINER, "--lang", "en", "-c", command], input=stdin,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"share_check: coffer -c {command!r} failed: {result.stderr}")
    return result.stdout


def share(arguments, stdin=""):
    line = coffer("share " + arguments, stdin)
    match = re.match(r"(/s/[A-Za-z0-9_-]{22})\s", line)
    if not match:
        raise SystemExit(f"share_check: no link from share {arguments}: {line!r}")
    return match.group(1)


def Server(*extra, environment=None):
    return serve_support.Server(COFFER, CONTAINER, *extra, environment=environment)


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


OPENER = urllib.request.build_opener(NoRedirects)


def http(url, data=None, headers=None, method=None):
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with OPENER.open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def multipart(files, boundary="----coffer-check-7d1f"):
    """A form body as a browser sends it, with the bytes given."""
    body = io.BytesIO()
    for name, content in files:
        body.write(f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\n"
                   "Content-Type: application/octet-stream\r\n\r\n".encode())
        body.write(content)
        body.write(b"\r\n")
    body.write(f"--{boundary}--\r\n".encode())
    return body.getvalue(), f"multipart/form-data; boundary={boundary}"


def python_multipart_files(body, content_type):
    """What python-multipart reads from the same body: file names and contents."""
    import multipart as pm  # python-multipart
    found, current = [], {}

    def on_part_begin():
        current.clear()
        current["data"] = b""

    def on_header_field(data, start, end):
        current["field"] = data[start:end].decode()

    def on_header_value(data, start, end):
        if current.get("field", "").lower() == "content-disposition":
            match = re.search(r'filename="([^"]*)"', data[start:end].decode())
            current["name"] = match.group(1) if match else None

    def on_part_data(data, start, end):
        current["data"] += data[start:end]

    def on_part_end():
        found.append((current.get("name"), current["data"]))

    boundary = content_type.split("boundary=")[1]
    parser = pm.MultipartParser(boundary, {"on_part_begin": on_part_begin, "on_header_field": on_header_field,
                                           "on_header_value": on_header_value, "on_part_data": on_part_data,
                                           "on_part_end": on_part_end})
    parser.write(body)
    parser.finalize()
    return found


def main():
    coffer("mkdir Docs Docs/Sub Inbox Big")
    with open(os.path.join(FILES, "Docs", "a.txt"), "wb") as out:
        out.write(b"shared file\n")
    with open(os.path.join(FILES, "Docs", "Sub", "b.txt"), "wb") as out:
        out.write(b"below\n")
    with open(os.path.join(FILES, "secret.txt"), "wb") as out:
        out.write(b"not shared\n")
    with open(os.path.join(FILES, "Docs", "sibling.txt"), "wb") as out:
        out.write(b"sibling\n")
    big = os.urandom(8 << 20)
    with open(os.path.join(FILES, "Big", "big.bin"), "wb") as out:
        out.write(big)
    os.symlink("../secret.txt", os.path.join(FILES, "Docs", "Sub", "out.txt"))
    with open(os.path.join(FILES, "Inbox", "taken.txt"), "wb") as out:
        out.write(b"already here\n")

    file_link = share("Docs/a.txt")
    folder_link = share("Docs/Sub")
    server = Server()
    base = server.base
    try:
        # Pinned to exactly what was shared.
        status, headers, page = http(base + file_link)
        check(status == 200 and b"<h1>a.txt</h1>" in page and b"<script" not in page, "a file share's page names the file, without script")
        check("default-src 'none'" in headers.get("Content-Security-Policy", ""), "share pages run no script")
        status, headers, body = http(base + file_link + "/raw")
        check(status == 200 and body == b"shared file\n" and "attachment" in headers.get("Content-Disposition", ""),
              "the file downloads as an attachment")
        for path in ["/raw/sibling.txt", "/p/sibling.txt", "/p/..", "/raw/..%2Fsecret.txt", "/p/%2e%2e/sibling.txt"]:
            status, _, body = http(base + file_link + path)
            check(status == 404 and b"not shared" not in body and b"sibling" not in body, f"a file share refuses {path}")
        status, _, page = http(base + folder_link)
        check(status == 200 and b"b.txt" in page and b"out.txt" not in page, "a folder share lists its items, not the link")
        check(http(base + folder_link + "/raw/b.txt")[2] == b"below\n", "a file below a shared folder downloads")
        import zipfile
        status, headers, body = http(base + folder_link + "/zip")
        archive = zipfile.ZipFile(io.BytesIO(body))
        check(status == 200 and headers.get("Transfer-Encoding") == "chunked" and archive.testzip() is None
              and archive.read("Sub/b.txt") == b"below\n" and not any("out.txt" in n for n in archive.namelist()),
              f"the folder downloads as a zip, made as it is sent, without the link: {archive.namelist()}")
        # A deeper tree (issue 49: walked by the visitor's session, each file read in pieces):
        # folders in folders, a package, Chinese names, a file of several MiB; hidden items,
        # links and a pipe left out.
        tree = os.path.join(FILES, "Docs", "Tree")
        os.makedirs(os.path.join(tree, "一", "二", "三"))
        os.makedirs(os.path.join(tree, "Notes.rtfd"))
        contents = {"top.txt": b"top\n", "一/二/三/深.txt": "深\n".encode(), "Notes.rtfd/TXT.rtf": b"{\\rtf1}",
                    "一/big.bin": os.urandom((3 << 20) + 7), ".hidden": b"no"}
        for name, data in contents.items():
            with open(os.path.join(tree, name), "wb") as out:
                out.write(data)
        os.symlink("top.txt", os.path.join(tree, "link.txt"))
        os.mkfifo(os.path.join(tree, "pipe"))
        status, _, body = http(base + share("Docs/Tree") + "/zip")
        archive = zipfile.ZipFile(io.BytesIO(body))
        expected = {"Tree/" + name: data for name, data in contents.items() if not name.startswith(".")}
        files_in = {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}
        check(status == 200 and archive.testzip() is None and files_in == expected,
              f"a deep tree zips whole, packages and Chinese names in, hidden items, links and pipes out: {sorted(files_in)}")
        check({"Tree/一/", "Tree/一/二/", "Tree/一/二/三/", "Tree/Notes.rtfd/"} <= set(archive.namelist()),
              "its folders are in it too")
        for path in ["/raw/out.txt", "/p/out.txt", "/raw/..%2Fa.txt", "/raw/%2e%2e/a.txt", "/raw/..%2F..%2Fsecret.txt",
                     "/p/%2e%2e", "/raw/%2E%2E%2Fsibling.txt"]:
            status, _, body = http(base + folder_link + path)
            check(status == 404 and b"not shared" not in body and b"sibling" not in body, f"a folder share refuses {path}")
        status, _, body = http(base + folder_link + "/raw/b.txt%00/../../secret.txt")
        check(body == b"below\n", "a NUL cuts a name short, to an item inside the share, never out of it")
        with open(os.path.join(FILES, "Docs", "Sub", "50% done.txt"), "wb") as out:
            out.write(b"percent\n")
        check(b"/p/50%25%20done.txt" in http(base + folder_link)[2]
              and http(base + folder_link + "/raw/50%25%20done.txt")[2] == b"percent\n", "a name with % is linked and served")
        status, _, _ = http(base + "/s/" + "A" * 22)
        check(status == 404, "an unknown link is 404")

        # The browser stays closed to a visitor.
        for path in ["/", "/content?path=files:/secret.txt", "/thumbnail?path=files:/secret.txt", "/app.js"]:
            check(http(base + path)[0] == 403, f"without the token {path} is refused")

        # Ending: expiry, revocation mid-download, a download limit.
        rpc = subprocess.run([COFFER, "--container", CONTAINER, "rpc"], capture_output=True, text=True, input="\n".join([
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
            json.dumps({"jsonrpc": "2.0", "id": 2, "method": "shares/create",
                        "params": {"path": "files:/Docs/a.txt", "expires": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3))}}),
        ]) + "\n")
        answer = json.loads(rpc.stdout.strip().splitlines()[-1])
        expiring = answer["result"]["link"]
        check(http(base + expiring + "/raw")[0] == 200, "a link before its expiry answers")
        time.sleep(4)
        check(http(base + expiring + "/raw")[0] == 410 and http(base + expiring)[0] == 410, "an expired link answers 410")

        big_link = share("Big/big.bin")
        status, _, first = http(base + big_link + "/raw", headers={"Range": "bytes=0-1048575"})
        check(status == 206 and first == big[:1 << 20], "a download begins with a range")
        coffer("unshare " + big_link[3:])
        status, _, _ = http(base + big_link + "/raw", headers={"Range": "bytes=1048576-"})
        check(status == 404, "its next range after the link was revoked is refused")

        limited = share("Big/big.bin --downloads 2")
        check(http(base + limited + "/raw", headers={"Range": "bytes=0-99"})[0] == 206, "a partial read does not count")
        check(http(base + limited + "/raw")[2] == big, "first download whole")
        status, _, body = http(base + limited + "/raw", headers={"Range": "bytes=100-"})
        check(status == 206 and body == big[100:], f"second download, resumed to the end ({status}, {len(body)} bytes)")
        check(http(base + limited + "/raw")[0] == 410, "the third download finds the link ended (410)")
        check("1 of" not in coffer("shares") and "(no downloads left)" in coffer("shares"), "shares says no downloads are left")
        # "Download all as .zip" counts too (issue 48: five zips of a one-download folder share were sent).
        zipped = share("Docs/Sub --downloads 1")
        zipped_id = zipped.rsplit("/", 1)[-1]
        # A HEAD says what a GET would get and downloads nothing: headers alone, nothing counted.
        for path in ("/zip", ""):
            status, headers, body = http(base + zipped + path, method="HEAD")
            check(status == 200 and body == b"", f"HEAD {path or '/'}: 200 and no body ({status}, {len(body)} bytes)")
        once = share("Big/big.bin --downloads 1")
        status, headers, body = http(base + once + "/raw", method="HEAD")
        check(status == 200 and headers.get("Content-Length") == str(len(big)) and body == b"",
              f"HEAD of a file: its length, no body ({status}, {headers.get('Content-Length')})")
        listed = [entry for entry in coffer("shares").splitlines() if zipped_id in entry or once[3:] in entry]
        check(len(listed) == 2 and all("0 of 1 downloads" in entry for entry in listed), f"no HEAD counts as a download: {listed}")
        check(http(base + once + "/raw")[2] == big, "and the GET after it downloads the file whole")
        check(http(base + zipped + "/zip")[0] == 200, "a folder share's one download, as a zip")
        check(http(base + zipped + "/zip")[0] == 410 and http(base + zipped)[0] == 410, "a second zip finds the link ended (410)")
        line = next(entry for entry in coffer("shares").splitlines() if zipped_id in entry)
        check("(no downloads left)" in line, f"shares counts the zip: {line!r}")

        # Password.
        locked = share("Docs --password", stdin="open sesame\n")
        status, _, page = http(base + locked)
        check(status == 200 and b'type="password"' in page and b"a.txt" not in page, "a password share asks first")
        check(http(base + locked + "/raw/a.txt")[0] == 403, "and serves nothing before")
        status, headers, _ = http(base + locked, data=b"password=open+sesame",
                                  headers={"Content-Type": "application/x-www-form-urlencoded"})
        cookie = headers.get("Set-Cookie", "").split(";")[0]
        check(status == 303 and cookie.startswith("coffer-share-") and "HttpOnly" in headers.get("Set-Cookie", ""),
              "the right password gives a cookie")
        check(http(base + locked + "/raw/a.txt", headers={"Cookie": cookie})[2] == b"shared file\n", "and then the files")
        statuses = [http(base + locked, data=b"password=guess", headers={"Content-Type": "application/x-www-form-urlencoded"})
                    for _ in range(6)]
        check([s[0] for s in statuses[:5]] == [403] * 5 and statuses[5][0] == 429 and "Retry-After" in statuses[5][1],
              "wrong passwords are refused, and past five the client must wait (429)")

        # Drop box.
        box = share("Inbox --upload")
        status, _, page = http(base + box)
        check(status == 200 and b"taken.txt" not in page and b'type="file"' in page, "a drop box shows a form, not its files")
        check(http(base + box + "/raw/taken.txt")[0] == 404 and http(base + box + "/p/taken.txt")[0] == 404,
              "and serves nothing of what it holds")
        tricky = b"line\r\n--not the boundary\r\n" + os.urandom(70000) + b"\r\n------coffer-check-7d1"
        body, content_type = multipart([("taken.txt", b"mine\n"), ("../escape.txt", b"flat\n"), ("tricky.bin", tricky)])
        status, _, page = http(base + box, data=body, headers={"Content-Type": content_type})
        check(status == 200, f"files are sent to the drop box: {page[-300:]!r}")
        with open(os.path.join(FILES, "Inbox", "taken.txt"), "rb") as existing:
            check(existing.read() == b"already here\n", "an upload never replaces what is there")
        stored = {name: open(os.path.join(FILES, "Inbox", name), "rb").read() for name in os.listdir(os.path.join(FILES, "Inbox"))}
        check(stored.get("taken (2).txt") == b"mine\n" and stored.get("escape.txt") == b"flat\n",
              f"a taken name is kept beside, a path is flattened: {sorted(stored)}")
        check(not os.path.exists(os.path.join(FILES, "escape.txt")), "nothing lands outside the drop box")
        expected = {os.path.basename(name): data for name, data in python_multipart_files(body, content_type)}
        check(stored.get("tricky.bin") == expected["tricky.bin"] == tricky,
              "what Coffer stored is what python-multipart reads from the same body")
        check(http(base + file_link, data=body, headers={"Content-Type": content_type})[0] == 405,
              "a link that is no drop box takes no uploads")

        # Audit.
        lines = [json.loads(line) for line in open(AUDIT) if '"frontEnd":"share"' in line]
        downloads = [entry for entry in lines if entry["method"] == "share-download"]
        check(any(entry.get("bytes") == str(len(big)) and entry.get("client") == "127.0.0.1" for entry in downloads),
              "downloads are audited with the client and the bytes")
        uploads = [entry for entry in lines if entry["method"] == "upload"]
        check(any(entry["paths"] == ["files:/Inbox/tricky.bin"] and entry.get("client") == "127.0.0.1" for entry in uploads),
              "uploads are audited with where they landed, in the visitor's session")
        check(len([entry for entry in uploads if entry["paths"] == ["files:/Inbox/tricky.bin"]]) == 1
              and not any(entry["method"] == "upload" and entry["paths"] == ["files:/Inbox/tricky.bin"]
                          for entry in map(json.loads, open(AUDIT)) if entry["frontEnd"] != "share"),
              "each upload is audited once")
        check(any(entry["method"] == "share-password" and entry["outcome"] == "wrongPassword" for entry in lines),
              "wrong passwords are audited")

        # The wrong passwords above locked this client out of that share: the browser opens another.
        browser(base, file_link, share("Docs/Sub --password", stdin="open sesame\n"), server.page)
    finally:
        check(server.stop() == 0, "the server stops cleanly")

    open_with()
    only = Server("--share-only")
    try:
        check(http(only.base + "/")[0] == 404 and http(only.base + file_link + "/raw")[2] == b"shared file\n",
              "--share-only serves links and no browser")
    finally:
        only.stop()
    print("share_check: every check held")


def open_with():
    """The page offers Open with only in a graphical session, and hands a read-only copy over."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    desktop = os.path.join(WORK, "desktop")
    os.makedirs(os.path.join(desktop, "data", "applications"))
    os.makedirs(os.path.join(desktop, "system"))
    os.symlink("/usr/share/mime", os.path.join(desktop, "system", "mime"))
    calls = os.path.join(desktop, "calls")
    script = os.path.join(desktop, "record.sh")
    with open(script, "w") as out:
        out.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{calls}'\n")
    os.chmod(script, 0o755)
    with open(os.path.join(desktop, "data", "applications", "recorder.desktop"), "w") as out:
        out.write(f"[Desktop Entry]\nType=Application\nName=Recorder\nExec={script} %f\nMimeType=text/plain;\n")
    environment = {"XDG_DATA_HOME": os.path.join(desktop, "data"), "XDG_DATA_DIRS": os.path.join(desktop, "system"),
                   "XDG_CONFIG_HOME": os.path.join(desktop, "config"), "XDG_CONFIG_DIRS": os.path.join(desktop, "none")}
    driver = serve_support.chromium()
    try:
        for graphical in (False, True):
            server = Server(environment=dict(environment, **({"DISPLAY": ":0"} if graphical else {})))
            try:
                driver.get(server.page)
                wait = WebDriverWait(driver, 15)
                row = wait.until(lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, "#items li") if "secret.txt" in e.text])
                button = driver.find_element(By.ID, "open-with")
                if not graphical:
                    check(not button.is_displayed(), "without a graphical session the page offers no Open with")
                    continue
                row[0].click()
                wait.until(lambda d: d.find_element(By.ID, "open-with").is_enabled())
                button.click()
                choice = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#applications button"))
                check([b.text for b in choice] == ["Recorder"], "in one, it lists the desktop's applications for the type")
                choice[0].click()
                for _ in range(100):
                    if os.path.exists(calls):
                        break
                    time.sleep(0.1)
                handed = open(calls).read().strip() if os.path.exists(calls) else ""
                check(handed.endswith("/secret.txt") and "/Documents/ExportTemp/open-" in handed
                      and (os.stat(handed).st_mode & 0o777) == 0o400, f"and hands over a read-only copy: {handed}")
            finally:
                server.stop()
    finally:
        driver.quit()


def browser(base, file_link, locked, page):
    from selenium.webdriver.common.by import By
    downloads = tempfile.mkdtemp(prefix="coffer-share-downloads-")
    driver = serve_support.chromium(downloads)
    try:
        driver.get(base + file_link)
        check(driver.find_element(By.TAG_NAME, "h1").text == "a.txt", "Chromium shows the shared file's name")
        driver.find_element(By.LINK_TEXT, "Download").click()
        target = os.path.join(downloads, "a.txt")
        for _ in range(100):
            if os.path.exists(target):
                break
            time.sleep(0.1)
        check(os.path.exists(target) and open(target, "rb").read() == b"shared file\n", "and downloads it")
        driver.get(base + locked)
        driver.find_element(By.NAME, "password").send_keys("open sesame")
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        # The form posts, the answer sends the browser back to the link: wait for that page.
        from selenium.webdriver.support.ui import WebDriverWait
        found = WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.LINK_TEXT, "b.txt"))
        check(bool(found), "Chromium unlocks a password share and lists it")

        # The page's share dialog makes a link with shares/create, shown plainly with a copy button.
        from selenium.webdriver.support import expected_conditions
        driver.get(page)
        wait = WebDriverWait(driver, 15)
        row = wait.until(lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, "#items li") if "Docs" in e.text])
        row[0].click()
        wait.until(expected_conditions.element_to_be_clickable((By.ID, "share"))).click()
        driver.find_element(By.ID, "share-downloads").send_keys("3")
        driver.find_element(By.ID, "share-make").click()
        link = wait.until(lambda d: d.find_element(By.ID, "share-link").get_attribute("value"))
        check(re.fullmatch(re.escape(base) + r"/s/[A-Za-z0-9_-]{22}", link) is not None
              and driver.find_element(By.ID, "share-copy").is_enabled(), f"the page's share dialog makes a link: {link}")
        check("files:/Docs" in coffer("shares").split(link[len(base):])[1].split("\n")[0] and "0 of 3 downloads" in coffer("shares"),
              "the link is the session's, as shares lists it")
        driver.get(link)
        check(driver.find_element(By.TAG_NAME, "h1").text == "Docs", "and a visitor opens it")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
