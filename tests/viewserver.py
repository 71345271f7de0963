"""`evalrun view`'s server in a thread of the test process (any free port), and a plain HTTP client for it."""

from __future__ import annotations

import contextlib
import http.client
import json
import shutil
import socket
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalrun.cli import main
from evalrun.view import server

CONFIG = """
description: {D}
providers: [echo]
prompts: ["{P} {{{{answer}}}}", {{label: plain, raw: "{{{{answer}}}}"}}]
tests:
  - description: eiffel
    options: {{disableVarExpansion: true}}
    vars:
      answer: The Eiffel Tower is in Paris. It was completed in 1889.
      context: ["The Eiffel Tower is in Paris. It was completed in 1889. It is 330 metres tall."]
    assert: [{{type: faithfulness}}]
  - description: wants Note
    vars: {{answer: hello}}
    assert: [{{type: contains, value: Note}}]
  - description: counts
    vars:
      answer: [{VALUES}]
    assert: [{{type: contains, value: v}}]
"""


def run_suite(folder: Path, prefix: str, description: str, *extra: str) -> str:
    """Run the suite (122 tests' cases x 2 prompts = 244 cases) in `folder`; returns the run's id."""
    values = ", ".join(f"v{i}" for i in range(120))
    (folder / "evalrun.yaml").write_text(textwrap.dedent(CONFIG.format(P=prefix, D=description, VALUES=values)))
    main(["eval", str(folder / "evalrun.yaml"), "--no-progress-bar", "--no-table", *extra])
    runs = sorted((folder / ".evalrun" / "runs").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    return runs[-1].stem


def two_runs(folder: Path) -> tuple[str, str]:
    """A baseline run, then one whose first prompt was edited ("wants Note" now fails on it too)."""
    a = run_suite(folder, "Note:", "baseline")
    b = run_suite(folder, "Answer:", "edited prompt")
    return a, b


def copy_folder(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst / ".evalrun"


@contextlib.contextmanager
def serving(state: Path, host: str = "127.0.0.1", allow_hosts: tuple[str, ...] = ()) -> Iterator[server.ViewServer]:
    srv, _ = server.start(state, host, 0, allow_hosts)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(10)


def request(srv: server.ViewServer, path: str, *, method: str = "GET",
            headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    """(status, headers, body: parsed JSON when the answer is JSON, else text)."""
    ipv6 = srv.address_family == socket.AF_INET6  # `::`: connect over IPv6 (bindv6only may refuse IPv4)
    conn = http.client.HTTPConnection("::1" if ipv6 else "127.0.0.1", srv.server_address[1], timeout=30)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        raw = resp.read().decode("utf-8")
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()
    body = json.loads(raw) if hdrs.get("content-type", "").startswith("application/json") else raw
    return resp.status, hdrs, body


def get(srv: server.ViewServer, path: str) -> Any:
    status, _, body = request(srv, path)
    assert status == 200, (path, status, body)
    return body
