"""The escapes reported in issue 12, as tests in both isolation modes: a symbolic link out of
the work folder, host files through ``/proc/self/root``, the host's environment (API key)
through ``/proc/<ancestor>/environ``, and a detached ``setsid`` child that made the host hang.
Every one returned ``ok`` (or hung) in the process mode before; now each is refused or
contained, and the host is unharmed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from stsim.sandbox.isolation import Limits, Sandbox, bwrap_available

LIMITS = Limits(wall_s=4.0, cpu_s=2.0, memory_mb=512, output_bytes=1 << 16, processes=24, open_files=32)
MODES = (["bwrap"] if bwrap_available() else []) + ["process"]
CANARY = "sk-stsim-canary-4f1d"


def _run(source: str, isolation: str, guard: bool = True, timeout: float = 25.0, use_cgroup: bool = True):
    """Run in a thread so that a hang fails the test instead of the suite."""
    box: dict = {}

    def go():
        with Sandbox(LIMITS, isolation=isolation, guard=guard, use_cgroup=use_cgroup) as sb:
            box["r"] = sb.run(source)
    t = threading.Thread(target=go, daemon=True)
    started = time.monotonic()
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"the sandbox did not return within {timeout} s"
    return box["r"], time.monotonic() - started


@pytest.mark.parametrize("guard", [True, False], ids=["guard", "no-guard"])
@pytest.mark.parametrize("isolation", MODES)
def test_symlink_out_of_the_work_folder(isolation, guard, tmp_path):
    target = tmp_path / "outside.txt"
    src = textwrap.dedent(f"""
        import random
        def solver():
            o = random._os
            o.symlink({str(target)!r}, "lnk")
            open("lnk", "w").write("x")
            return 1
        """)
    r, _ = _run(src, isolation, guard)
    assert not target.exists(), "the program wrote outside its work folder"
    assert r.value is None
    if isolation == "process":
        assert r.status == "forbidden", (r.status, r.detail)
    else:  # the host path does not exist in the sandbox's own file system
        assert r.status in ("forbidden", "crashed") and "No such file" in r.detail


@pytest.mark.parametrize("guard", [True, False], ids=["guard", "no-guard"])
@pytest.mark.parametrize("isolation", MODES)
def test_host_file_through_proc_self_root(isolation, guard, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host-secret-7731")
    src = textwrap.dedent(f"""
        def solver():
            return [len(open("/proc/self/root" + {str(secret)!r}).read())]
        """)
    r, _ = _run(src, isolation, guard)
    assert r.value is None and "host-secret" not in r.stdout + (r.detail or "")
    if isolation == "process":
        assert r.status == "forbidden", (r.status, r.detail)
    else:  # /proc/self/root is the sandbox's own root, without the host's files
        assert r.status in ("crashed", "forbidden") and ("No such file" in r.detail or guard)


ANCESTORS = textwrap.dedent("""
    import random
    def solver():
        o = random._os
        found, pid = [], o.getppid()
        for _ in range(6):
            for path in (f"/proc/{pid}/environ", f"/proc/self/root/proc/{pid}/environ"):
                try:
                    found.append(open(path, "rb").read().decode("utf-8", "replace"))
                except Exception as exc:
                    print(path, type(exc).__name__)
            try:
                status = open(f"/proc/self/root/proc/{pid}/status").read()
                pid = int(status.split("PPid:")[1].split()[0])
            except Exception as exc:
                print("status", type(exc).__name__)
                break
            if pid <= 1:
                break
        print("\\n".join(found))
        return [sum("CANARY" in f or "sk-stsim" in f for f in found), len(found)]
    """)


@pytest.mark.parametrize("guard", [True, False], ids=["guard", "no-guard"])
@pytest.mark.parametrize("isolation", MODES)
def test_host_environment_of_ancestors_is_unreadable(isolation, guard, tmp_path):
    """The host process holds OPENAI_API_KEY in its environment (as in a live run); the program
    walks up its ancestors reading each one's /proc/PID/environ, directly and through
    /proc/self/root.  The host runs in a child process so that the key is in its real
    (exec-time) environment."""
    prog = tmp_path / "walk.py"
    prog.write_text(ANCESTORS)
    host = textwrap.dedent(f"""
        import json, sys
        from stsim.sandbox.isolation import Limits, Sandbox
        with Sandbox(Limits(wall_s=10, cpu_s=5), isolation={isolation!r}, guard={guard!r}) as sb:
            print(json.dumps(sb.run(open({str(prog)!r}).read()).to_dict()))
        """)
    env = dict(os.environ, OPENAI_API_KEY=CANARY, STSIM_CANARY=CANARY)
    p = subprocess.run([sys.executable, "-c", host], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert CANARY not in p.stdout, "the host's environment reached the program"
    if r["status"] == "ok":
        assert r["value"][0] == 0
    else:
        assert r["status"] == "forbidden" and guard, r


SETSID = textwrap.dedent("""
    import random, time
    def solver():
        o = random._os
        pid = o.fork()
        if pid == 0:
            o.setsid()
            if o.fork() == 0:   # and a grandchild, orphaned at once
                time.sleep(60)
            time.sleep(60)
            o._exit(0)
        print(pid, flush=True)
        return 1
    """)


@pytest.mark.parametrize("use_cgroup", [True, False], ids=["cgroup", "no-cgroup"])
@pytest.mark.parametrize("isolation", MODES)
def test_detached_setsid_child_neither_hangs_nor_survives(isolation, use_cgroup, monkeypatch):
    """A job forks a child that starts its own session, keeps stdout open and sleeps: the run
    returns as soon as the job does and the child is killed (no guard: the fork is allowed).
    Without a pids cgroup the host is made to act as a non-root user (as root it refuses
    process creation there, see test_root_without_pids_cgroup_cannot_fork)."""
    if not use_cgroup:
        monkeypatch.setattr(os, "geteuid", lambda: 1000)
    r, took = _run(SETSID, isolation, guard=False, use_cgroup=use_cgroup)
    assert r.status == "ok" and r.value == 1, (r.status, r.detail)
    assert took < LIMITS.wall_s + 3 and r.wall_s < LIMITS.wall_s
    if isolation == "process":  # host pid: gone (killed and reaped), not a live sleeper
        pid = int(r.stdout.split()[0])
        time.sleep(0.2)
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC holds for non-root users")
def test_root_without_pids_cgroup_cannot_fork():
    """As root the kernel ignores RLIMIT_NPROC: without a pids cgroup, process mode refuses
    process creation (seccomp) instead of risking a fork bomb on the host; threads still work."""
    r, _ = _run(SETSID, "process", guard=False, use_cgroup=False)
    assert r.status == "forbidden" and "Operation not permitted" in r.detail
    assert "seccomp-nofork" in r.isolation
    r, _ = _run("import threading\ndef solver():\n    t = threading.Thread(target=print)\n    t.start()\n"
                "    t.join()\n    return 2\n", "process", guard=False, use_cgroup=False)
    assert r.status == "ok" and r.value == 2


@pytest.mark.parametrize("isolation", MODES)
def test_result_file_planted_as_a_link_is_not_followed_by_the_host(isolation, tmp_path):
    """The host reads the result from the work folder: a program that replaces it with a link
    to a host file (a JSON the host can read) must not get that file's content as its value."""
    host_json = tmp_path / "host.json"
    host_json.write_text(json.dumps({"status": "ok", "value": [7331.0]}))
    src = textwrap.dedent(f"""
        import random, sys
        def solver():
            o = random._os
            o.symlink({str(host_json)!r}, ".stsim_result.json")
            o.symlink({str(host_json)!r}, ".stsim_supervisor.json")
            o._exit(0)
        """)
    r, _ = _run(src, isolation, guard=False)
    assert r.value != [7331.0] and r.status == "no_result", (r.status, r.value, r.detail)
