"""The program that runs *inside* the sandbox (see :mod:`stsim.sandbox.isolation`).

It is started as ``python -I harness.py PREIMPORTS EXTRA_PATHS [--serve FD | --supervise]
--stsim-host=PID`` by the host (both lists comma / ``os.pathsep`` separated; the last argument
only names the host process), imports the listed libraries, then:

* ``--serve FD`` (namespace mode, the zygote): receives jobs on the socket ``FD`` and forks
  one child per job (:func:`serve`);
* ``--supervise`` (process mode): reads one job on standard input, forks it into a child
  confined with Landlock (and seccomp as root without a pids cgroup) and supervises it as a
  child subreaper (:func:`supervise`);
* neither (a fresh namespace sandbox): reads one job on standard input and runs it itself.

A job is one JSON object::

    {"source": str, "args": {...}, "limits": {...}, "guard": bool, "allowed_imports": [...],
     "read_roots": [...], "workdir": str, "confine": bool, "no_fork": bool, "filename": str}

(``filename``, optional: the program's name in a syntax error and tracebacks, default
``solution.py``; a label only, never opened.)

The job's process applies the resource limits to itself (inherited by every process it
starts), runs the program's ``solver`` once and writes ``{"status", "value", "detail",
"confinement"}`` to ``WORKDIR/.stsim_result.json``.  Standard output and error stay the
solver's own and are read (and capped) by the host.

This file must not import stsim: it runs where the project checkout is invisible.  The
*guard* (an audit hook and an import allow-list, process mode only) turns forbidden
operations into clear ``forbidden`` messages; containment comes from the isolation (the
namespaces, or Landlock, seccomp and the supervisor) and the resource limits.
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
SUPERVISOR_NAME = ".stsim_supervisor.json"
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
    "shutil.rmtree": "removing a directory tree", "os.mknod": "creating a device node",
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_READ_ROOTS = ("/usr/", "/lib", "/bin/", "/etc/ld.so", "/dev/null", "/dev/urandom",
               "/sys/devices/system/cpu", "/etc/localtime")
#: the only /proc files a guarded program may open (never /proc/*/root, cwd, environ, fd, mem ...)
_PROC_OK = ("/proc/self/stat", "/proc/self/statm", "/proc/self/status", "/proc/cpuinfo", "/proc/meminfo",
            "/proc/self/maps", "/proc/self/cgroup", "/proc/self/mountinfo")
#: audit events that create, move, link or change a path: every path they name must resolve
#: (links followed) inside the work folder
_PATH_EVENTS = {"os.symlink": (0, 1), "os.link": (0, 1), "os.rename": (0, 1), "os.remove": (0,),
                "os.rmdir": (0,), "os.mkdir": (0,), "os.chmod": (0,), "os.chown": (0,),
                "os.truncate": (0,), "os.utime": (0,), "os.mkfifo": (0,)}


def _inside(path, root):
    root = root.rstrip("/") + "/"
    return path == root[:-1] or path.startswith(root)


def _resolved(path, base=None):
    """``path`` made absolute against ``base`` (default: the current folder) with every symbolic
    link resolved, as the kernel will follow it."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return os.path.realpath(os.path.join(base, path) if base else path)


def _proc_denied(path):
    """A /proc path other than the few harmless ones (reached directly or through links)."""
    full = os.path.abspath(path)
    return (full == "/proc" or full.startswith("/proc/")) and full not in _PROC_OK


def _audit(event, args):
    if not _GUARD["on"]:
        return
    what = _BLOCKED_EVENTS.get(event)
    work = _GUARD["workdir"]
    if what is None and event == "open":
        path, mode, flags = args
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, str):
            full = _resolved(path)
            writes = bool(flags & _WRITE_FLAGS) if isinstance(flags, int) else ("w" in str(mode) or "a" in str(mode))
            if _proc_denied(path) or _proc_denied(full):
                what = f"opening {path} (process information under /proc)"
            elif writes and not _inside(full, work):
                what = f"writing {full} (outside the private temporary directory)"
            elif not writes and not (_inside(full, work) or full.startswith(_READ_ROOTS)
                                     or any(_inside(full, p) for p in _GUARD.get("read_roots", ()))):
                what = f"reading {full} (outside the sandbox's files)"
    elif what is None and event in _PATH_EVENTS:
        for i in _PATH_EVENTS[event]:
            p = args[i] if i < len(args) else None
            if not isinstance(p, (str, bytes)):
                continue
            if event == "os.symlink" and i == 0:  # the link's target, relative to the link's folder
                dst = _resolved(args[1])
                full = _resolved(p, os.path.dirname(dst))
            else:
                full = _resolved(p)
            if _proc_denied(p) or not _inside(full, work):
                what = f"{event.split('.')[1]} of {full} (outside the private temporary directory)"
                break
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


class _BadSignature(TypeError):
    """``solver``'s signature fits none of the call forms: an outcome (``no_result``), not a crash."""


def _call(fn, args):
    import inspect
    try:
        sig = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        sig = []
    required = [p for p in sig if p.default is inspect.Parameter.empty]
    names = [p.name for p in required if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword_only = [p.name for p in required if p.kind is p.KEYWORD_ONLY]
    if not names and not keyword_only:
        return fn()
    if not keyword_only and len(names) == 3 and "readings" in args:  # STARK tracking form
        return fn(args["readings"], args["coordinate"], args["timestamp"])
    if not keyword_only and len(names) == 1 and "inputs" in args:
        return fn(args["inputs"])
    # the host reads a plain `def solver` with ast first (stsim.sandbox.call.signature_problem);
    # this covers what it cannot see (a lambda, a callable object, a def made at run time)
    offered = ["solver()"] + (["solver(inputs)"] if "inputs" in args else []) + (
        ["solver(readings, coordinate, timestamp)"] if "readings" in args else [])
    shown = ", ".join(names + ["*, " + ", ".join(keyword_only)] if keyword_only else names)
    raise _BadSignature(
        f"solver({shown}) requires {len(names)} positional argument(s)"
        + (f" and the keyword-only {', '.join(keyword_only)}" if keyword_only else "")
        + "; stsim calls solver(), solver(inputs) or solver(readings, coordinate, timestamp) "
        f"(this task: {' or '.join(offered)}); solver() was not called")


def _syntax_detail(exc, name):
    """``SyntaxError in NAME, line N: MESSAGE`` and the line with a caret under the column."""
    where = f"{name}, line {exc.lineno}" if exc.lineno else name
    text = f"{type(exc).__name__} in {where}: {exc.msg}"
    if exc.text and exc.text.strip():
        line = exc.text.rstrip("\r\n")
        text += f"\n    {line.strip()}"
        if exc.offset and exc.offset >= 1:
            indent = len(line) - len(line.lstrip())
            text += "\n    " + " " * max(0, exc.offset - 1 - indent) + "^"
    return text


#: the name the program is compiled under: the parser and linecache look a file of that name up
#: (in the work folder, where there is none), so it is never the user's path (which the
#: parser would open, outside the sandbox's files); messages show the user's name instead
_COMPILED_AS = "solution.py"


def _outcome(job):
    # the program's name in messages and tracebacks: the user's file (``stsim sandbox run
    # FILE.py``, a code: solver's program) when the host gives one, else solution.py
    name = job.get("filename") or _COMPILED_AS
    ns = {"__name__": "solution", "__file__": _COMPILED_AS}
    if job.get("guard", True):
        import builtins
        b = dict(vars(builtins))
        b["__import__"] = _guarded_import(set(job["allowed_imports"]), builtins.__import__)
        ns["__builtins__"] = b
    try:
        code = compile(job["source"], _COMPILED_AS, "exec")
    except SyntaxError as exc:  # IndentationError and TabError too: the program never ran
        return "syntax_error", None, _syntax_detail(exc, name)
    except ValueError as exc:  # a NUL byte in the source (Python 3.12+ calls it a SyntaxError)
        return "syntax_error", None, f"{name}: cannot compile the program ({exc})"
    import linecache  # tracebacks show the program's lines, from the source (no file is read)
    linecache.cache[_COMPILED_AS] = (len(job["source"]), None, job["source"].splitlines(True), _COMPILED_AS)
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
    except _BadSignature as exc:
        return "no_result", None, str(exc)
    except OSError as exc:
        status = "forbidden" if exc.errno in _FORBIDDEN_ERRNOS or type(exc).__name__ == "gaierror" else "crashed"
        return status, None, "".join(traceback.format_exception_only(type(exc), exc)).strip()
    except BaseException as exc:  # noqa: BLE001 - everything the program raises is its outcome
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4))
        if name != _COMPILED_AS:
            tb = tb.replace(f'File "{_COMPILED_AS}", line', f'File "{name}", line')
        return "crashed", None, tb[-4000:]
    if value is None:
        return "no_result", None, "solver() returned None"
    try:
        return "ok", _jsonable(value), None
    except (TypeError, RecursionError) as exc:
        return "bad_shape", None, str(exc)


# ------------------------------------------------------------------------------- Landlock
# Linux Landlock (Documentation/userspace-api/landlock.rst): an unprivileged process restricts
# itself and every process it starts.  Syscalls 444-446; the ruleset attribute is
# {u64 handled_access_fs; u64 handled_access_net (ABI 4); u64 scoped (ABI 6)}.
_LL_FS_FILE = (1 << 0) | (1 << 1) | (1 << 2)  # EXECUTE, WRITE_FILE, READ_FILE
_LL_READ = (1 << 0) | (1 << 2) | (1 << 3)     # EXECUTE, READ_FILE, READ_DIR
_LL_NET_TCP = (1 << 0) | (1 << 1)             # BIND_TCP, CONNECT_TCP
_LL_SCOPE = (1 << 0) | (1 << 1)               # ABSTRACT_UNIX_SOCKET, SIGNAL


def _landlock(workdir, read_paths):
    """Confine this process and its descendants with Landlock: read and execute only beneath
    ``read_paths``, everything beneath ``workdir``, no other file access (links followed to
    their real place, so symbolic links, hard links, ``/proc/*/root`` and renames cannot
    leave); with ABI >= 4 no TCP bind or connect; with ABI >= 6 no signal to, and no abstract
    unix socket of, a process outside the sandbox.  Returns the parts applied (e.g.
    ``["landlock-fs", "landlock-net", "landlock-scope"]``), ``[]`` where the kernel has no
    Landlock."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return []
    fs = (1 << 13) - 1                 # ABI 1: bits 0..12 (execute ... make_sym)
    if abi >= 2:
        fs |= 1 << 13                  # REFER: links and renames across folders
    if abi >= 3:
        fs |= 1 << 14                  # TRUNCATE
    if abi >= 5:
        fs |= 1 << 15                  # IOCTL_DEV
    file_rights = fs & (_LL_FS_FILE | (1 << 14) | (1 << 15))
    net = _LL_NET_TCP if abi >= 4 else 0
    scoped = _LL_SCOPE if abi >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(fs, net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    rs = libc.syscall(ctypes.c_long(444), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if rs < 0:
        return []

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    def allow(path, rights):
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if not os.path.isdir(path):
                rights &= file_rights
            rule = PathBeneath(rights & fs, fd)
            libc.syscall(ctypes.c_long(445), ctypes.c_int(rs), ctypes.c_int(1), ctypes.byref(rule),
                         ctypes.c_uint32(0))
        finally:
            os.close(fd)
    for p in read_paths:
        allow(p, _LL_READ)
    allow("/dev/null", _LL_READ | (1 << 1))
    allow(workdir, fs & ~((1 << 6) | (1 << 11) | (1 << 15)))  # no device nodes, no device ioctls
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, required by landlock_restrict_self
        os.close(rs)
        return []
    ok = libc.syscall(ctypes.c_long(446), ctypes.c_int(rs), ctypes.c_uint32(0)) == 0
    os.close(rs)
    if not ok:
        return []
    return ["landlock-fs"] + (["landlock-net"] if net else []) + (["landlock-scope"] if scoped else [])


def _no_process_creation():
    """Forbid this process and its descendants to create processes (threads stay allowed) with
    a seccomp filter (``SECCOMP_MODE_FILTER``, Documentation/userspace-api/seccomp_filter.rst):
    ``fork``/``vfork`` and a ``clone`` without ``CLONE_THREAD`` fail with ``EPERM``, ``clone3``
    with ``ENOSYS`` (C libraries then fall back to ``clone``).  Used as root without a pids
    cgroup, where the kernel ignores ``RLIMIT_NPROC``.  Returns ``["seccomp-nofork"]``, or
    ``[]`` on an architecture it does not know (x86_64 and aarch64 only)."""
    import ctypes
    import platform
    arch = platform.machine()
    if arch == "x86_64":
        audit_arch, clone, clone3, forks, x32 = 0xC000003E, 56, 435, (57, 58), True
    elif arch == "aarch64":
        audit_arch, clone, clone3, forks, x32 = 0xC00000B7, 220, 435, (), False
    else:
        return []
    ALLOW, DENY, NOSYS = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
    prog = [("ld", 4), ("jeq", audit_arch, None, "allow"), ("ld", 0)]
    if x32:
        prog.append(("jge", 0x40000000, "deny", None))
    prog += [("jeq", n, "deny", None) for n in forks]
    prog += [("jeq", clone3, "nosys", None), ("jeq", clone, None, "allow"), ("ld", 16),
             ("jset", 0x00010000, "allow", "deny")]  # CLONE_THREAD in the low word of args[0]
    labels = {"allow": len(prog), "deny": len(prog) + 1, "nosys": len(prog) + 2}
    code = {"ld": 0x20, "jeq": 0x15, "jge": 0x35, "jset": 0x45}

    class Insn(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]
    insns = []
    for i, ins in enumerate(prog):
        if ins[0] == "ld":
            insns.append(Insn(code["ld"], 0, 0, ins[1]))
        else:
            jt, jf = (0 if t is None else labels[t] - i - 1 for t in ins[2:])
            insns.append(Insn(code[ins[0]], jt, jf, ins[1]))
    insns += [Insn(0x06, 0, 0, ALLOW), Insn(0x06, 0, 0, DENY), Insn(0x06, 0, 0, NOSYS)]
    filt = (Insn * len(insns))(*insns)

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]
    fprog = Prog(len(insns), filt)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return []
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return []
    return ["seccomp-nofork"]


def run_job(job):
    """Run one job in this process (limits, confinement, guard, solver) and write its result;
    never returns."""
    workdir = os.path.realpath(job["workdir"])
    os.chdir(workdir)
    confinement = []
    if job.get("confine"):  # process mode: no namespaces, so confine what the kernel offers
        own_dir = os.path.dirname(os.path.abspath(__file__))
        reads = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc/ld.so.cache", "/etc/localtime",
                 "/dev/urandom", "/dev/zero", "/sys/devices/system/cpu", "/proc/self/stat",
                 "/proc/self/status", "/proc/cpuinfo", own_dir, *job.get("read_roots", [])]
        confinement += _landlock(workdir, reads)
        if job.get("no_fork"):
            confinement += _no_process_creation()
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
    res = json.dumps({"status": status, "value": value, "detail": detail, "confinement": confinement},
                     allow_nan=False)
    fd = os.open(os.path.join(workdir, RESULT_NAME), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, res.encode())
    os.close(fd)
    os._exit(0)


#: exit status of the supervisor when it killed the job at the wall-time limit
TIMEOUT_EXIT = 124


def _children():
    """Pids whose parent is this process (any of its threads)."""
    out = set()
    try:
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/children") as fh:
                    out.update(int(p) for p in fh.read().split())
            except OSError:
                pass
    except OSError:
        pass
    return out


def _kill_descendants():
    """SIGKILL and reap every descendant.  As a child subreaper this process inherits every
    orphan of the tree (detached, double-forked, ``setsid`` children included), so killing its
    children until none is left ends the whole tree (up to 5 s)."""
    import time
    for _ in range(500):
        kids = _children()
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                break
        time.sleep(0.01)


def supervise(job):
    """Process mode: fork the job into a child confined by :func:`run_job`, stay outside it as
    a child subreaper (``PR_SET_CHILD_SUBREAPER``, not dumpable, never running the program),
    enforce the wall-time limit, then kill every process the job left behind, so nothing keeps
    running or keeps the output pipes open; exit with the job's status (``TIMEOUT_EXIT`` on a
    timeout)."""
    import ctypes
    import select
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    libc.prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0: the job cannot ptrace or read this process
    import time
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            run_job(job)
        finally:
            os._exit(70)
    os.close(0)
    os.close(1)  # only the job and its descendants hold the output pipes
    os.close(2)
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([pidfd], [], [], float(job["limits"]["wall_s"]))
    status = None
    if ready:
        _, st = os.waitpid(pid, 0)
        status = os.waitstatus_to_exitcode(st)
    wall = time.perf_counter() - started
    _kill_descendants()
    note = os.path.join(job["workdir"], SUPERVISOR_NAME)
    try:  # nothing of the job runs any more; never write through a link it left
        if os.path.lexists(note):
            os.unlink(note)
        fd = os.open(note, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.write(fd, json.dumps({"wall_s": round(wall, 4)}).encode())
        os.close(fd)
    except OSError:
        pass
    if status is None:
        os._exit(TIMEOUT_EXIT)
    os._exit(status if status >= 0 else 128 - status)


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


def _empty(folder, keep=None):
    """Remove everything inside ``folder`` (a job's work folder or /dev/shm) but ``keep``,
    whatever permissions the job left on it."""
    import shutil
    try:
        os.chmod(folder, 0o700 if folder != "/dev/shm" else 0o1777)
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name == keep:
            continue
        p = os.path.join(folder, name)
        if os.path.isdir(p) and not os.path.islink(p):
            try:
                os.chmod(p, 0o700)
            except OSError:
                pass
            for root, dirs, _ in os.walk(p):  # top-down: each folder is opened before its children
                for d in dirs:
                    try:
                        os.chmod(os.path.join(root, d), 0o700)
                    except OSError:
                        pass
            shutil.rmtree(p, ignore_errors=True)
        else:
            try:
                os.unlink(p)
            except OSError:
                pass


def serve(sock_fd):
    """Zygote mode: say ``ready`` on the socket, then for each job received on it (8-byte
    length, JSON, and the job's stdout and stderr pipe ends as SCM_RIGHTS), fork a child that runs it, wait for it, kill
    every other process in the sandbox (``kill(-1)`` spares only this process and PID 1), empty
    the work directory, and answer ``{"rc": exit status}``."""
    import socket
    if os.getpid() != 2:  # kill(-1) below is only safe as the first process of a private PID namespace
        sys.exit("stsim sandbox: --serve needs a private PID namespace (bubblewrap)")
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: jobs cannot ptrace the zygote
    sock = socket.socket(fileno=sock_fd)
    sock.sendall(b"ready\n")  # the pre-imports and warm-ups are done: the host starts timing jobs now
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
        _empty(job["workdir"], keep=RESULT_NAME)
        _empty("/dev/shm")
        sock.sendall(json.dumps({"rc": rc}).encode() + b"\n")


def main():
    for p in filter(None, sys.argv[2].split(os.pathsep) if len(sys.argv) > 2 else []):
        sys.path.insert(0, p)
    for name in filter(None, sys.argv[1].split(",") if len(sys.argv) > 1 else []):
        module, _, call = name.partition(":")  # "module:function": import, then call it (warm-up)
        try:
            __import__(module)
        except ImportError:
            continue
        if call:
            try:
                getattr(sys.modules[module], call)()
            except Exception:  # a warm-up that fails only costs the jobs that time
                pass
    if len(sys.argv) > 4 and sys.argv[3] == "--serve":
        serve(int(sys.argv[4]))
    job = json.loads(sys.stdin.readline())
    sys.stdin.close()
    if "--supervise" in sys.argv[3:]:
        supervise(job)
    run_job(job)


if __name__ == "__main__":
    main()
