"""Headless Chromium through selenium, as the browser tests and the board page's benchmark start it."""

import os
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
# chromedriver makes Chromium's profile under TMPDIR, and Chromium exits at once ("Chrome instance exited") when
# the path of the socket it keeps there passes the 108 bytes a Unix socket's path may have, as under a deep
# TMPDIR (a pytest tmp_path such as the benchmark's smoke test gives): the profile goes in /tmp.
PROFILE_PARENT = "/tmp"


def headless_chromium(width: int = 1400, height: int = 900) -> webdriver.Chrome:
    """A new browser whose console (where CSP reports land) is kept for `get_log("browser")`. A window cannot
    be narrower than some 500 px: a phone's width is laid out by device emulation instead."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run",
                     f"--window-size={max(width, 800)},{height}"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(str(CHROMEDRIVER), env={**os.environ, "TMPDIR": PROFILE_PARENT})
    driver = webdriver.Chrome(service=service, options=options)
    if width < 800:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
    return driver
