#!/usr/bin/env python3
"""The web page's address and reconnection, in headless Chromium:

  address    the folder shown is in the address without the token; a reload comes back to
             it; Back and Forward move between folders; an address typed with a folder opens it
  reconnect  the server stops: the page says so and tries again; it comes back (the same
             container, port and token): the page lists its folder again and hears changes
             again, without a reload
Usage: page_check.py PATH-TO-COFFER   (needs selenium)
"""
import os
import socket
import subprocess
import sys
import tempfile

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import serve_support
from serve_support import checker

COFFER = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="coffer-page-check-")
CONTAINER = os.path.join(WORK, "container")
FILES = os.path.join(CONTAINER, "Documents", "UserFiles")


check = checker("page_check")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def Server(port):
    return serve_support.Server(COFFER, CONTAINER, port=port)


def main():
    subprocess.run([COFFER, "--container", CONTAINER, "-c", "mkdir Docs Docs/Deeper Other"], check=True, capture_output=True)
    for name, text in [("Docs/a.txt", "a"), ("Docs/Deeper/b.txt", "b"), ("Other/c.txt", "c")]:
        with open(os.path.join(FILES, name), "w") as out:
            out.write(text)
    port = free_port()
    server = Server(port)
    driver = serve_support.chromium()
    wait = WebDriverWait(driver, 20)

    def names():
        return driver.execute_script(
            "return [...document.querySelectorAll('#items li .name span:last-child')].map((e) => e.textContent)")

    def open_row(name):
        for element in driver.find_elements(By.CSS_SELECTOR, "#items li"):
            if name in element.text:
                element.click()
                driver.switch_to.active_element.send_keys("\n")
                return
        raise SystemExit(f"page_check: no row {name}: {names()}")

    try:
        driver.get(server.page)
        wait.until(lambda d: "Docs" in names())
        check("token" not in driver.current_url, f"the token left the address: {driver.current_url}")
        open_row("Docs")
        wait.until(lambda d: "a.txt" in names())
        check("folder=files%3A%2FDocs" in driver.current_url, f"the folder is in the address: {driver.current_url}")
        open_row("Deeper")
        wait.until(lambda d: "b.txt" in names())
        driver.refresh()
        wait.until(lambda d: "b.txt" in names())
        check("Deeper" in driver.current_url, "a reload comes back to the folder")
        driver.back()
        wait.until(lambda d: "a.txt" in names())
        check(driver.current_url.endswith("folder=files%3A%2FDocs"), "Back goes to the folder before")
        driver.forward()
        wait.until(lambda d: "b.txt" in names())
        check("Deeper" in driver.current_url, "Forward comes again")
        driver.get(server.page.split("/?")[0] + "/?folder=files%3A%2FOther")
        wait.until(lambda d: "c.txt" in names())
        check(True, "an address with a folder opens it")

        # The server goes away and comes back on the same port with the same token.
        driver.execute_script("window.notReloaded = true")
        check(server.stop() == 0, "the server stops")
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
    finally:
        driver.quit()
        server.stop()
    print("page_check: every check held")


if __name__ == "__main__":
    main()
