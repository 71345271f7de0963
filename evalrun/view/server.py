"""`evalrun view`: the read-only HTTP server over a `.evalrun` folder's catalogue (view/catalogue.py); its
safeguards: docs/view.md."""

from __future__ import annotations

import errno
import ipaddress
import json
import socket
import sys
import traceback
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from evalrun import jsonfast
from evalrun.errors import UsageError
from evalrun.view.catalogue import Catalogue
from evalrun.view.index import Filters, ViewError, capped, index_value

DEFAULT_PORT = 15500  # promptfoo view's
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
           "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"}
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: path -> (content type, package, file): the page, and the HTML report's styles and renderer it shares
FILES = {"/": ("text/html", "view", "app.html"), "/assets/report.css": ("text/css", "report", "report.css"),
         "/assets/report.js": ("text/javascript", "report", "report.js"),
         "/assets/view.js": ("text/javascript", "view", "view.js")}


class ViewServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], state: Path, allow_hosts: Iterable[str] = ()) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)
        self.catalogue = Catalogue(state)
        self.files = {path: (ctype, resources.files(f"evalrun.{package}").joinpath(name).read_text(encoding="utf-8"))
                      for path, (ctype, package, name) in FILES.items()}
        self.hosts = _hosts(address[0], self.server_address[1], allow_hosts)

    @property
    def url(self) -> str:
        host = str(self.server_address[0])
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.server_address[1]}/"


def _hosts(host: str, port: int, allowed: Iterable[str] = ()) -> set[str]:
    """The Host headers a request may carry: the address served (any loopback name for a loopback address; on
    0.0.0.0 / ::, this machine's names), and each `--allow-host` NAME. A Host that is an IP address is accepted
    apart (host_ok): DNS rebinding needs a name; an address typed in a browser is not one."""
    names = {host, *LOOPBACK} if host in LOOPBACK else {host}
    if host in ("0.0.0.0", "::"):
        names = {*LOOPBACK, socket.gethostname(), socket.getfqdn()}
    names |= {n.strip().lower() for n in allowed if n.strip()}
    out = set()
    for name in names:
        bare = name.lower().strip("[]")
        out |= {bare, f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}"}
    return out


def host_ok(header: str, hosts: set[str], port: int) -> bool:
    """The request's Host is one served: a listed name (with or without the port), or an IP address."""
    value = header.strip().lower()
    if value in hosts:
        return True
    name, _, rest = value.rpartition("]") if value.startswith("[") else value.partition(":")
    name = name.lstrip("[") if value.startswith("[") else name
    given_port = rest.lstrip(":") if value.startswith("[") else rest
    if given_port and given_port != str(port):
        return False
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class Handler(BaseHTTPRequestHandler):
    server: ViewServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # quiet: the terminal shows the address and errors only

    def do_GET(self) -> None:
        if not host_ok(self.headers.get("Host", ""), self.server.hosts, self.server.server_address[1]):
            self._send(403, "text/plain", "evalrun view answers requests addressed to this machine's names and "
                       "addresses only (add a name with --allow-host NAME)\n")
            return
        if len(self.path) > 16384:
            self._send(414, "application/json", json.dumps({"error": "the address is too long", "hint": "",
                                                            "kind": "bad_request"}))
            return
        url = urlsplit(self.path)
        if url.path in self.server.files:
            self._send(200, *self.server.files[url.path])
            return
        if not url.path.startswith("/api/"):
            self._send(404, "text/plain", "not found\n")
            return
        try:
            data = self._api([unquote(p) for p in url.path.split("/")[2:]], parse_qs(url.query))
            self._send(200, "application/json", jsonfast.dumps(data))  # NaN as null: JSON the page can parse
        except ViewError as e:
            self._send(e.status, "application/json", json.dumps(e.as_dict(), ensure_ascii=False))
        except Exception:  # a bug: the page says so, the server keeps serving
            traceback.print_exc(file=sys.stderr)
            self._send(500, "application/json", json.dumps({"error": "internal error in evalrun view (the "
                       "terminal shows the traceback)", "hint": "please report it", "kind": "internal"}))

    do_HEAD = do_GET  # _send leaves the body out

    def _refuse(self) -> None:
        self.close_connection = True  # a body it did not read must not pass for the next request
        self.send_response(405)
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Connection", "close")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _refuse

    def _api(self, parts: list[str], params: dict[str, list[str]]) -> Any:
        catalogue = self.server.catalogue
        for part in parts:
            capped("a path part", part)
        match parts:
            case ["runs"]:
                return {"folder": str(catalogue.state), "runs": catalogue.listing()}
            case ["runs", run_id]:
                return catalogue.head(catalogue.get(run_id))
            case ["runs", run_id, "cases", *case] if len(case) <= 1:
                f = Filters.parse(params)
                idx = catalogue.index(catalogue.get(run_id))
                with idx.lock:
                    return idx.detail(case[0]) if case else idx.page(f)
            case ["compare", *rest] if len(rest) <= 2:
                a, b = (capped(k, params.get(k, [""])[-1]) for k in ("a", "b"))
                if not a or not b:
                    raise ViewError("bad_request", "compare needs two runs: ?a=RUN&b=RUN", "pick two runs in the list")
                compared = catalogue.compare(a, b)
                if not rest:
                    return compared.head
                if rest == ["cases"]:
                    return compared.page(Filters.parse(params))
                if rest[0] == "cases":
                    return compared.detail(index_value("case", rest[1]))
        raise ViewError("not_found", f"no such endpoint: {self.path}", "the page's own links use the right ones")

    def _send(self, status: int, ctype: str, body: str | bytes) -> None:
        data = body if isinstance(body, bytes) else body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{ctype}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


def start(state: Path, host: str = "127.0.0.1", port: int | None = None,
          allow_hosts: Iterable[str] = ()) -> tuple[ViewServer, str]:
    """A server bound to host:port; with no port, the default one, or a free one when that is taken."""
    try:
        return ViewServer((host, DEFAULT_PORT if port is None else port), state, allow_hosts), ""
    except OSError as e:
        if port is None and e.errno == errno.EADDRINUSE:
            server = ViewServer((host, 0), state, allow_hosts)
            return server, f"port {DEFAULT_PORT} is in use (another evalrun view?); using port " \
                           f"{server.server_address[1]} instead"
        where = f"{host}:{DEFAULT_PORT if port is None else port}"
        raise UsageError(f"cannot listen on {where}: {e.strerror or e}", key="--port" if port else "--host",
                         hint="choose another port with --port (0: any free port), or leave --port out") from None
