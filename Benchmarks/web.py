#!/usr/bin/env python3
"""The web page on a folder of 100,000 entries: from opening the folder to its first rows drawn,
in headless Chromium, with `coffer serve` (the release build).

Usage: web.py COFFER_BINARY WORK_DIR [--rounds N]   (a Python with selenium; Chromium and chromedriver)

Each round goes back to the root and opens the folder again (double-click), timing until the
first row is in the page; the answer of `files/list` alone (its first page of 500, over the
WebSocket from the page) is timed the same way. Goal: first rows in under a second. Popular
web file managers are said to take a minute on such a folder; none of them can be installed
here (no npm), so they are not measured.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait


def main():
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    container = os.path.join(work, "web-container")
    folder = os.path.join(container, "Documents", "UserFiles", "Many")
    if not os.path.isdir(folder) or len(os.listdir(folder)) != 100_000:
        shutil.rmtree(container, ignore_errors=True)
        subprocess.run([coffer, "--container", container, "-c", "mkdir Many"], check=True, stdout=subprocess.DEVNULL)
        for index in range(100_000):
            os.close(os.open(f"{folder}/item {index:06d}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    log = open(os.path.join(work, "web-serve.log"), "w")
    server = subprocess.Popen([coffer, "--container", container, "serve", "--port", "0"], stdout=subprocess.PIPE,
                              stderr=log, text=True)
    url = re.search(r"http://\S+", server.stdout.readline()).group(0)
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,860"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    first_row = "return [...document.querySelectorAll('#items li .name span:last-child')].some((e) => e.textContent === 'item 000000.txt')"
    try:
        driver.get(url)
        WebDriverWait(driver, 20).until(lambda d: d.execute_script(
            "return [...document.querySelectorAll('#items li .name span:last-child')].some((e) => e.textContent === 'Many')"))
        page, listing = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            driver.execute_script("""
                const row = [...document.querySelectorAll('#items li')].find((li) => li.textContent.includes('Many'));
                row.dispatchEvent(new MouseEvent('dblclick', {bubbles: true}));""")
            WebDriverWait(driver, 30, poll_frequency=0.005).until(lambda d: d.execute_script(first_row))
            page.append(time.perf_counter() - started)
            listing.append(driver.execute_async_script("""
                const done = arguments[arguments.length - 1];
                const started = performance.now();
                // The page's own bridge: the module the page loaded, the same instance.
                import('/bridge.js').then(({ bridge }) => bridge.call('files/list', {path: 'files:/Many', limit: 500}))
                    .then(() => done((performance.now() - started) / 1000));"""))
            driver.execute_script("document.querySelector('#breadcrumbs button').click()")
            WebDriverWait(driver, 20).until(lambda d: not d.execute_script(first_row))
    finally:
        driver.quit()
        server.terminate()
        server.wait()
    print(f"a folder of 100,000 entries in the page (headless Chromium), medians of {rounds} rounds")
    print(f"  first rows drawn   {statistics.median(page) * 1000:7.0f} ms  (min {min(page) * 1000:.0f}, max {max(page) * 1000:.0f})"
          f"  goal < 1000 ms: {'met' if statistics.median(page) < 1 else 'NOT met'}")
    print(f"  files/list, first 500 of 100,000, from the page  {statistics.median(listing) * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
