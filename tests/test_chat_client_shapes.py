"""The chat client on the openai SDK (issue 13 item 4): every reply shape read after one
request, Retry-After as an HTTP-date, no API key for a remote endpoint, and an unreachable
endpoint that stops the run -- all against the loopback fake server."""
from __future__ import annotations

import email.utils
import json
import socket
import time

import pytest

from stsim.solvers.chat_client import ChatClient, ChatConfig, EndpointUnreachable, retry_after_s
from stsim.solvers.live_model import OpenAISolver
from stsim.cli import main
from stsim.records import Task
from tests.fake_openai import FakeChatServer, WithHeaders, message_body

MSG = [{"role": "user", "content": "hello"}]


def _client(srv, **kw):
    slept: list[float] = []
    return ChatClient(ChatConfig("m", srv.url, backoff_s=0.01, **kw), sleep=slept.append), slept


def test_retry_after_http_date_is_honoured():
    when = time.time() + 29.0  # under the client's 30 s cap on one wait; 20 s of slack for a loaded machine
    date = email.utils.formatdate(when, usegmt=True)
    script = [(429, WithHeaders({"Retry-After": date}, "busy")), (200, "[RESULTS_START] 1 [RESULTS_END]")]
    with FakeChatServer(lambda body, n: script[n]) as srv:
        c, slept = _client(srv)
        assert c.complete(MSG).text.startswith("[RESULTS_START]")
        assert len(srv.requests) == 2
    assert 9.0 <= slept[0] <= 29.0  # the date, less the time already gone (whole seconds)


def test_retry_after_forms():
    now = email.utils.parsedate_to_datetime("Wed, 21 Oct 2015 07:28:00 GMT").timestamp() - 120
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=now) == pytest.approx(120.0)
    assert retry_after_s({"retry-after": "7"}) == 7.0
    assert retry_after_s({"retry-after-ms": "250", "retry-after": "7"}) == 0.25
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past


def _task() -> Task:
    return Task("t/stark.localization.range/0", "stark.localization.range", "Where?", {}, [1.0, 2.0],
                "point", [], {"rubric": "stark"})


@pytest.mark.parametrize("body, outcome, status, detail", [
    (message_body({"content": None, "refusal": "I can't help with that."}), "refusal", "refusal", "can't help"),
    (message_body({"content": [{"type": "refusal", "refusal": "No."}]}), "refusal", "refusal", "No."),
    (message_body({}, choices=False), "empty", "format_failure", "no choices"),
    (message_body({"content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                     "function": {"name": "python", "arguments": "{}"}}]}),
     "tool_calls", "format_failure", "tool calls only"),
    (message_body({"content": ""}), "empty", "format_failure", "no content"),
])
def test_non_answers_take_one_request_and_have_an_outcome(body, outcome, status, detail):
    with FakeChatServer(lambda b, n: (200, body)) as srv:
        c, _ = _client(srv)
        solver = OpenAISolver(c)
        (ans,) = solver.solve(_task())
        assert len(srv.requests) == 1
        assert c.complete([{"role": "system", "content": solver_system(solver)}, {"role": "user", "content": "Where?"}]).outcome == outcome
        assert len(srv.requests) == 1  # cached
    assert ans.status == status and detail in ans.detail


def solver_system(solver):
    from stsim.solvers.live_model import MODES
    return MODES[solver.mode]


def test_content_as_a_list_of_parts_is_read():
    body = message_body({"content": [{"type": "text", "text": "Estimate: [RESULTS_START] [1.5, "},
                                     {"type": "text", "text": "2.5] [RESULTS_END]"}]})
    with FakeChatServer(lambda b, n: (200, body)) as srv:
        c, _ = _client(srv)
        (ans,) = OpenAISolver(c).solve(_task())
        assert len(srv.requests) == 1
    assert ans.status == "ok" and ans.value == [1.5, 2.5]


def test_missing_api_key_for_a_remote_endpoint_is_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--solver", "openai:m", "--base-url", "https://api.example.com/v1",
                 "--api-key-env", "NO_SUCH_KEY_VAR", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no API key" in err and "NO_SUCH_KEY_VAR" in err
    assert not out.exists()


@pytest.mark.parametrize("url", ["notaurl", "127.0.0.1:8000/v1", "ftp://host/v1", "http:///v1"])
def test_a_base_url_that_is_not_a_url_is_named(tmp_path, monkeypatch, capsys, url):
    """`--base-url 127.0.0.1:8000/v1` (no scheme) used to fail as 'no API key for ...' (or, with
    a key, after three connection attempts): now it says the URL is not one, before anything runs."""
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--solver", "openai:m", "--base-url", url,
                 "--out", str(out), "--quiet"]) == 2
    assert (f"stsim: error: --base-url {url!r}: not an http(s) URL; give the endpoint root, e.g. "
            "http://127.0.0.1:8000/v1") in capsys.readouterr().err
    assert not out.exists()


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_unreachable_endpoint_stops_the_run_non_zero(tmp_path, capsys):
    out = tmp_path / "run"
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code = main(["run", "quickstart", "--n", "1", "--family", "stark.localization.range", "--solver", "openai:m",
                 "--base-url", url, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "3 consecutive connection failures" in err, err
    assert json.loads((out / "summary.json").read_text())["n_tasks"] == 0  # what was done is kept


def test_connection_failures_are_counted_across_requests():
    c = ChatClient(ChatConfig("m", f"http://127.0.0.1:{_closed_port()}/v1", max_retries=1,
                              max_connection_failures=3), sleep=lambda s: None)
    from stsim.solvers.chat_client import ChatError
    with pytest.raises(ChatError) as first:
        c.complete(MSG)  # two attempts, both fail: not yet 3
    assert not isinstance(first.value, EndpointUnreachable)
    with pytest.raises(EndpointUnreachable):
        c.complete(MSG)


def test_run_counts_what_a_lenient_reader_would_recover(tmp_path, capsys):
    out = tmp_path / "run"
    with FakeChatServer(lambda b, n: (200, "The object is at x = 3.2, y = 4.1 km.")) as srv:
        assert main(["run", "quickstart", "--n", "2", "--family", "stark.localization.range", "--solver",
                     "openai:m", "--base-url", srv.url, "--out", str(out), "--quiet"]) == 0
    fam = json.loads((out / "summary.json").read_text())["families"]["stark.localization.range"]
    assert fam["failures"] == 2 and fam["lenient_recoverable"] == 2
    assert "would have read 2 of the format failures" in capsys.readouterr().out
