"""What the checks of `coffer serve` share (share_check, page_check, tus_check): a server started
as a user starts it, its address read from the line it prints, headless Chromium, and the
check that prints each result."""
import owned  # every process this check starts is ended with it (.ci/owned.py)
import os
import re
import signal
import subprocess
import tempfile


def checker(name):
    """`check(condition, what)`: prints `NAME: ok: what`, or stops the run with `NAME: FAILED: what`."""
    def check(condition, what):
        if not condition:
            raise SystemExit(f"{name}: FAILED: {what}")
        print(f"{name}: ok: {what}")
    return check


class Server:
    """`coffer serve` on `port` (0: the system chooses), without a display unless `environment`
    gives one; `options` go before `serve` (`--mount`, say). `base` is its address, `host` the host and port, `page` the address with the
    token (`None` for `--share-only`, which prints none)."""

    def __init__(self, coffer, container, *extra, port=0, environment=None, options=()):
        self.log = tempfile.NamedTemporaryFile(prefix="coffer-serve-", suffix=".log", delete=False)
        env = {key: value for key, value in os.environ.items() if key not in ("DISPLAY", "WAYLAND_DISPLAY")}
        self.process = subprocess.Popen([coffer, "--container", container, "--lang", "en", *options, "serve", "--port", str(port), *extra],
                                        stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL, text=True,
                                        env=dict(env, **(environment or {})))
        line = self.process.stdout.readline()
        match = re.search(r"http://([^/\s]+)", line)
        if not match:
            raise SystemExit(f"no address from coffer serve: {line!r} {open(self.log.name).read()}")
        self.host = match.group(1)
        self.base = "http://" + self.host
        token = re.search(r"/\?token=([0-9a-f]+)", line)
        self.token = token.group(1) if token else None
        self.page = f"{self.base}/?token={self.token}" if self.token else None

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


def chromium(downloads=None):
    """Headless Chromium through Selenium; files it downloads go to `downloads`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--lang=en-US", "--window-size=1280,860"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    owned.adopt(driver.quit)
    if downloads:
        driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    return driver


def console_errors(driver):
    """What the page logged as errors (the favicon's absence aside)."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE" and "favicon" not in entry["message"]]
