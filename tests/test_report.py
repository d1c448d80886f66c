"""`fcanalyze report`: a small run's report, made as a user makes it (subprocesses), is one self-contained
page whose every chart a real headless browser draws, with nothing logged to its console and nothing
fetched. The browser is Debian's `chromium`, driven through the DevTools protocol by the small client
below (standard library only); the tests that need it skip cleanly where it is absent."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import fcanalyze_command

from fcanalyze.cli import cli

#: The charts of an `analyze` run's report, in page order.
CHARTS = ["classes", "cpu_per_deal", "time_share", "proof_sizes", "moves"]
#: Those of a `verify-unsolvable` run's.
VERIFY_CHARTS = ["outcomes", "cpu_per_deal", "time_share", "proof_sizes", "moves"]
WIDTH = 1200


def fcanalyze(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*fcanalyze_command(), *map(str, args)], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`fcanalyze analyze 1-30`, then `fcanalyze report` of it with its PNG files."""
    tmp = tmp_path_factory.mktemp("report")
    run = tmp / "run"
    done = fcanalyze("analyze", "1-30", "--out", run)
    assert done.returncode == 0, done.stderr
    done = fcanalyze("report", run, "--png", tmp / "png")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{run / 'report.html'}: 5 charts, ")
    return {"run": run, "html": run / "report.html", "png": tmp / "png", "tmp": tmp}


@pytest.fixture(scope="module")
def verify_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`fcanalyze verify-unsolvable 11971-12000` (11982 in it), then its report."""
    run = tmp_path_factory.mktemp("report-verify") / "run"
    done = fcanalyze("verify-unsolvable", "11971-12000", "--out", run)
    assert done.returncode == 0, done.stderr
    done = fcanalyze("report", run)
    assert done.returncode == 0, done.stderr
    return {"run": run, "html": run / "report.html", "tmp": run.parent}


def test_verify_report(verify_run: dict[str, Path]) -> None:
    html = verify_run["html"].read_text()
    svgs = re.findall(r"<svg\b.*?</svg>", html, flags=re.S)
    assert [re.search(r'id="(\w+?)-', svg).group(1) for svg in svgs] == VERIFY_CHARTS
    assert "Outcomes with 4 free cells" in html and "11982" in html
    assert '<span class="match">match</span>' in html and "DIFFERS" not in html


def test_report_is_one_self_contained_page(small_run: dict[str, Path]) -> None:
    html = small_run["html"].read_text()
    assert html.startswith("<!DOCTYPE html>")
    # Nothing to fetch: no script, no stylesheet or font link, no remote or relative resource.
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert not re.search(r"""(?:src|href)=["'](?!#)""", html), "a resource outside the page"
    assert "http://" not in html.replace("http://www.w3.org/", "")
    assert "https://" not in html
    # One inline SVG per chart, each drawn with paths, its ids its own.
    svgs = re.findall(r"<svg\b.*?</svg>", html, flags=re.S)
    assert len(svgs) == len(CHARTS)
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "duplicate ids between the charts"
    for name, svg in zip(CHARTS, svgs, strict=True):
        assert f'id="{name}-' in svg
        assert svg.count("<path") > 10, f"chart {name} has no drawing"
    # The figures of the run are there.
    for text in ("deals 1-30", "Classes and minimum free cells", "The 20 heaviest deals", "run.json"):
        assert text in html


def test_report_pngs(small_run: dict[str, Path]) -> None:
    pngs = sorted(p.name for p in small_run["png"].iterdir())
    assert pngs == sorted(f"{c}.png" for c in CHARTS)
    for p in small_run["png"].iterdir():
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert 5_000 < p.stat().st_size < 100_000


def test_report_output_option(small_run: dict[str, Path]) -> None:
    target = small_run["tmp"] / "elsewhere" / "r.html"
    done = fcanalyze("report", small_run["run"], "-o", target)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{target}: 5 charts, {target.stat().st_size / 1024:,.0f} KB\n"
    # The same run gives the same page.
    assert target.read_bytes() == small_run["html"].read_bytes()


@pytest.mark.parametrize("bad", ["missing", "empty", "file"])
def test_report_bad_directory(bad: str, tmp_path: Path) -> None:
    target = tmp_path / bad
    if bad == "empty":
        target.mkdir()
    elif bad == "file":
        target.write_text("x")
    done = fcanalyze("report", target)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("fcanalyze: error: ")


def test_report_help() -> None:
    result = CliRunner().invoke(cli, ["report", "--help"])
    assert result.exit_code == 0
    assert "-o, --output" in result.output and "--png" in result.output


# --- In a real browser -----------------------------------------------------------------------------


class DevTools:
    """The least of a DevTools protocol client: one page's WebSocket (RFC 6455 text frames), commands
    answered by id, and every event kept."""

    def __init__(self, ws_url: str) -> None:
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", ws_url)
        assert m, ws_url
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET {m.group(3)} HTTP/1.1\r\nHost: {m.group(1)}:{m.group(2)}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        assert b" 101 " in head.split(b"\r\n")[0], head
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        self.sock.close()

    def _recv_exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the browser closed the connection")
            data += chunk
        return data

    def _recv_message(self) -> dict[str, Any]:
        payload = b""
        while True:
            b0, b1 = self._recv_exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._recv_exact(2), "big")
            elif n == 127:
                n = int.from_bytes(self._recv_exact(8), "big")
            mask = self._recv_exact(4) if b1 & 0x80 else None
            data = self._recv_exact(n)
            if mask:
                data = bytes(c ^ mask[i % 4] for i, c in enumerate(data))
            opcode = b0 & 0x0F
            if opcode in (0x1, 0x0):
                payload += data
                if b0 & 0x80:
                    return json.loads(payload)
            elif opcode == 0x8:
                raise ConnectionError("the browser closed the connection")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        data = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
        n = len(data)
        head = bytes([0x81]) + (
            bytes([0x80 | n])
            if n < 126
            else bytes([0x80 | 126]) + n.to_bytes(2, "big")
            if n < 65536
            else bytes([0x80 | 127]) + n.to_bytes(8, "big")
        )
        mask = os.urandom(4)
        self.sock.sendall(head + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(data)))
        while True:
            msg = self._recv_message()
            if msg.get("id") == self.next_id:
                assert "error" not in msg, msg
                return msg["result"]
            self.events.append(msg)

    def wait_for(self, method: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            assert time.monotonic() < deadline, f"no {method}"
            self.events.append(self._recv_message())


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    """A headless chromium of its own profile, with DevTools on a free port; stopped at the end."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    profile = tmp_path_factory.mktemp("chromium")
    proc = subprocess.Popen(
        [
            exe,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--hide-scrollbars",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            f"--window-size={WIDTH},1000",
            "about:blank",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.skip("chromium did not start")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        client = DevTools(pages[0]["webSocketDebuggerUrl"])
        try:
            yield client
        finally:
            client.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _problems(events: list[dict[str, Any]], page_url: str) -> list[str]:
    """Console errors and warnings, uncaught exceptions, and requests for anything but the page."""
    found = []
    for e in events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "warning", "assert"):
            found.append(f"console.{params['type']}: {params['args']}")
        elif method == "Runtime.exceptionThrown":
            found.append(f"exception: {params['exceptionDetails']}")
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            found.append(f"log {params['entry']['level']}: {params['entry']['text']}")
        elif method == "Network.requestWillBeSent" and params["request"]["url"] != page_url:
            found.append(f"request: {params['request']['url']}")
    return found


@pytest.mark.parametrize("job", ["analyze", "verify"])
def test_report_in_a_browser(
    job: str, small_run: dict[str, Path], verify_run: dict[str, Path], browser: DevTools
) -> None:
    image_mod = pytest.importorskip("PIL.Image")
    made, charts = (small_run, CHARTS) if job == "analyze" else (verify_run, VERIFY_CHARTS)
    url = made["html"].resolve().as_uri()
    browser.events.clear()
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable")
    browser.send("Page.navigate", url=url)
    browser.wait_for("Page.loadEventFired")
    layout = browser.send(
        "Runtime.evaluate",
        returnByValue=True,
        expression="""JSON.stringify({
            height: document.documentElement.scrollHeight,
            charts: [...document.querySelectorAll('figure')].map(f => {
                const r = f.querySelector('svg').getBoundingClientRect();
                return {id: f.id, x: r.x, y: r.y + window.scrollY, w: r.width, h: r.height,
                        paths: f.querySelectorAll('svg path').length};
            })})""",
    )
    page = json.loads(layout["result"]["value"])
    assert [c["id"] for c in page["charts"]] == [f"chart-{c}" for c in charts]
    shot = browser.send(
        "Page.captureScreenshot",
        format="png",
        captureBeyondViewport=True,
        clip={"x": 0, "y": 0, "width": WIDTH, "height": page["height"], "scale": 1},
    )
    path = made["tmp"] / f"report-{job}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    if os.environ.get("FCANALYZE_REPORT_SCREENSHOT"):  # a directory to keep the screenshots in
        shutil.copy(path, os.environ["FCANALYZE_REPORT_SCREENSHOT"])
    image = image_mod.open(path).convert("RGB")
    assert image.size == (WIDTH, page["height"])
    for c in page["charts"]:
        # Laid out at a readable size, drawn with paths, and on screen: dark marks and coloured ones.
        assert c["w"] > 600 and c["h"] > 200, c
        assert c["paths"] > 10, c
        region = image.crop((int(c["x"]), int(c["y"]), int(c["x"] + c["w"]), int(c["y"] + c["h"])))
        pixels = np.asarray(region, dtype=np.int16).reshape(-1, 3)
        inked = float((pixels.min(axis=1) < 200).mean())
        coloured = float((pixels.max(axis=1) - pixels.min(axis=1) > 60).mean())
        assert inked > 0.01, f"{c['id']}: blank ({inked:.2%} inked)"
        assert coloured > 0.002, f"{c['id']}: nothing coloured ({coloured:.2%})"
    assert not _problems(browser.events, url)
