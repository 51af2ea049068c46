"""The program that runs *inside* the sandbox (see :mod:`stsim.sandbox.isolation`).

It is started as ``python -I sandbox_harness.py PREIMPORTS [EXTRA_PATHS]`` by the host (both
lists comma / ``os.pathsep`` separated), imports the listed libraries while it waits (a warm worker), then reads one job as a JSON line on standard input::

    {"source": str, "args": {...}, "limits": {...}, "guard": bool, "allowed_imports": [...],
     "read_roots": [...], "workdir": str}

applies the resource limits to itself (they are inherited by every process it starts), runs
the program's ``solver`` once and writes ``{"status", "value", "detail"}`` to
``WORKDIR/.stsim_result.json``.  Standard output and error stay the solver's own and are read
(and capped) by the host.

This file must not import stsim: it runs where the project checkout is invisible.  The
*guard* (an audit hook and an import allow-list) only turns forbidden operations into clear
``forbidden`` messages; containment comes from the host's isolation and the resource limits.
"""
import errno
import json
import math
import os
import resource
import signal
import sys
import traceback

RESULT_NAME = ".stsim_result.json"
_VIOLATIONS = []
_GUARD = {"on": False, "workdir": "/tmp"}


class SandboxViolation(PermissionError):
    """A forbidden operation stopped by the guard."""


_BLOCKED_EVENTS = {
    "socket.connect": "network connection", "socket.bind": "network socket bind",
    "socket.getaddrinfo": "DNS lookup", "socket.gethostbyname": "DNS lookup",
    "socket.gethostbyaddr": "DNS lookup", "subprocess.Popen": "starting a process",
    "os.system": "starting a shell", "os.exec": "exec of a program", "os.posix_spawn": "starting a process",
    "os.spawn": "starting a process", "os.fork": "fork", "os.forkpty": "fork",
    "ctypes.dlopen": "loading a native library with ctypes", "ctypes.dlsym": "ctypes symbol lookup",
    "ctypes.addressof": "ctypes memory access", "os.kill": "sending a signal", "os.killpg": "sending a signal",
    "shutil.rmtree": "removing a directory tree",
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_READ_ROOTS = ("/usr/", "/lib", "/bin/", "/etc/ld.so", "/dev/null", "/dev/urandom", "/proc/self/",
               "/sys/devices/system/cpu", "/etc/localtime")


def _inside(path, root):
    root = root.rstrip("/") + "/"
    return path == root[:-1] or path.startswith(root)


def _audit(event, args):
    if not _GUARD["on"]:
        return
    what = _BLOCKED_EVENTS.get(event)
    if what is None and event == "open":
        path, mode, flags = args
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, str):
            full = os.path.abspath(os.path.join(_GUARD["workdir"], path))
            writes = bool(flags & _WRITE_FLAGS) if isinstance(flags, int) else ("w" in str(mode) or "a" in str(mode))
            if writes and not _inside(full, _GUARD["workdir"]):
                what = f"writing {full} (outside the private temporary directory)"
            elif not writes and not (_inside(full, _GUARD["workdir"]) or full.startswith(_READ_ROOTS)
                                     or any(_inside(full, p) for p in _GUARD.get("read_roots", ()))):
                what = f"reading {full} (outside the sandbox's files)"
    if what is not None:
        _VIOLATIONS.append(what)
        raise SandboxViolation(f"forbidden in the sandbox: {what} ({event})")


def _guarded_import(allowed, real_import):
    def imp(name, globals=None, locals=None, fromlist=(), level=0):
        top = name.split(".")[0]
        if level == 0 and top not in allowed:
            what = f"import of module {top!r} (allowed: {', '.join(sorted(allowed))})"
            _VIOLATIONS.append(what)
            raise SandboxViolation(f"forbidden in the sandbox: {what}")
        return real_import(name, globals, locals, fromlist, level)
    return imp


def _jsonable(v, depth=0):
    """Numbers and nested lists of numbers (numpy arrays and scalars included); else TypeError."""
    if depth > 4:
        raise TypeError("nested deeper than 4 levels")
    if hasattr(v, "tolist") and type(v).__module__.startswith("numpy"):
        v = v.tolist()
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, (list, tuple)):
        return [_jsonable(x, depth + 1) for x in v]
    raise TypeError(f"solver returned a {type(v).__name__}, not a number or an array of numbers")


def _set_limits(lim):
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(math.ceil(used.ru_utime + used.ru_stime + float(lim["cpu_s"])))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    mem = int(lim["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_NPROC, (int(lim["processes"]), int(lim["processes"])))
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(lim["open_files"]), int(lim["open_files"])))
    fsize = int(lim["file_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversize writes fail with EFBIG instead


class CPUTimeExceeded(Exception):
    pass


def _on_xcpu(signum, frame):
    raise CPUTimeExceeded("CPU time limit exceeded")


_FORBIDDEN_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENETUNREACH, errno.EAFNOSUPPORT,
                     errno.EHOSTUNREACH, errno.ECONNREFUSED}


def _call(fn, args):
    import inspect
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params]
    if not names:
        return fn()
    if len(names) == 3 and "readings" in args:  # STARK tracking form
        return fn(args["readings"], args["coordinate"], args["timestamp"])
    if len(names) == 1 and "inputs" in args:
        return fn(args["inputs"])
    raise TypeError(f"solver{tuple(names)}: expected solver(), solver(inputs) or "
                    f"solver(readings, coordinate, timestamp) for this task")


def _outcome(job):
    ns = {"__name__": "solution", "__file__": "solution.py"}
    if job.get("guard", True):
        import builtins
        b = dict(vars(builtins))
        b["__import__"] = _guarded_import(set(job["allowed_imports"]), builtins.__import__)
        ns["__builtins__"] = b
    try:
        code = compile(job["source"], "solution.py", "exec")
    except SyntaxError as exc:
        return "crashed", None, f"SyntaxError: {exc}"
    try:
        exec(code, ns)
        fn = ns.get("solver")
        if not callable(fn):
            return "no_result", None, "the program defines no solver() function"
        value = _call(fn, job.get("args") or {})
    except MemoryError as exc:
        return "memory", None, f"MemoryError: {exc} (limit {job['limits']['memory_mb']} MB)"
    except CPUTimeExceeded:
        return "timeout", None, f"CPU time limit of {job['limits']['cpu_s']} s exceeded"
    except SandboxViolation as exc:
        return "forbidden", None, str(exc)
    except OSError as exc:
        status = "forbidden" if exc.errno in _FORBIDDEN_ERRNOS or type(exc).__name__ == "gaierror" else "crashed"
        return status, None, "".join(traceback.format_exception_only(type(exc), exc)).strip()
    except BaseException as exc:  # noqa: BLE001 - everything the program raises is its outcome
        tb = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4)
        return "crashed", None, "".join(tb)[-4000:]
    if value is None:
        return "no_result", None, "solver() returned None"
    try:
        return "ok", _jsonable(value), None
    except (TypeError, RecursionError) as exc:
        return "bad_shape", None, str(exc)


def run_job(job):
    """Run one job in this process (limits, guard, solver) and write its result; never returns."""
    workdir = job["workdir"]
    os.chdir(workdir)
    _set_limits(job["limits"])
    signal.signal(signal.SIGXCPU, _on_xcpu)
    own_dir = os.path.dirname(os.path.abspath(__file__))
    _GUARD.update(workdir=workdir, read_roots=(own_dir, *job.get("read_roots", [])))
    if job.get("guard", True):
        sys.addaudithook(_audit)
        _GUARD["on"] = True
    main_pid = os.getpid()
    status, value, detail = _outcome(job)
    if os.getpid() != main_pid:  # a forked child of the program returned here: only the parent reports
        os._exit(0)
    _GUARD["on"] = False
    if _VIOLATIONS and status != "forbidden":
        status, value, detail = "forbidden", None, "forbidden in the sandbox: " + "; ".join(_VIOLATIONS[:3])
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - a closed stdout is the program's business
        pass
    res = json.dumps({"status": status, "value": value, "detail": detail}, allow_nan=False)
    fd = os.open(os.path.join(workdir, RESULT_NAME), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, res.encode())
    os.close(fd)
    os._exit(0)


def _recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def _kill_others():
    """SIGKILL every process of this PID namespace but PID 1 and this one, and wait (up to 2 s)
    until PID 1 has reaped them all."""
    import time
    me = os.getpid()
    for _ in range(200):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
        if not others:
            return
        time.sleep(0.01)


def serve(sock_fd):
    """Zygote mode: for each job received on the socket (8-byte length, JSON, and the job's
    stdout and stderr pipe ends as SCM_RIGHTS), fork a child that runs it, wait for it, kill
    every other process in the sandbox (``kill(-1)`` spares only this process and PID 1), empty
    the work directory, and answer ``{"rc": exit status}``."""
    import shutil
    import socket
    if os.getpid() != 2:  # kill(-1) below is only safe as the first process of a private PID namespace
        sys.exit("stsim sandbox: --serve needs a private PID namespace (bubblewrap)")
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: jobs cannot ptrace the zygote
    sock = socket.socket(fileno=sock_fd)
    while True:
        try:
            head, fds, _, _ = socket.recv_fds(sock, 8, 2)
            if len(head) < 8:
                head += _recv_exact(sock, 8 - len(head))
            job = json.loads(_recv_exact(sock, int.from_bytes(head, "big")))
        except (EOFError, OSError, ValueError):
            os._exit(0)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            sock.close()
            os.dup2(fds[0], 1)
            os.dup2(fds[1], 2)
            for fd in fds:
                os.close(fd)
            try:
                run_job(job)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        _, status = os.waitpid(pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        _kill_others()
        workdir = job["workdir"]
        for name in os.listdir(workdir):
            if name != RESULT_NAME:
                p = os.path.join(workdir, name)
                try:
                    shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
                except OSError:
                    pass
        sock.sendall(json.dumps({"rc": rc}).encode() + b"\n")


def main():
    for p in filter(None, sys.argv[2].split(os.pathsep) if len(sys.argv) > 2 else []):
        sys.path.insert(0, p)
    for name in filter(None, sys.argv[1].split(",") if len(sys.argv) > 1 else []):
        try:
            __import__(name)
        except ImportError:
            pass
    if len(sys.argv) > 4 and sys.argv[3] == "--serve":
        serve(int(sys.argv[4]))
    job = json.loads(sys.stdin.readline())
    sys.stdin.close()
    run_job(job)


if __name__ == "__main__":
    main()
