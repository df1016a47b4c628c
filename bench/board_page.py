"""The board page in Chromium on a big board: how soon it is drawn and how a drag feels.

    .venv/bin/python -m bench board_page            # prints the figure (JSON), PostgreSQL tracker_bench_board_page
    .venv/bin/python -m bench --write board_page    # and puts it in bench/RESULTS.md beside the others
    BENCH_SMALL=1 .venv/bin/python -m bench board_page   # 20 and 200 cards on SQLite (the smoke test)

The board of `figures.board_project` (2,000 tickets from a fixed seed; 200 as the baseline), served by daphne
(static files from the app, as `make run`), opened in headless Chromium (selenium) by the project's owner:

- drawn: from the navigation's start to the end of the page's first drawing of the board (the
  `board:drawn` User Timing mark of static/js/board.js), and the browser's first contentful paint;
- drag: a card pressed, moved across to another column's first cards and dropped with real pointer events
  (selenium's ActionChains, as in tests/board_page): the longest frame of the page during it (Long Animation
  Frames API: script, style, layout and paint of one frame; the browser reports none under 50 ms), and the
  drop until the API's answer (`board:move`);
- a filter keystroke over every card (`board:filter`).

Each is the median of RUNS page loads or drags.
"""

import os
import statistics

from tests.browsers import headless_chromium

RUNS = 3 if os.environ.get("BENCH_SMALL") else 5
PASSWORD = "bench-board-page"
WAIT_SECONDS = 60

# The page's long frames (Long Animation Frames API: 50 ms and longer, script and rendering alike; Event Timing
# would miss the pointer moves), gathered from here on; one observer per page.
OBSERVE_FRAMES = """
    if (!window.longFrames) new PerformanceObserver((list) => window.longFrames.push(
        ...list.getEntries().map((entry) => entry.duration))).observe({ type: "long-animation-frame" });
    window.longFrames = [];
"""
# The board's frames of moves, counted: a drag is over once its own frame has redrawn the card it moved.
COUNT_MOVES = """
    if (window.movesHeard === undefined) document.querySelector("[data-board]").addEventListener("board:frame",
        (event) => { if (event.detail.event === "ticket.moved") window.movesHeard += 1; });
    window.movesHeard = 0;
"""


def log_in(driver, url: str, username: str, path: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(f"{url}/accounts/login/?next={path}")
    driver.find_element(By.NAME, "username").send_keys(username)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


def wait_until_synced(driver) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT_SECONDS, poll_frequency=0.05).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "[data-board][data-synced]")))


def load_times(driver, url: str, path: str) -> dict[str, float]:
    driver.get(f"{url}{path}")
    wait_until_synced(driver)
    return driver.execute_script("""
        const paint = performance.getEntriesByName("first-contentful-paint")[0];
        return { drawn: performance.getEntriesByName("board:drawn")[0].startTime, paint: paint.startTime,
                 cards: document.querySelectorAll("[data-ticket-id]").length };
    """)


def drag_times(driver) -> dict[str, float]:
    """One drag: a card of the first column dropped in the upper half of one of the second's first cards."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script(OBSERVE_FRAMES + COUNT_MOVES)
    sources = driver.find_elements(By.CSS_SELECTOR, '[data-status="backlog"] [data-ticket-id]')
    targets = driver.find_elements(By.CSS_SELECTOR, '[data-status="todo"] [data-ticket-id]')
    source, target = sources[min(1, len(sources) - 1)], targets[min(2, len(targets) - 1)]
    driver.execute_script("performance.clearMeasures('board:move')")
    ActionChains(driver, duration=40).move_to_element(source).click_and_hold().move_by_offset(0, 8) \
        .move_to_element_with_offset(target, 0, -8).move_to_element_with_offset(target, 0, -target.size["height"] // 4) \
        .pause(0.1).release().perform()  # as a hand rests before letting go: SortableJS places on a 50 ms timer
    # The next drag starts once this one's frame has redrawn the card (it would otherwise land mid-drag, on
    # the card the next drag aims at, and the drop would go nowhere).
    WebDriverWait(driver, WAIT_SECONDS, poll_frequency=0.02).until(lambda _: driver.execute_script(
        "return performance.getEntriesByName('board:move').length && window.movesHeard"))
    return driver.execute_script("""
        return { saved: performance.getEntriesByName("board:move")[0].duration,
                 longest: Math.max(0, ...window.longFrames), long: window.longFrames.length };
    """)


def filter_time(driver) -> float:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    field = driver.find_element(By.CSS_SELECTOR, '[data-filter="text"]')
    field.send_keys("7")
    duration = driver.execute_script("return performance.getEntriesByName('board:filter')[0].duration")
    field.send_keys(Keys.BACKSPACE)
    return duration


def measure(url: str, project_id: int, username: str) -> dict[str, float]:
    path = f"/projects/{project_id}/board/"
    driver = headless_chromium()
    try:
        log_in(driver, url, username, path)
        wait_until_synced(driver)
        loads = [load_times(driver, url, path) for _ in range(RUNS)]
        drags = [drag_times(driver) for _ in range(RUNS)]
        filters = [filter_time(driver) for _ in range(RUNS)]
    finally:
        driver.quit()
    return {"cards": loads[0]["cards"],
            "drawn": statistics.median(load["drawn"] for load in loads),
            "paint": statistics.median(load["paint"] for load in loads),
            "longest_frame": statistics.median(drag["longest"] for drag in drags),
            "worst_frame": max(drag["longest"] for drag in drags),
            "long_frames": statistics.median(drag["long"] for drag in drags),
            "saved": statistics.median(drag["saved"] for drag in drags),
            "filter": statistics.median(filters)}


def board_page() -> dict:
    from bench.figures import BOARD_SIZES, board_project, setup
    from bench.load import Servers

    setup("board_page")  # a database of its own: the drags reorder its boards
    from accounts.models import User

    big = BOARD_SIZES[0]
    baseline = max(big // 10, 20)  # the smoke test's 20 cards both times
    projects = {size: board_project(size) for size in (baseline, big)}
    owner = User.objects.get(username="bench-owner")
    owner.set_password(PASSWORD)
    owner.save(update_fields=["password"])
    # DEBUG serves the static files without collectstatic and lets the session cookie travel over http.
    env = {"DATABASE_URL": os.environ["DATABASE_URL"], "REDIS_URL": "", "DJANGO_DEBUG": "1"}
    with Servers("daphne", env, processes=1) as servers:
        url = f"http://127.0.0.1:{servers.ports[0]}"
        results = {size: measure(url, project.pk, owner.username) for size, project in projects.items()}
    at, base = results[big], results[baseline]

    def words(result: dict) -> str:
        frame = f"{result['longest_frame']:.0f} ms" if result["longest_frame"] else "none over 50 ms"
        return f"drawn at {result['drawn']:.0f} ms, drag: longest frame {frame}"

    return {"figure": f"board page in Chromium, {big:,} cards: drawn; a drag",
            "value": words(at), "goal": "drawn < 1,000 ms; no drag frame over 200 ms",
            "baseline": f"{baseline:,} cards: {words(base)}",
            "details": f"{at['cards']} cards drawn; first contentful paint {at['paint']:.0f} ms; frames over 50 ms "
                       f"per drag {at['long_frames']:.0f}, the worst over {RUNS} drags {at['worst_frame']:.0f} ms; "
                       f"drop to the API's answer "
                       f"{at['saved']:.0f} ms; a filter keystroke over every card {at['filter']:.1f} ms "
                       f"(at {baseline:,}: {base['filter']:.1f} ms); medians of {RUNS}; daphne, headless Chromium"}
