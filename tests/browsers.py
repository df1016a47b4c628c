"""Headless Chromium through selenium, as the browser tests and the board page's benchmark start it."""

from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import SessionNotCreatedException
from selenium.webdriver.chrome.service import Service

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


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
    driver = started(options)
    if width < 800:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
    return driver


def started(options: webdriver.ChromeOptions, attempts: int = 3) -> webdriver.Chrome:
    """Chromium now and then exits while it starts on a loaded machine ("Chrome instance exited", seen once in
    a CI run of hundreds of starts): that start is made again, a browser that never starts still fails."""
    for attempt in range(1, attempts + 1):
        try:
            return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        except SessionNotCreatedException:
            if attempt == attempts:
                raise
