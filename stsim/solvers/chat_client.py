"""A client for OpenAI-compatible chat-completions endpoints, built for benchmark runs.

* ``POST {base_url}/chat/completions`` with ``model``, ``messages``, ``temperature``, ``seed``
  and ``max_tokens``; the API key is read from an environment variable (default
  ``OPENAI_API_KEY``) and sent as ``Authorization: Bearer``; no key, no header.
* Bounded concurrency (a semaphore shared by all threads using the client).
* Retries with exponential backoff (``backoff_s * 2**attempt``, capped; a ``Retry-After``
  header wins) on HTTP 429, 5xx, time-outs, connection errors and malformed bodies; other 4xx
  fail at once.  Each attempt has its own time-out.
* A response cache keyed by SHA-256 of (model, temperature, seed, max_tokens, messages),
  stored as JSONL and appended the moment a response arrives, so an interrupted run resumes
  where it stopped and never pays twice for an answer it received.
* A transcript JSONL of every request and response (QSTRBench §3.2: publish every request and
  response): time, key, attempt, HTTP status or error, latency, token counts, raw text; cache
  hits are recorded too (``"cached": true``).
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records import JsonlWriter, RecordError, iter_jsonl


class ChatError(RuntimeError):
    """A request failed for good (non-retryable status, or retries exhausted)."""


@dataclass(frozen=True)
class ChatConfig:
    """Endpoint and sampling parameters.

    Attributes:
        model: model name sent to the endpoint.
        base_url: endpoint root, e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8000/v1``.
        api_key_env: name of the environment variable holding the API key.
        temperature, seed, max_tokens: sampling parameters (``None`` = not sent).
        timeout_s: per-request time-out, seconds.
        max_retries: retries after the first attempt.
        backoff_s, max_backoff_s: first backoff delay and its cap, seconds.
        concurrency: requests in flight at once, across threads.
    """

    model: str
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = 0.0
    seed: int | None = 0
    max_tokens: int | None = None
    timeout_s: float = 120.0
    max_retries: int = 5
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    concurrency: int = 4

    def params(self) -> dict[str, Any]:
        """The sampling parameters sent with (and keyed into the cache with) each request."""
        p = {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}
        return {k: v for k, v in p.items() if v is not None}


@dataclass
class ChatReply:
    """One completion: its text, token counts and where it came from."""

    text: str
    usage: dict[str, Any]
    cached: bool
    latency_s: float
    key: str


def cache_key(model: str, params: dict[str, Any], messages: list[dict[str, str]]) -> str:
    """SHA-256 hex of the canonical JSON of (model, parameters, messages)."""
    blob = json.dumps({"model": model, "params": params, "messages": messages}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


_RETRY_STATUS = {408, 409, 429}


class ChatClient:
    """Send chat completions with caching, retries, bounded concurrency and a transcript.

    Args:
        config: :class:`ChatConfig`.
        cache_path: JSONL response cache (read at start, appended as responses arrive); None = off.
        transcript_path: JSONL transcript (appended); None = off.
        sleep: the function used to wait between retries (tests pass a fast one).
    Raises:
        RecordError: the cache file is malformed.
    """

    def __init__(self, config: ChatConfig, cache_path: str | Path | None = None,
                 transcript_path: str | Path | None = None, sleep=time.sleep) -> None:
        self.config = config
        self._sem = threading.BoundedSemaphore(max(1, int(config.concurrency)))
        self._lock = threading.Lock()
        self._sleep = sleep
        self._cache: dict[str, dict[str, Any]] = {}
        self._cache_w = self._trans_w = None
        if cache_path is not None:
            p = Path(cache_path)
            if p.exists():
                for lineno, obj in iter_jsonl(p):
                    if "key" not in obj or "text" not in obj:
                        raise RecordError(f"{p}:{lineno}: cache entry needs 'key' and 'text'")
                    self._cache[obj["key"]] = obj
            self._cache_w = JsonlWriter(p, mode="a")
        if transcript_path is not None:
            self._trans_w = JsonlWriter(transcript_path, mode="a")

    # -- public -------------------------------------------------------------------------
    def complete(self, messages: list[dict[str, str]]) -> ChatReply:
        """The assistant's reply to ``messages`` (from the cache when already paid for).

        Raises:
            ChatError: a non-retryable HTTP status, or every attempt failed.
        """
        cfg = self.config
        key = cache_key(cfg.model, cfg.params(), messages)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            self._log({"key": key, "cached": True, "text": hit["text"], "usage": hit.get("usage", {})})
            return ChatReply(hit["text"], hit.get("usage", {}), True, 0.0, key)
        body = {"model": cfg.model, "messages": messages, **cfg.params()}
        last, retry_after = "no attempt", None
        for attempt in range(cfg.max_retries + 1):
            if attempt:
                self._sleep(self._delay(attempt, retry_after))
            with self._sem:
                t0 = time.perf_counter()
                status, payload, error, retry_after = self._post(body)
                latency = time.perf_counter() - t0
            text, usage, why = _parse_completion(payload) if error is None else (None, {}, error)
            self._log({"key": key, "cached": False, "attempt": attempt, "request": body, "status": status,
                       "latency_s": round(latency, 4), "usage": usage, "text": text, "error": why})
            if text is not None:
                entry = {"key": key, "model": cfg.model, "params": cfg.params(), "text": text, "usage": usage}
                with self._lock:
                    self._cache[key] = entry
                    if self._cache_w is not None:
                        self._cache_w.write(entry)
                return ChatReply(text, usage, False, latency, key)
            last = why or "unknown"
            if status is not None and 400 <= status < 500 and status not in _RETRY_STATUS:
                raise ChatError(f"{cfg.base_url}: HTTP {status}: {why}")
        raise ChatError(f"{cfg.base_url}: giving up after {cfg.max_retries + 1} attempts; last error: {last}")

    def close(self) -> None:
        for w in (self._cache_w, self._trans_w):
            if w is not None:
                w.close()

    # -- internals ------------------------------------------------------------------------
    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Backoff before retry ``attempt`` (1-based): the server's ``Retry-After`` when it sent
        one, else doubling from ``backoff_s``; at most ``max_backoff_s``."""
        cfg = self.config
        d = retry_after if retry_after is not None else cfg.backoff_s * 2 ** (attempt - 1)
        return min(cfg.max_backoff_s, max(0.0, d))

    def _log(self, record: dict[str, Any]) -> None:
        if self._trans_w is None:
            return
        with self._lock:
            self._trans_w.write({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                 "model": self.config.model, **record})

    def _post(self, body: dict[str, Any]) -> tuple[int | None, Any, str | None, float | None]:
        """One HTTP attempt: (status, parsed JSON or None, error text or None, Retry-After s)."""
        cfg = self.config
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(cfg.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(cfg.base_url.rstrip("/") + "/chat/completions",
                                     data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=cfg.timeout_s) as resp:
                raw = resp.read()
                status = resp.status
        except urllib.error.HTTPError as exc:
            ra = exc.headers.get("Retry-After") if exc.headers else None
            try:
                ra_s = float(ra) if ra is not None else None
            except ValueError:
                ra_s = None
            detail = exc.read()[:300].decode("utf-8", "replace")
            return exc.code, None, f"HTTP {exc.code}: {detail}", ra_s
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            return None, None, f"{type(exc).__name__}: {reason}", None
        try:
            return status, json.loads(raw), None, None
        except ValueError:
            return status, None, f"malformed body (not JSON): {raw[:120]!r}", None


def _parse_completion(payload: Any) -> tuple[str | None, dict[str, Any], str | None]:
    """(text, usage, error) from a chat-completions JSON body."""
    try:
        msg = payload["choices"][0]["message"]
        text = msg.get("content")
        if not isinstance(text, str):
            return None, {}, "malformed body: choices[0].message.content is not a string"
    except (KeyError, IndexError, TypeError):
        return None, {}, "malformed body: no choices[0].message"
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    return text, usage, None

