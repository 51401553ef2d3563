"""The recall console and the API docs in a real browser: Debian's headless chromium, driven by
Selenium through the system chromedriver (never a downloaded one), against the real gateway and
the session's worker. `make test` installs chromium first (scripts/ensure-chromium.sh).

The console runs a recall on the sample bank and must show the trace (strategy ranks, scores,
boosts, packing) and the timing waterfall; the fleet view must show the answering worker; /docs
must render the routes with no request leaving the gateway. Screenshots go to the test's temporary
folder, or to docs/ with TEMPR_UPDATE_SCREENSHOTS=1 (how docs/console*.png were made).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_for

from tempr.services.process import free_port

pytestmark = pytest.mark.integration
DOCS = Path(__file__).resolve().parents[2] / "docs"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def gateway_url(resources: Any, worker: Path, sample_facts: Path) -> Iterator[str]:
    import uvicorn

    from tempr.api.app import create_app
    from tempr.client import recall_async
    from tempr.ingest.facts import parse_jsonl
    from tempr.ingest.pipeline import IngestDeps, ingest_facts

    facts = list(parse_jsonl(sample_facts.read_text().splitlines()))
    ingest_facts(
        "demo", facts, IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings)
    )
    # A first recall loads the worker's models (tens of seconds on a busy machine): do it here,
    # with a long deadline, so the console's own recall meets the default one.
    recall_async("demo", query="Where does Alice work?", timeout_s=300).get(300)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(resources=resources), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for(lambda: server.started, timeout=30, what="uvicorn")
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def console_key(make_key: Any) -> str:
    """The key a person pastes into the console's API-key field (kept in the page's localStorage)."""
    return str(make_key("console").key)


def _sign_in(browser: Any, gateway_url: str, key: str) -> None:
    browser.get(gateway_url + "/console/")
    browser.execute_script("localStorage.setItem('tempr.key', arguments[0])", key)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.fail("chromium/chromedriver missing: run `make browser` (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # with the driver path too, Selenium Manager is never asked
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1440,1200",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver: Any, name: str, tmp_path: Path) -> Path:
    """The whole page (the window is stretched to its height, at most 2600 px)."""
    target = (DOCS if os.environ.get("TEMPR_UPDATE_SCREENSHOTS") == "1" else tmp_path) / name
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1440, min(2600, max(900, int(height) + 140)))
    driver.save_screenshot(str(target))
    driver.set_window_size(1440, 1200)
    return target


def _wait(driver: Any, condition: Any, timeout: float = 120) -> Any:
    """Wait for the page; on a timeout, fail with what the page says (status line, body text)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.2).until(condition)
    except TimeoutException:
        status = [e.text for e in driver.find_elements(By.ID, "status")]
        body = driver.find_element(By.TAG_NAME, "body").text
        pytest.fail(
            f"timed out after {timeout} s on {driver.current_url}; status {status}; the page says:\n{body[:1500]}"
        )


def _external_requests(driver: Any, base: str, kinds: tuple[str, ...] = ()) -> list[str]:
    """URLs the page asked for elsewhere than the gateway (only these initiator kinds, if given)."""
    entries = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => [e.name, e.initiatorType])"
    )
    return [name for name, kind in entries if not name.startswith(base) and (not kinds or kind in kinds)]


def test_console_recall_shows_trace_and_waterfall(
    browser: Any, gateway_url: str, tmp_path: Path, console_key: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _sign_in(browser, gateway_url, console_key)
    browser.get(gateway_url + "/")  # redirects to the console
    assert browser.current_url.endswith("/console/")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#bank option[value='demo']"))
    Select(browser.find_element(By.ID, "bank")).select_by_value("demo")
    _wait(browser, lambda d: "62 facts" in d.find_element(By.ID, "bank-info").text)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#recent-facts li")) > 0

    browser.find_element(By.ID, "query").send_keys("What did Alice do last spring?")
    browser.find_element(By.ID, "query-ts").send_keys("2024-09-15T12:00:00Z")
    max_tokens = browser.find_element(By.ID, "max-tokens")
    max_tokens.clear()
    max_tokens.send_keys("300")
    browser.find_element(By.ID, "run").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#results tr.memory-row"))

    rows = browser.find_elements(By.CSS_SELECTOR, "#results tr.memory-row")
    assert rows and "Alice" in browser.find_element(By.ID, "results").text
    hits = browser.find_elements(By.CSS_SELECTOR, "#results td.rank.hit")  # a strategy rank per memory
    assert len(hits) >= len(rows)
    assert all(float(td.text) > 0 for td in browser.find_elements(By.CSS_SELECTOR, "#results td.rrf"))
    assert "×" in rows[0].find_element(By.CSS_SELECTOR, "td.boosts").text  # each boost, as a multiplier
    assert "kept" in rows[0].text  # the packing decision
    steps = [e.get_attribute("data-step") for e in browser.find_elements(By.CSS_SELECTOR, "#waterfall .wf-row")]
    for step in ("start", "strategy.semantic", "strategy.keyword", "fuse", "finish"):
        assert step in steps, steps
    assert browser.find_elements(By.CSS_SELECTOR, "#waterfall .wf-wait")  # queue waits are drawn
    assert "ms" in browser.find_element(By.CSS_SELECTOR, "#waterfall .wf-total").text
    assert not _external_requests(browser, gateway_url)
    _shot(browser, "console.png", tmp_path)


def test_console_fleet_shows_the_worker_and_jobs(
    browser: Any, gateway_url: str, tmp_path: Path, console_key: str
) -> None:
    from selenium.webdriver.common.by import By

    _sign_in(browser, gateway_url, console_key)
    browser.get(gateway_url + "/console/#fleet")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#workers tr.worker-row"), timeout=60)
    workers = browser.find_element(By.ID, "workers").text
    assert "pong" in workers and "retrieve" in workers and "prefork" in workers
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#jobs tr.job-row"), timeout=30)
    assert "succeeded" in browser.find_element(By.ID, "jobs").text
    _shot(browser, "console-fleet.png", tmp_path)


def test_api_docs_render_offline(browser: Any, gateway_url: str, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    browser.get(gateway_url + "/docs")
    _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock")) >= 5, timeout=60)
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "/v1/default/banks/{bank_id}/memories/recall" in text and "/v1/fleet" in text
    assert not _external_requests(browser, gateway_url)  # Swagger UI came from the gateway itself
    browser.save_screenshot(str(tmp_path / "docs.png"))
    browser.get(gateway_url + "/redoc")
    _wait(browser, lambda d: "memories/recall" in d.find_element(By.TAG_NAME, "body").text, timeout=60)
    # ReDoc's bundle links one decorative image (the Redocly logo) from its CDN; no script or style.
    assert not _external_requests(browser, gateway_url, ("script", "link", "css", "fetch", "xmlhttprequest"))
