"""A minimal Chrome DevTools Protocol client over `--remote-debugging-pipe` (stdlib only) for browser tests.

    with Browser.launch() as b:        # None from find() when no chromium is installed
        page = b.open(url)             # waits for the load event
        page.eval("document.title")    # returnByValue
        page.screenshot(path)
        page.errors, page.requests     # JS exceptions / console errors; every network request's URL

Chromium reads CDP messages from fd 3 and writes to fd 4, each a JSON text ended by a NUL byte.
Browser tests are marked `needs_chromium`: they skip where no Chromium is installed, except where
EVALRUN_REQUIRE_BROWSER is set (CI, whose .ci/run installs it): there a missing browser fails them.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest


def find() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        exe = shutil.which(name)
        if exe:
            return exe
    return None


needs_chromium = pytest.mark.skipif(
    find() is None and not os.environ.get("EVALRUN_REQUIRE_BROWSER"),
    reason="no Chromium installed (Debian: apt-get install -y chromium; .ci/run installs it and sets "
           "EVALRUN_REQUIRE_BROWSER, so there this test cannot skip)")


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.b = browser
        self.session = session
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.loaded = threading.Event()

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.b.send(method, params, session=self.session)

    def eval(self, expression: str) -> Any:
        res = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise AssertionError(f"{expression!r} raised: {res['exceptionDetails']}")
        return res["result"].get("value")

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Runtime.exceptionThrown":
            d = params["exceptionDetails"]
            self.errors.append(str(d.get("exception", {}).get("description") or d.get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console.error: " + " ".join(str(a.get("value")) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append("log: " + str(params["entry"].get("text")))
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Page.loadEventFired":
            self.loaded.set()


class Browser:
    def __init__(self, exe: str) -> None:
        self.profile = tempfile.TemporaryDirectory()
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        os.set_inheritable(to_child_r, True)
        os.set_inheritable(from_child_w, True)

        def fds() -> None:  # in the child: our pipe ends become fds 3 and 4 (copied high first: no clobbering)
            r, w = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--metrics-recording-only", "--mute-audio",
             f"--user-data-dir={self.profile.name}", "--remote-debugging-pipe", "--window-size=1280,900",
             "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._id = 0
        self._lock = threading.Lock()
        self._replies: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self.pages: dict[str, Page] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @classmethod
    def launch(cls) -> Browser:
        exe = find()
        if exe is None:
            raise RuntimeError("no Chromium installed, and EVALRUN_REQUIRE_BROWSER says the browser tests must run: "
                               "apt-get install -y chromium")
        return cls(exe)

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                with self._cond:
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._cond:
                        self._replies[msg["id"]] = msg
                        self._cond.notify_all()
                elif msg.get("sessionId") in self.pages:
                    self.pages[msg["sessionId"]].event(msg["method"], msg.get("params", {}))

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None,
             timeout: float = 60.0) -> dict[str, Any]:
        with self._lock:
            self._id += 1
            mid = self._id
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while mid not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no reply to {method}")
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def open(self, url: str, timeout: float = 60.0) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = self.pages[session] = Page(self, session)
        for domain in ("Runtime", "Log", "Network", "Page"):
            page.send(f"{domain}.enable")
        page.send("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        page.send("Page.navigate", url=url)
        if not page.loaded.wait(timeout):
            raise TimeoutError(f"{url} did not load")
        return page

    def close(self) -> None:
        with contextlib.suppress(TimeoutError, RuntimeError, OSError):
            self.send("Browser.close", timeout=10)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
