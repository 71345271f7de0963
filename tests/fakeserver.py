"""A fake OpenAI-compatible HTTP server on 127.0.0.1 for tests (no network).

Serves POST /v1/chat/completions (and /chat/completions; Ollama's /api/chat and /api/generate too). Replies come from a script, in order, then from
`default` (a callable of the request body returning a reply). A reply is a dict:
  {"content": "text"}                     -> 200 with a chat completion whose message content is the text
  {"content": ..., "delay": 0.2}          -> the same after sleeping 0.2 s
  {"status": 429, "headers": {"Retry-After": "1"}, "body": {...}}  -> that status (body defaults to an error)
  {"drop": True}                          -> closes the connection without answering
  {"raw": "not json"}                     -> 200 with that raw body
  {"status": 401, "echo_headers": True}   -> that status, the error message quoting every request header
  {"usage": {...}, "finish_reason": "length"} may accompany "content"; so may "logprobs": [-0.1, ...] (the
  tokens' log-probabilities, served as choices[0].logprobs.content).
Every request body (parsed JSON) is recorded in `.requests`, its headers (lower-case names) in `.headers`.
POST /v1/embeddings answers with `.embed(text)` for each input (default: a hashed bag of words) and records
its bodies in `.embedding_requests`. POST /v1/moderations answers `.moderate(body)` (default: nothing flagged)
and records its bodies in `.moderation_requests`. POST /v1/scoring_system/score (Pi Labs' scorer) answers
`.pi_score(body)` (default: total_score 0.9) and records its bodies in `.pi_requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any]


class FakeOpenAI:
    def __init__(self, default: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.default = default or (lambda body: {"content": "ok"})
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        #: POST /v1/embeddings bodies, and the embedding of one text (default: hashed bag of words).
        self.embedding_requests: list[dict[str, Any]] = []
        self.embed: Callable[[str], list[float]] = bag_of_words
        self.moderation_requests: list[dict[str, Any]] = []
        self.pi_requests: list[dict[str, Any]] = []
        self.pi_score: Callable[[dict[str, Any]], dict[str, Any]] = lambda body: {
            "total_score": 0.9, "question_scores": {q["question"]: 0.9 for q in body.get("scoring_spec", [])}}
        self.moderate: Callable[[dict[str, Any]], dict[str, Any]] = lambda body: {
            "id": "modr-fake", "model": body.get("model", "omni-moderation-latest"),
            "results": [{"flagged": False, "categories": {}, "category_scores": {}}]}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # ------------------------------------------------------------ control
    @property
    def url(self) -> str:
        """Base URL to pass as api_base / apiBaseUrl (ends in /v1)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.embedding_requests.clear()

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self._script:
                return self._script.pop(0)
        return self.default(body)

    # ------------------------------------------------------------ HTTP
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body in one segment: no 40 ms delayed-ACK stall

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with fake._lock:
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path.rstrip("/").endswith("/scoring_system/score"):
                    with fake._lock:
                        fake.pi_requests.append(body)
                    reply = {"raw": json.dumps(fake.pi_score(body))}
                elif self.path.rstrip("/").endswith("/moderations"):
                    with fake._lock:
                        fake.moderation_requests.append(body)
                    reply = {"raw": json.dumps(fake.moderate(body))}
                elif self.path.rstrip("/").endswith("/embeddings"):
                    reply: Reply = {"embedding_of": body}
                    with fake._lock:
                        fake.embedding_requests.append(body)
                else:
                    reply = fake._next_reply(body)
                if reply.get("delay"):
                    time.sleep(float(reply["delay"]))
                if reply.get("drop"):
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                status = int(reply.get("status", 200))
                headers = dict(reply.get("headers") or {})
                if "raw" in reply:
                    payload = str(reply["raw"]).encode()
                elif status != 200 and reply.get("echo_headers"):
                    payload = json.dumps({"error": {"message": f"rejected request headers: {dict(self.headers)}",
                                                    "type": "auth_error"}}).encode()
                elif status != 200:
                    payload = json.dumps(reply.get("body") or {
                        "error": {"message": f"injected {status}", "type": "fake_error", "code": status}
                    }).encode()
                elif "embedding_of" in reply:
                    payload = json.dumps(_embeddings(body, fake.embed)).encode()
                elif self.path.rstrip("/").endswith(("/api/chat", "/api/generate")):  # Ollama's own API
                    payload = json.dumps(_ollama(body, reply, chat=self.path.rstrip("/").endswith("chat"))).encode()
                else:
                    payload = json.dumps(_completion(body, reply)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in headers.items():
                    self.send_header(k, str(v))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # /v1/models, for clients that probe
                payload = json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def bag_of_words(text: str, dims: int = 64) -> list[float]:
    """The fake server's default embedding: word counts hashed (crc32) into `dims` buckets, deterministic."""
    import re
    import zlib

    vec = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vec[zlib.crc32(word.encode()) % dims] += 1.0
    return vec


def _embeddings(body: dict[str, Any], embed: Callable[[str], list[float]]) -> dict[str, Any]:
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    return {"object": "list", "model": body.get("model", "fake-embed"),
            "data": [{"object": "embedding", "index": i, "embedding": embed(str(t))} for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": 3 * len(texts), "total_tokens": 3 * len(texts)}}


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    content = reply.get("content", "")
    if not isinstance(content, str):
        content = json.dumps(content)
    usage = reply.get("usage") or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": reply.get("finish_reason", "stop"),
            **({"logprobs": {"content": [{"token": f"t{i}", "logprob": lp, "bytes": None, "top_logprobs": []}
                                         for i, lp in enumerate(reply["logprobs"])]}} if "logprobs" in reply else {}),
        }],
        "usage": usage,
    }


def _ollama(body: dict[str, Any], reply: Reply, *, chat: bool) -> dict[str, Any]:
    """Ollama's /api/chat (or /api/generate) reply, not streamed."""
    content = reply.get("content", "")
    if not isinstance(content, str):
        content = json.dumps(content)
    out: dict[str, Any] = {"model": body.get("model", "fake-model"), "created_at": "2024-01-01T00:00:00Z",
                           "done": True, "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 5}
    if chat:
        out["message"] = {"role": "assistant", "content": content}
    else:
        out["response"] = content
    return out
