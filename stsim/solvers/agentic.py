"""The agentic tier of the geoqa benchmark (issue 17, item 5; seed 003 §4): a live model in a
code-interpreter loop with the entity store mounted read-only in the sandbox and a small tool
API (``geotools``, :mod:`stsim.sandbox.geotools`) importable there.

``stsim run geoqa-small --solver openai:MODEL --mode agentic [--step-budget N]``: the system
prompt (:func:`stsim.generators.chat_prompts.system_agentic`) documents the tool API and the
budget; each model reply with a fenced Python block is a *code step*: every block of the reply,
joined in order, runs as one script in the sandbox (:func:`cell_program`) and what it printed
(or its error) goes back as the next user turn (:func:`cell_feedback`).  The first reply
without a code block is final and is read by the task's rubric.  The **step budget** is the
number of model replies per question; when all of them held code, the answer is
``budget_exhausted`` -- not a refusal (excluded from FRR and NRR), and a non-answer in EM / NE /
Cov (EM 0, NE 1, not covered), docs/geoqa.md.

This module prepares the tool folder (:func:`tool_folder`: the exported entity table and a copy
of ``geotools.py``, mounted read-only) and the sandbox (:func:`agentic_sandbox`); the loop is
:meth:`stsim.solvers.live_model.OpenAISolver._agentic`.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..geoqa.tool_table import export_tool_table
from ..sandbox import geotools
from ..sandbox.isolation import DEFAULT_ALLOWED_IMPORTS, Limits, Sandbox, SandboxResult

#: Top-level modules model code may import in the process mode's guard (bubblewrap allows all):
#: the defaults, the tool API and the geodesy / grid / graph libraries the API doc names, and
#: ``sys`` and ``traceback`` (the step program reports errors with them).
AGENTIC_ALLOWED_IMPORTS = DEFAULT_ALLOWED_IMPORTS | {"geotools", "pyproj", "h3", "s2sphere", "pygeohash",
                                                     "networkx", "zoneinfo", "sys", "traceback"}

#: Output of a code step sent back to the model, at most this many characters (the rest is cut).
FEEDBACK_CHARS = 8000


def tool_folder() -> Path:
    """The folder mounted read-only into the agentic sandbox: ``entities.json`` (the exported
    entity table, :func:`stsim.geoqa.tool_table.export_tool_table`) and ``geotools.py`` (a copy of
    :mod:`stsim.sandbox.geotools`).  One folder per store, table version and ``geotools.py``
    content (``USER_CACHE/geoqa/agentic-STOREKEY-vN-SHA``): files are written once, atomically,
    and never replaced, so runs of different stsim versions never change each other's mount.

    Raises:
        StoreError: the entity store cannot be built.
    """
    import hashlib
    from ..geoqa.store import cache_dir, cache_key
    from ..geoqa.tool_table import TOOL_TABLE_VERSION
    src = Path(geotools.__file__).read_bytes()
    folder = cache_dir() / (f"agentic-{cache_key()}-v{TOOL_TABLE_VERSION}-"
                            f"{hashlib.sha256(src).hexdigest()[:12]}")
    export_tool_table(folder / "entities.json")
    dst = folder / "geotools.py"
    if not dst.is_file():
        tmp = folder / f".geotools.py.tmp{os.getpid()}"
        tmp.write_bytes(src)
        os.replace(tmp, dst)
    return folder


def agentic_sandbox(isolation: str = "bwrap", reuse: bool = True, warm: int = 1,
                    limits: Limits | None = None) -> Sandbox:
    """A sandbox with the tool folder mounted read-only, ``geotools`` (and the entity table)
    loaded by each zygote before it forks a run, and the agentic import allow-list.

    Raises:
        SandboxError: the isolation asked for cannot be had here; StoreError: no store.
    """
    return Sandbox(limits or Limits(), isolation=isolation, reuse=reuse, warm=warm if reuse else 0,
                   tool_dirs=(tool_folder(),), preimport=("numpy", "geotools"),
                   allowed_imports=AGENTIC_ALLOWED_IMPORTS)


def cell_program(code: str) -> str:
    """The sandbox program of one code step: runs ``code`` as a script (``__name__ ==
    "__main__"``) inside ``solver()``; an exception is printed to stderr (traceback) instead of
    ending the run, so the tool calls made are still counted.  ``solver()`` returns
    ``[tool calls, 1 if the script raised else 0]``.  Memory and CPU-time errors still end the
    run (the harness classifies them)."""
    return (
        "def solver():\n"
        "    import sys, traceback\n"
        "    import geotools\n"
        f"    src = {code!r}\n"
        "    ns = {'__name__': '__main__', '__builtins__': __builtins__}\n"
        "    failed = 0\n"
        "    try:\n"
        "        exec(compile(src, 'step.py', 'exec'), ns)\n"
        "    except MemoryError:\n"
        "        raise\n"
        "    except BaseException as exc:\n"
        "        if type(exc).__name__ == 'CPUTimeExceeded':\n"
        "            raise\n"
        "        tb = traceback.format_exception(type(exc), exc, exc.__traceback__)\n"
        "        sys.stderr.write(''.join(tb[1:] if len(tb) > 1 else tb))\n"
        "        failed = 1\n"
        "    sys.stdout.flush()\n"
        "    return [geotools.calls(), failed]\n")


def tool_calls(res: SandboxResult) -> int:
    """Tool API calls a code step made, as its program reported them; 0 when the run was ended
    by a limit (timeout, memory) before it could report."""
    v = res.value
    if res.status == "ok" and isinstance(v, list) and v and isinstance(v[0], int):
        return int(v[0])
    return 0


def _cut(text: str) -> str:
    return text if len(text) <= FEEDBACK_CHARS else text[:FEEDBACK_CHARS] + "\n[output truncated]"


def cell_feedback(res: SandboxResult, replies_left: int) -> str:
    """The user turn reporting a code step back to the model (our wording): what it printed,
    its error, and how many replies are left."""
    parts = ["Output:\n" + (_cut(res.stdout) if res.stdout else "(nothing printed)")
             + ("\n[output truncated]" if res.stdout_truncated else "")]
    failed = res.status == "ok" and isinstance(res.value, list) and len(res.value) > 1 and res.value[1]
    if failed or (res.status == "ok" and res.stderr.strip()):
        parts.append("Error output:\n" + _cut(res.stderr.strip()[-FEEDBACK_CHARS:]))
    elif res.status != "ok":
        parts.append(f"The run was stopped ({res.status}): {res.detail}"
                     + (("\nError output:\n" + res.stderr[-2000:]) if res.stderr else ""))
    if replies_left <= 1:
        parts.append("This is your last reply: give the answer now, without code, ending with 'Answer: ...'.")
    else:
        parts.append(f"{replies_left} replies left (the last one must be the answer).")
    return "\n\n".join(parts)


def join_code(blocks: list[str]) -> str:
    """The script of a code step: the reply's blocks in order, separated by blank lines."""
    return "\n\n".join(b.rstrip("\n") for b in blocks) + "\n"
