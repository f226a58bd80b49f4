"""Headless Chromium driven over the DevTools protocol with the standard library only: for the
browser tests (tests/test_replay.py, tests/test_board_page.py) and scripts/bench_board_page.py.

Debian's package (apt-get install chromium) runs as root with --no-sandbox, as here.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

#: Why the browser tests skip where there is none.
NO_CHROMIUM = "no Chromium here (Debian: apt-get install chromium): the page is checked in a browser elsewhere"


def find_chromium() -> str | None:
    """The path of a Chromium or Chrome on PATH, or None."""
    return next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome",
                                                "google-chrome-stable"))), None)


class Browser:
    """Headless Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: it
    reads commands from fd 3 and writes to fd 4, each message JSON and a NUL)."""

    def __init__(self, binary, profile):
        import fcntl  # POSIX only, as the fd passing is: here so that Windows can import the module (and skip)

        theirs_read, ours_write = os.pipe()
        ours_read, theirs_write = os.pipe()
        # Out of the way of 3 and 4, then a tiny trampoline puts them there for the browser.
        far = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (theirs_read, theirs_write)]
        os.close(theirs_read)
        os.close(theirs_write)
        place = ("import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
                 "os.execv(sys.argv[3], sys.argv[3:])")
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", f"--user-data-dir={profile}", "--remote-debugging-pipe",
                 "about:blank"]
        self.process = subprocess.Popen([sys.executable, "-c", place, *map(str, far), binary,
                                         *flags], pass_fds=far, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in far:
            os.close(fd)
        self._write, self._read = ours_write, ours_read
        self._messages = queue.Queue()
        self.events = []
        self._next = 0
        threading.Thread(target=self._reader, daemon=True).start()
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=self.session)

    def _reader(self):
        buffer = b""
        while chunk := os.read(self._read, 1 << 16):
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for message in messages:
                self._messages.put(json.loads(message))
        self._messages.put(None)

    def _next_message(self, deadline):
        item = self._messages.get(timeout=max(0.01, deadline - time.monotonic()))
        if item is None:
            raise RuntimeError("Chromium closed its DevTools pipe")
        return item

    def send(self, method, session=None, **params):
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 30
        while True:
            item = self._next_message(deadline)
            if item.get("id") == self._next:
                if "error" in item:
                    raise RuntimeError(f"{method}: {item['error']}")
                return item["result"]
            self.events.append(item)

    def open(self, url, width=1400, height=1000):
        self.send("Emulation.setDeviceMetricsOverride", session=self.session, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)
        # An earlier page's load event would end the wait below at once.
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.send("Page.navigate", session=self.session, url=url)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._next_message(deadline))

    def js(self, expression):
        reply = self.send("Runtime.evaluate", session=self.session, expression=expression,
                          returnByValue=True)
        assert "exceptionDetails" not in reply, reply
        return reply["result"].get("value")

    def key(self, name):
        codes = {"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40,
                 "Home": 36, "End": 35}
        for kind in ("rawKeyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", session=self.session, type=kind, key=name,
                      code=name, windowsVirtualKeyCode=codes[name])

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", session=self.session, format="png")["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def errors(self):
        """Uncaught exceptions, console.error calls and error log entries so far."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(params["exceptionDetails"].get("text"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(str(params.get("args")))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(params["entry"].get("text"))
        return found

    def close(self):
        try:
            self.send("Browser.close")
        except (RuntimeError, queue.Empty, OSError):
            pass
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)


