"""A client for OpenAI-compatible chat-completions endpoints, built for benchmark runs on the
``openai`` SDK (which sends the request and reports errors); on top of it, what a benchmark run
needs:

* ``POST {base_url}/chat/completions`` with ``model``, ``messages``, ``temperature``, ``seed``
  and ``max_tokens``; the API key is read from an environment variable (default
  ``OPENAI_API_KEY``).  Without a key only loopback endpoints are allowed (:func:`needs_api_key`).
* Bounded concurrency (a semaphore shared by all threads using the client).
* Retries with exponential backoff (``backoff_s * 2**attempt``, capped; a ``Retry-After``
  header wins, given in seconds, as an HTTP-date, or as ``retry-after-ms``) on HTTP 408, 409,
  429, 5xx, time-outs, connection errors and malformed bodies; other 4xx fail at once.  Each
  attempt has its own time-out; the SDK's own retries are off, so every attempt is logged.
* Fail fast: ``max_connection_failures`` consecutive attempts that reach no server (across all
  requests of the client) raise :class:`EndpointUnreachable`, which ends the run.
* Every reply shape is read (:func:`read_completion`): ``content`` as a string or a list of
  parts; ``content: null`` with a ``refusal`` (outcome ``refusal``, one request); empty
  ``choices`` and replies with only tool calls (outcome ``empty`` / ``tool_calls``, one request).
* A response cache keyed by SHA-256 of (model, temperature, seed, max_tokens, messages),
  stored as JSONL and appended the moment a response arrives, so an interrupted run resumes
  where it stopped and never pays twice for an answer it received.
* A transcript JSONL of every request and response (QSTRBench §3.2: publish every request and
  response): time, key, attempt, HTTP status or error, latency, token counts, raw text; cache
  hits are recorded too (``"cached": true``).
"""
from __future__ import annotations

import email.utils
import hashlib
import ipaddress
import json
import os
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlparse
from pathlib import Path
from typing import Any

from ..records import JsonlWriter, RecordError, iter_jsonl


class ChatError(RuntimeError):
    """A request failed for good (non-retryable status, or retries exhausted)."""


class EndpointUnreachable(ChatError):
    """``max_connection_failures`` consecutive attempts reached no server: the run must stop."""


def is_loopback(base_url: str) -> bool:
    """True if ``base_url``'s host is ``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    host = urlparse(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def needs_api_key(base_url: str, api_key_env: str) -> str | None:
    """Why a run against ``base_url`` cannot start for lack of a key (``None`` when it can):
    every non-loopback endpoint needs the variable ``api_key_env`` set and non-empty."""
    if is_loopback(base_url) or os.environ.get(api_key_env):
        return None
    return (f"no API key for {base_url}: set the environment variable {api_key_env} (or name another "
            "with --api-key-env); only loopback endpoints (127.0.0.1, localhost) may be used without one")


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
        max_connection_failures: consecutive attempts reaching no server before
            :class:`EndpointUnreachable` (counted across requests; any HTTP reply resets it).
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
    max_connection_failures: int = 3

    def params(self) -> dict[str, Any]:
        """The sampling parameters sent with (and keyed into the cache with) each request."""
        p = {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}
        return {k: v for k, v in p.items() if v is not None}


@dataclass
class ChatReply:
    """One completion: its text, token counts and where it came from.

    ``outcome`` is ``ok`` (``text`` is the reply), ``refusal`` (``text`` is the refusal),
    ``empty`` (no choices, or no content) or ``tool_calls`` (only tool calls, no text);
    ``detail`` says more for the last three."""

    text: str
    usage: dict[str, Any]
    cached: bool
    latency_s: float
    key: str
    outcome: str = "ok"
    detail: str | None = None


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
        self._conn_failures = 0
        import openai  # the SDK sends the requests; its retries are off (ours are logged)
        self._openai = openai
        self._sdk = openai.OpenAI(base_url=config.base_url, api_key=os.environ.get(config.api_key_env) or "none",
                                  timeout=config.timeout_s, max_retries=0)
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
            self._log({"key": key, "cached": True, "text": hit["text"], "usage": hit.get("usage", {}),
                       "outcome": hit.get("outcome", "ok")})
            return ChatReply(hit["text"], hit.get("usage", {}), True, 0.0, key,
                             hit.get("outcome", "ok"), hit.get("detail"))
        body = {"model": cfg.model, "messages": messages, **cfg.params()}
        last, retry_after = "no attempt", None
        for attempt in range(cfg.max_retries + 1):
            if attempt:
                self._sleep(self._delay(attempt, retry_after))
            with self._sem:
                t0 = time.perf_counter()
                status, payload, error, retry_after = self._post(body)
                latency = time.perf_counter() - t0
            read = read_completion(payload) if error is None else None
            why = error if read is None else read.get("error")
            self._log({"key": key, "cached": False, "attempt": attempt, "request": body, "status": status,
                       "latency_s": round(latency, 4), "usage": (read or {}).get("usage", {}),
                       "text": (read or {}).get("text"), "outcome": (read or {}).get("outcome"), "error": why})
            if status is None and error is not None:
                self._connection_failed(error)
            else:
                with self._lock:
                    self._conn_failures = 0
            if read is not None and read.get("outcome") is not None:
                entry = {"key": key, "model": cfg.model, "params": cfg.params(), "text": read["text"],
                         "usage": read["usage"], "outcome": read["outcome"], "detail": read.get("detail")}
                with self._lock:
                    self._cache[key] = entry
                    if self._cache_w is not None:
                        self._cache_w.write(entry)
                return ChatReply(read["text"], read["usage"], False, latency, key, read["outcome"],
                                 read.get("detail"))
            last = why or "unknown"
            if status is not None and 400 <= status < 500 and status not in _RETRY_STATUS:
                raise ChatError(f"{cfg.base_url}: HTTP {status}: {why}")
        raise ChatError(f"{cfg.base_url}: giving up after {cfg.max_retries + 1} attempts; last error: {last}")

    def _connection_failed(self, error: str) -> None:
        with self._lock:
            self._conn_failures += 1
            n = self._conn_failures
        if n >= self.config.max_connection_failures:
            raise EndpointUnreachable(
                f"{self.config.base_url}: {n} consecutive connection failures (last: {error}); is the "
                "endpoint up and --base-url right? Stopping the run (answers so far are kept)")

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
        """One HTTP attempt through the SDK: (status, parsed JSON or None, error text or None,
        Retry-After in s or None).  ``status`` is ``None`` when no server answered."""
        oa = self._openai
        try:
            raw = self._sdk.chat.completions.with_raw_response.create(**body)
        except oa.APIStatusError as exc:
            detail = (exc.response.text or "")[:300]
            return exc.status_code, None, f"HTTP {exc.status_code}: {detail}", retry_after_s(exc.response.headers)
        except oa.APITimeoutError as exc:
            return None, None, f"request timed out after {self.config.timeout_s} s ({exc})", None
        except oa.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            return None, None, f"connection failed: {type(cause).__name__}: {cause}", None
        text = raw.http_response.text
        try:
            return raw.status_code, json.loads(text), None, None
        except ValueError:
            return raw.status_code, None, f"malformed body (not JSON): {text[:120]!r}", None


def retry_after_s(headers: Any, now: float | None = None) -> float | None:
    """Seconds to wait from a response's ``retry-after-ms`` or ``Retry-After`` header (seconds or
    an HTTP-date, RFC 9110 §10.2.3); ``None`` when absent or unreadable; never negative."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if ra is None:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _content_text(content: Any) -> tuple[str | None, str | None]:
    """(text, refusal) from a message ``content``: a string, or a list of parts (``{"type":
    "text", "text": ...}``, ``{"type": "refusal", "refusal": ...}``, or bare strings)."""
    if isinstance(content, str):
        return content, None
    if not isinstance(content, list):
        return None, None
    texts, refusals = [], []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("refusal"), str):
                refusals.append(part["refusal"])
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part.get("text"), dict) and isinstance(part["text"].get("value"), str):
                texts.append(part["text"]["value"])
    return ("".join(texts) if texts else None), ("".join(refusals) if refusals else None)


def read_completion(payload: Any) -> dict[str, Any]:
    """Read a chat-completions JSON body.

    Returns a dict with ``outcome`` (``ok`` / ``refusal`` / ``empty`` / ``tool_calls``, or
    ``None`` for a malformed body, which is retried), ``text``, ``usage``, and ``error`` /
    ``detail`` saying what was found."""
    if not isinstance(payload, dict):
        return {"outcome": None, "text": None, "usage": {}, "error": "malformed body: not a JSON object"}
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    choices = payload.get("choices")
    if not isinstance(choices, list):
        err = payload.get("error")
        msg = err.get("message") if isinstance(err, dict) else None
        return {"outcome": None, "text": None, "usage": usage,
                "error": f"malformed body: no choices{f' ({msg})' if msg else ''}"}
    if not choices:
        return {"outcome": "empty", "text": "", "usage": usage, "detail": "the endpoint returned no choices"}
    msg = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(msg, dict):
        return {"outcome": None, "text": None, "usage": usage, "error": "malformed body: no choices[0].message"}
    text, refusal = _content_text(msg.get("content"))
    if isinstance(msg.get("refusal"), str) and msg["refusal"]:
        refusal = msg["refusal"]
    if text:
        return {"outcome": "ok", "text": text, "usage": usage}
    if refusal:
        return {"outcome": "refusal", "text": refusal, "usage": usage, "detail": f"refusal: {refusal[:200]}"}
    if msg.get("tool_calls") or msg.get("function_call"):
        names = [c.get("function", {}).get("name") for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
        return {"outcome": "tool_calls", "text": "", "usage": usage,
                "detail": f"tool calls only, no text ({', '.join(n for n in names if n) or 'unnamed'})"}
    if text == "" or msg.get("content") is None:
        return {"outcome": "empty", "text": "", "usage": usage, "detail": "the reply has no content"}
    return {"outcome": None, "text": None, "usage": usage,
            "error": "malformed body: choices[0].message.content is neither text nor a list of parts"}
