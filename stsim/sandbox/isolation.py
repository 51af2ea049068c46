"""Run a model-written ``solver()`` in a sandbox and return its value or an explicit outcome.

STARK §4.4 runs model-written code "in a sandbox environment" with numpy, scipy, shapely and
filterpy available; this module is that sandbox.  One program, one fresh process, one result::

    >>> sb = Sandbox(Limits(wall_s=5))
    >>> sb.run("def solver():\\n    return [1.0, 2.0]\\n").status
    'ok'

**Isolation** (recorded in every :class:`SandboxResult`, field ``isolation``), strongest first:

``bwrap``
    bubblewrap (Debian/PyPI package ``bubblewrap``) with new user, PID, network, mount, IPC and
    UTS namespaces: no network interface but loopback, a read-only root holding only the
    system libraries and the Python installation, a private writable ``/tmp`` (a host
    temporary directory deleted afterwards), no home directory, no project checkout; the whole
    PID namespace dies with the sandbox.  ``+pids-cgroup`` is appended when a writable pids
    cgroup caps the number of processes (needed when running as root, where the kernel
    ignores ``RLIMIT_NPROC``).
``bwrap+zygote`` (``Sandbox(reuse=True)``)
    the same bubblewrap sandbox, kept alive: a pre-imported interpreter forks one child per
    job (limits and guard applied in the child); after each job every other process of the
    sandbox is killed and the work directory emptied; a timeout discards the sandbox.  Jobs
    share namespaces one after another, never at once.  About 15x the throughput
    (``perf/sandbox_bench.py``).
``process``
    a separate Python process in its own session with the same resource limits; no
    filesystem or network isolation.  Used only when bubblewrap is unavailable.

**Limits** (:class:`Limits`, all configurable): wall time (killed from outside, with every
process it started), CPU time (``RLIMIT_CPU``), address space (``RLIMIT_AS``), processes
(``RLIMIT_NPROC`` and the pids cgroup), open files (``RLIMIT_NOFILE``), bytes per written
file (``RLIMIT_FSIZE``) and bytes of captured stdout/stderr (the rest is drained and dropped;
``stdout_truncated`` / ``stderr_truncated`` say so).

**Outcomes** (``SandboxResult.status``): ``ok`` (value is a number or nested list of numbers),
``timeout`` (wall or CPU limit), ``memory`` (allocation beyond the limit), ``crashed`` (an
exception, with its text, or death by a signal), ``forbidden`` (the guard or the isolation
refused an operation: network, process creation, ctypes, writes outside ``/tmp``, imports
outside the allow-list), ``no_result`` (no ``solver`` or it returned ``None``), ``bad_shape``
(a value that is not numeric, or does not fit the expected answer).

The *guard* (an audit hook and an import allow-list inside the sandboxed interpreter, see
:mod:`stsim.sandbox.harness`) only makes refusals explicit; it is never counted as
isolation.  Call forms: ``solver()`` (STARK Table 5), ``solver(inputs)`` (a task's structured
inputs) and STARK's tracking form ``solver(readings, coordinate, timestamp)``.
"""
from __future__ import annotations

import atexit
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from . import harness as sandbox_harness

SANDBOX_STATUSES = ("ok", "timeout", "memory", "crashed", "forbidden", "no_result", "bad_shape")

#: Top-level modules a solver may import (STARK §4.1: numpy, scipy, shapely, filterpy) plus
#: pure-computation parts of the standard library.
DEFAULT_ALLOWED_IMPORTS = frozenset({
    "numpy", "scipy", "shapely", "filterpy", "math", "cmath", "statistics", "itertools",
    "functools", "collections", "heapq", "bisect", "random", "json", "re", "typing",
    "dataclasses", "fractions", "decimal", "copy", "operator", "enum", "string", "time",
    "datetime", "numbers", "abc", "warnings", "array",
})

_INNER_TMP = "/tmp"
_INNER_HARNESS = "/opt/stsim-sandbox/harness.py"
_INNER_LIB = "/opt/stsim-lib"
_INNER_PY = "/opt/stsim-python"


class SandboxError(RuntimeError):
    """The sandbox itself could not run (not the program's fault): e.g. no Python found."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run.

    Attributes:
        wall_s: wall-clock seconds from job start to kill (whole process tree).
        cpu_s: CPU seconds of the program (``RLIMIT_CPU``, counted from job start).
        memory_mb: address-space limit in MiB (``RLIMIT_AS``).
        output_bytes: bytes of stdout and of stderr kept each; the rest is dropped and reported.
        processes: process cap (``RLIMIT_NPROC``; pids cgroup when writable).
        open_files: file descriptor cap (``RLIMIT_NOFILE``).
        file_mb: largest file the program may write, MiB (``RLIMIT_FSIZE``).
    """

    wall_s: float = 10.0
    cpu_s: float = 10.0
    memory_mb: int = 1024
    output_bytes: int = 64 * 1024
    processes: int = 32
    open_files: int = 64
    file_mb: int = 16

    def __post_init__(self) -> None:
        for k, v in asdict(self).items():
            if not v > 0:
                raise ValueError(f"sandbox limit {k} must be positive, got {v!r}")


@dataclass
class SandboxResult:
    """The outcome of one sandboxed run (``to_dict`` is what ``stsim sandbox run`` prints)."""

    status: str
    value: Any
    stdout: str
    stderr: str
    isolation: str
    wall_s: float
    detail: str | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    limits: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------ isolation probe
_PROBE: dict[str, Any] = {}


def _python_roots() -> list[str]:
    """Directories the sandboxed interpreter needs read-only: the venv and its base install."""
    roots = {sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)}
    return sorted(r for r in roots if r and os.path.isdir(r))


def _inner_root(path: str) -> str:
    """Where a host path of the Python install is mounted inside the sandbox.

    Paths under the sandbox's private ``/tmp`` (a venv made with ``mktemp -d``, or a CI checkout
    under ``/tmp``) would be hidden by it, so they are mounted under ``/opt/stsim-python``
    instead; everything else keeps its path."""
    if path == _INNER_TMP or path.startswith(_INNER_TMP + "/"):
        return _INNER_PY + path
    return path


def _bwrap_base() -> list[str]:
    args = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "sandbox",
            "--uid", "65534", "--gid", "65534", "--proc", "/proc", "--dev", "/dev"]
    for d in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for r in _python_roots():
        if not any(r == p or r.startswith(p + "/") for p in ("/usr", "/lib", "/bin")):
            args += ["--ro-bind", r, _inner_root(r)]
    return args


def bwrap_available() -> bool:
    """True if bubblewrap is installed and can create the namespaces here (probed once)."""
    if "bwrap" not in _PROBE:
        ok = False
        if shutil.which("bwrap"):
            try:
                r = subprocess.run(_bwrap_base() + ["--remount-ro", "/", _inner_root(sys.executable), "-I", "-c", "pass"],
                                   capture_output=True, timeout=30)
                ok = r.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                ok = False
        _PROBE["bwrap"] = ok
    return _PROBE["bwrap"]


def _pids_cgroup_root() -> Path | None:
    """A writable cgroup (v1 ``pids`` controller or v2 with ``pids``) to cap processes, or None."""
    if "cgroup" not in _PROBE:
        found = None
        for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup")):
            if not (base / "cgroup.procs").exists():
                continue
            probe = base / f"stsim-probe-{os.getpid()}"
            try:
                probe.mkdir()
                ok = (probe / "pids.max").exists()
                probe.rmdir()
            except OSError:
                continue
            if ok:
                found = base
                break
        _PROBE["cgroup"] = found
    return _PROBE["cgroup"]


# ------------------------------------------------------------------------------------ workers
class _Drain(threading.Thread):
    """Read a pipe to the end, keeping the first ``cap`` bytes and counting the rest."""

    def __init__(self, fh, cap: int) -> None:
        super().__init__(daemon=True)
        self.fh, self.cap, self.kept, self.total = fh, cap, bytearray(), 0

    def run(self) -> None:
        try:
            while True:
                chunk = self.fh.read1(1 << 16)
                if not chunk:
                    break
                self.total += len(chunk)
                room = self.cap - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
        except (OSError, ValueError):
            pass

    def text(self) -> tuple[str, bool]:
        return self.kept.decode("utf-8", "replace"), self.total > self.cap


class _Worker:
    """One sandboxed interpreter, started ahead of its job (warm), used for exactly one run; or,
    with ``serve``, a *zygote* that forks one child per job (see :meth:`run_forked`)."""

    def __init__(self, sb: "Sandbox", serve: bool = False) -> None:
        self.sb = sb
        self.serve = serve
        self.dead = False
        self.tmp = tempfile.mkdtemp(prefix="stsim-sandbox-")
        self.cgroup: Path | None = None
        harness = sandbox_harness.__file__
        py = sys.executable
        preimports = ",".join(sb.preimport)
        env = {"PATH": "/usr/bin:/bin", "HOME": _INNER_TMP if sb.isolation == "bwrap" else self.tmp,
               "TMPDIR": _INNER_TMP if sb.isolation == "bwrap" else self.tmp, "LANG": "C.UTF-8",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
        if sb.isolation == "bwrap":
            py = _inner_root(py)
            cmd = _bwrap_base() + ["--bind", self.tmp, _INNER_TMP, "--ro-bind", harness, _INNER_HARNESS]
            if sb.share_stsim:
                cmd += ["--ro-bind", str(Path(__file__).resolve().parents[1]), f"{_INNER_LIB}/stsim"]
            cmd += ["--chdir", _INNER_TMP, "--remount-ro", "/", py, "-I", _INNER_HARNESS, preimports,
                    os.pathsep.join(sb.extra_paths)]
            self.workdir = _INNER_TMP
        else:
            cmd = [py, "-I", harness, preimports, os.pathsep.join(sb.extra_paths)]
            self.workdir = self.tmp
        pass_fds: tuple[int, ...] = ()
        if serve:
            self.sock, inner = socket.socketpair()
            pass_fds = (inner.fileno(),)
            cmd += ["--serve", str(inner.fileno())]
        root = _pids_cgroup_root() if sb.use_cgroup else None
        preexec = None
        if root is not None:
            self.cgroup = root / f"stsim-{os.getpid()}-{id(self)}"
            try:
                self.cgroup.mkdir()
                (self.cgroup / "pids.max").write_text(str(sb.limits.processes + 4))
                procs = str(self.cgroup / "cgroup.procs")

                def join_cgroup() -> None:  # runs in the child before exec: its tree stays inside
                    with open(procs, "w") as fh:
                        fh.write(str(os.getpid()))
                preexec = join_cgroup
            except OSError:
                self.cgroup = None
        io = subprocess.DEVNULL if serve else subprocess.PIPE
        self.proc = subprocess.Popen(cmd, stdin=io, stdout=io, stderr=io, cwd=self.tmp, env=env,
                                     start_new_session=True, preexec_fn=preexec, pass_fds=pass_fds)
        if serve:
            inner.close()
            return
        self.out = _Drain(self.proc.stdout, sb.limits.output_bytes)
        self.err = _Drain(self.proc.stderr, sb.limits.output_bytes)
        self.out.start()
        self.err.start()

    @property
    def isolation(self) -> str:
        return self.sb.isolation + ("+pids-cgroup" if self.cgroup is not None else "")

    def kill(self) -> None:
        """Kill the process tree: the session, and every process left in the cgroup."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.cgroup is not None:
            try:
                for pid in (self.cgroup / "cgroup.procs").read_text().split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
            except OSError:
                pass

    def cleanup(self) -> None:
        self.dead = True
        self.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for fh in (self.proc.stdin, self.proc.stdout, self.proc.stderr, getattr(self, "sock", None)):
            try:
                if fh is not None:
                    fh.close()
            except OSError:
                pass
        if self.cgroup is not None:
            for _ in range(50):
                try:
                    self.cgroup.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
            self.cgroup = None
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run(self, job: dict[str, Any]) -> SandboxResult:
        lim = self.sb.limits
        job = dict(job, workdir=self.workdir, limits=asdict(lim))
        started = time.perf_counter()
        timed_out = False
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            rc = self.proc.wait(timeout=lim.wall_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            self.kill()
            rc = self.proc.wait()
        wall = time.perf_counter() - started
        self.kill()  # anything it started is gone before we read the result
        self.out.join(2.0)
        self.err.join(2.0)
        stdout, out_trunc = self.out.text()
        stderr, err_trunc = self.err.text()
        res_path = Path(self.tmp) / sandbox_harness.RESULT_NAME
        status, value, detail = _classify(timed_out, rc, res_path, stderr, lim)
        isolation = self.isolation
        self.cleanup()
        return SandboxResult(status, value, stdout, stderr, isolation, round(wall, 4), detail,
                             out_trunc, err_trunc, asdict(lim))


    def run_forked(self, job: dict[str, Any]) -> SandboxResult:
        """Run a job in a child forked by the zygote, with its own stdout/stderr pipes.

        After the child exits the zygote kills every other process of the sandbox and empties
        the work directory, so jobs share namespaces only one after another, never state.  On
        a timeout the whole sandbox is killed and this worker is ``dead``.
        """
        lim = self.sb.limits
        isolation = self.isolation + "+zygote"
        job = dict(job, workdir=self.workdir, limits=asdict(lim))
        r_out, w_out = os.pipe()
        r_err, w_err = os.pipe()
        out = _Drain(os.fdopen(r_out, "rb"), lim.output_bytes)
        err = _Drain(os.fdopen(r_err, "rb"), lim.output_bytes)
        out.start()
        err.start()
        data = json.dumps(job).encode()
        started = time.perf_counter()
        timed_out, rc = False, -1
        try:
            socket.send_fds(self.sock, [len(data).to_bytes(8, "big")], [w_out, w_err])
            self.sock.sendall(data)
        except OSError:
            self.dead = True
        finally:
            os.close(w_out)
            os.close(w_err)
        if not self.dead:
            self.sock.settimeout(lim.wall_s)
            reply = b""
            try:
                while not reply.endswith(b"\n"):
                    chunk = self.sock.recv(256)
                    if not chunk:
                        raise EOFError
                    reply += chunk
                rc = int(json.loads(reply)["rc"])
            except TimeoutError:
                timed_out = True
                self.cleanup()
            except (EOFError, OSError, ValueError, KeyError):
                self.cleanup()
        wall = time.perf_counter() - started
        out.join(2.0)
        err.join(2.0)
        stdout, out_trunc = out.text()
        stderr, err_trunc = err.text()
        res_path = Path(self.tmp) / sandbox_harness.RESULT_NAME
        status, value, detail = _classify(timed_out, rc, res_path, stderr, lim)
        try:
            res_path.unlink()
        except OSError:
            pass
        return SandboxResult(status, value, stdout, stderr, isolation, round(wall, 4), detail,
                             out_trunc, err_trunc, asdict(lim))


def _classify(timed_out: bool, rc: int, res_path: Path, stderr: str, lim: Limits) -> tuple[str, Any, str | None]:
    if timed_out:
        return "timeout", None, f"wall time limit of {lim.wall_s} s exceeded: killed with all its processes"
    try:
        res = json.loads(res_path.read_text())
        if res.get("status") in SANDBOX_STATUSES:
            return res["status"], res.get("value"), res.get("detail")
    except (OSError, ValueError):
        pass
    sig = -rc if rc < 0 else (rc - 128 if rc > 128 else 0)
    if sig == signal.SIGXCPU or sig == signal.SIGKILL and "CPU" in stderr:
        return "timeout", None, f"CPU time limit of {lim.cpu_s} s exceeded"
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        return "memory", None, f"out of memory (limit {lim.memory_mb} MB)"
    if sig:
        return "crashed", None, f"killed by signal {signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else sig}"
    if rc == 0:
        return "no_result", None, "the program exited without a result"
    return "crashed", None, f"exited with status {rc}: {stderr[-500:]}"


class Sandbox:
    """Runs programs' ``solver()`` functions under :class:`Limits`, one fresh process each.

    Args:
        limits: resource limits (:class:`Limits`).
        isolation: ``"auto"`` (bubblewrap when it works here, else ``"process"``), ``"bwrap"``
            (raise :class:`SandboxError` if unavailable) or ``"process"``.
        guard: install the in-sandbox audit hook and import allow-list (messages, not isolation).
        allowed_imports: top-level modules the program may import when ``guard`` is on.
        share_stsim: make the ``stsim`` package importable (read-only) inside the sandbox; used
            to run stsim's own baselines as code.  Only the package is visible, not the checkout.
        warm: number of interpreters kept started ahead of use (0 = start on demand).  They
            are started by the thread that calls :meth:`run` and die with it (bubblewrap's
            ``--die-with-parent`` follows the starting thread), so call ``run`` from
            long-lived threads.
        preimport: modules each interpreter imports before its job (warm start).
        use_cgroup: cap processes with a pids cgroup when one is writable.
        reuse: (bubblewrap only) keep ``max(1, warm)`` pre-imported *zygotes* that fork one child
            per job instead of starting an interpreter per job: much faster, and jobs share a
            sandbox only one after another (every leftover process is killed and the work
            directory emptied between jobs; a timeout discards the whole sandbox).  Results
            say ``+zygote`` in ``isolation``.  Zygotes are started by the constructor's thread.
    """

    def __init__(self, limits: Limits | None = None, *, isolation: str = "auto", guard: bool = True,
                 allowed_imports=DEFAULT_ALLOWED_IMPORTS, share_stsim: bool = False, warm: int = 0,
                 preimport: tuple[str, ...] = ("numpy",), use_cgroup: bool = True,
                 reuse: bool = False) -> None:
        self.limits = limits or Limits()
        if isolation == "auto":
            isolation = "bwrap" if bwrap_available() else "process"
        elif isolation == "bwrap" and not bwrap_available():
            raise SandboxError("bubblewrap (bwrap) is not installed or cannot create namespaces here")
        elif isolation not in ("bwrap", "process"):
            raise ValueError(f"isolation must be auto, bwrap or process, got {isolation!r}")
        self.isolation = isolation
        self.guard = guard
        self.allowed_imports = sorted(set(allowed_imports) | ({"stsim"} if share_stsim else set()))
        self.share_stsim = share_stsim
        self.preimport = tuple(preimport)
        self.use_cgroup = use_cgroup
        self.extra_paths: list[str] = []
        inner = self.isolation == "bwrap"
        self.read_roots = [_inner_root(r) if inner else r for r in _python_roots()]
        if share_stsim:
            pkg = Path(__file__).resolve().parents[1]
            self.extra_paths.append(_INNER_LIB if inner else str(pkg.parent))
            self.read_roots.append(_INNER_LIB if inner else str(pkg))
        self.warm = int(warm)
        self._pool: list[_Worker] = []
        self._lock = threading.Lock()
        self.reuse = reuse and self.isolation == "bwrap"
        self._zygotes: queue.Queue[_Worker] = queue.Queue()
        if self.reuse or self.warm:
            atexit.register(self.close)  # long-lived interpreters: remove their folders and cgroups
        if self.reuse:
            for _ in range(max(1, self.warm)):
                self._zygotes.put(_Worker(self, serve=True))
        else:
            self._fill()

    def _fill(self) -> None:
        with self._lock:
            while len(self._pool) < self.warm:
                self._pool.append(_Worker(self))

    def _take(self) -> _Worker:
        with self._lock:
            w = self._pool.pop(0) if self._pool else None
        if w is None:
            w = _Worker(self)
        self._fill()  # Popen returns at once; the new interpreter warms up while this job runs
        return w

    def run(self, source: str, args: dict[str, Any] | None = None) -> SandboxResult:
        """Run ``source``'s ``solver`` once.

        Args:
            source: Python program text defining ``solver``.
            args: call arguments: ``{"inputs": ...}`` for ``solver(inputs)``, or ``{"readings":
                (T, n) list, "coordinate": (n, 2) list, "timestamp": (T,) list}`` for the
                tracking form; ``None`` for ``solver()``.
        Returns:
            a :class:`SandboxResult`; never raises for anything the program does.
        """
        job = {"source": source, "args": args or {}, "guard": self.guard,
               "allowed_imports": self.allowed_imports, "read_roots": self.read_roots}
        if self.reuse:
            z = self._zygotes.get()
            try:
                return z.run_forked(job)
            finally:
                if z.dead:
                    z.cleanup()
                    z = _Worker(self, serve=True)
                self._zygotes.put(z)
        w = self._take()
        try:
            return w.run(job)
        finally:
            w.cleanup()

    def close(self) -> None:
        """Stop the warm interpreters."""
        with self._lock:
            pool, self._pool, self.warm = self._pool, [], 0
        while not self._zygotes.empty():
            pool.append(self._zygotes.get_nowait())
        for w in pool:
            w.cleanup()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def with_limits(limits: Limits, **changes: Any) -> Limits:
    """A copy of ``limits`` with some fields changed (e.g. from CLI flags)."""
    return replace(limits, **{k: v for k, v in changes.items() if v is not None})
