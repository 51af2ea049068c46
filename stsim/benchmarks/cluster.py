"""Running a suite past one machine on a Dask distributed cluster (``--cluster``).

Every task is a pure function of (suite, family, index, seed) (``stsim.registry.generate_task``),
so the work is cut into *chunks* of consecutive tasks (by suite order); each chunk is generated,
solved and scored on one Dask worker and its ``(task, answers, scores)`` come back to the client,
which writes them in task order, so the files are byte for byte those of a local run
(docs/distributed.md).  Data suites (``--data``) are read on the client and the loaded tasks are
shipped inside the chunks: workers need neither the released files nor a shared path.

Faults: a chunk whose worker dies is rerun by the scheduler on another worker (Dask keeps a
chunk's result only once, so nothing is lost or duplicated); a chunk whose function keeps failing
(``retries`` reruns) is recorded in :attr:`ChunkStream.failed` with its task ids while the other
chunks go on; interrupting the iteration (Ctrl-C) cancels every chunk still on the cluster.

Live models (``openai:...`` solvers, ``threaded``): one Dask ``Semaphore`` named per run bounds the
requests in flight across the whole cluster to ``concurrency``; the response cache is read on the
client, broadcast to the workers, and each chunk returns the responses it paid for, which the
client appends to the one cache file, so a resumed run re-sends nothing.

Needs the optional extra ``stsim[distributed]`` (``dask[distributed]``).
"""
from __future__ import annotations

import itertools
import logging
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from ..records import Answer, Score, Task
from ..registry import generate_task
from ..scoring.score import score_answers
from ..solvers.base import get_solver

#: tasks per chunk when none is given: small enough that a lost worker costs little work and
#: the progress bar moves, large enough that the per-chunk overhead (~ms) stays small
DEFAULT_CHUNK = 16
#: chunk retries after an error raised by the chunk itself (a worker's death is retried by the
#: scheduler on its own, up to ``distributed.scheduler.allowed-failures`` times)
RETRIES = 2

_TCP = re.compile(r"^(tcp|tls)://[^\s/:]+:\d{1,5}$")
_LOCAL = re.compile(r"^local:(\d+)$")


class ClusterError(ValueError):
    """A bad ``--cluster`` value, a missing ``dask[distributed]`` install, or a scheduler that
    cannot be reached."""


class ChunkFailed(RuntimeError):
    """Chunks that kept failing; ``task_ids`` names their tasks (the other tasks were written)."""

    def __init__(self, task_ids: list[str], errors: list[str], out_dir: str = "") -> None:
        self.task_ids = task_ids
        self.errors = errors
        self.out_dir = out_dir
        shown = ", ".join(task_ids[:8]) + (f" ... ({len(task_ids)} tasks)" if len(task_ids) > 8 else "")
        super().__init__(f"{len(task_ids)} task(s) failed on the cluster after {RETRIES} retries: {shown}; "
                         f"first error: {errors[0] if errors else '?'}"
                         + (f"; every other task is written in {out_dir}" if out_dir else ""))


def check_cluster_spec(spec: str) -> None:
    """Raise :class:`ClusterError` unless ``spec`` is ``local:N`` (N >= 1 worker processes on
    this machine) or ``tcp://HOST:PORT`` / ``tls://HOST:PORT`` (a running Dask scheduler)."""
    m = _LOCAL.match(spec)
    if m:
        if int(m.group(1)) < 1:
            raise ClusterError(f"--cluster {spec}: local:N needs N >= 1 worker processes")
        return
    if not _TCP.match(spec):
        raise ClusterError(f"--cluster {spec!r}: expected local:N (N worker processes here) or "
                           "tcp://HOST:PORT (the address of a running `dask scheduler`)")


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise ClusterError("--cluster needs Dask distributed: pip install 'stsim[distributed]'") from None
    return distributed


class Cluster:
    """A Dask client for ``spec`` (see :func:`check_cluster_spec`); a context manager that, for
    ``local:N``, starts a ``LocalCluster`` of N single-threaded worker processes and shuts it
    down on exit.  ``address``: an already running scheduler's address may be passed as
    ``tcp://...`` (tests share one ``LocalCluster`` that way).

    Raises:
        ClusterError: bad spec, ``distributed`` not installed, scheduler unreachable (10 s).
    """

    def __init__(self, spec: str) -> None:
        check_cluster_spec(spec)
        self.spec = spec
        self.client = None
        self._local = None

    def __enter__(self) -> "Cluster":
        distributed = _import_distributed()
        m = _LOCAL.match(self.spec)
        try:
            if m:
                self._local = distributed.LocalCluster(n_workers=int(m.group(1)), threads_per_worker=1,
                                                       processes=True, dashboard_address=":0",
                                                       silence_logs=logging.ERROR)  # e.g. slow shutdowns
                self.client = distributed.Client(self._local)
            else:
                self.client = distributed.Client(self.spec, timeout="10s")
        except OSError as exc:
            self.close()
            raise ClusterError(f"--cluster {self.spec}: cannot reach the scheduler ({exc})") from None
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._local is not None:
            self._local.close()
            self._local = None

    def n_threads(self) -> int:
        """Worker threads in the cluster now (at least 1)."""
        return max(1, sum(self.client.nthreads().values()))


# ---- what runs on a worker -------------------------------------------------------------------

@dataclass
class Chunk:
    """Consecutive tasks of a run: ``keys`` [(family, index)] to generate, or loaded ``tasks``."""
    number: int
    keys: list[tuple[str, int]] | None = None
    tasks: list[Task] | None = None
    suite: str = ""
    seed: int = 0

    def task_ids(self) -> list[str]:
        if self.tasks is not None:
            return [t.id for t in self.tasks]
        return [f"{self.suite}/{f}/{i:06d}" for f, i in self.keys]

    def make(self) -> list[Task]:
        if self.tasks is not None:
            return list(self.tasks)
        return [generate_task(f, i, suite=self.suite, suite_seed=self.seed) for f, i in self.keys]


@dataclass
class Work:
    """What each chunk does after generating: nothing (``solver_spec`` None: generate only), or
    solve with ``solver_spec``/``options`` and score with ``max_steps``.  ``semaphore``: name of
    the run's Dask semaphore bounding live-model requests cluster-wide; ``cache``: the response
    cache (key -> entry) broadcast to workers."""
    solver_spec: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    max_steps: int | None = None
    threads: int = 1
    semaphore: str | None = None
    leases: int = 1


class _Collect(list):
    """A stand-in for a JsonlWriter that keeps the records (a chunk's transcript lines)."""

    def write(self, record) -> None:
        self.append(record)

    def close(self) -> None:
        pass


class _LeaseSemaphore:
    """``threading.BoundedSemaphore``'s ``acquire``/``release``/context use on a Dask semaphore."""

    def __init__(self, name: str, leases: int) -> None:
        from distributed import Semaphore
        self._sem = Semaphore(max_leases=leases, name=name)

    def acquire(self, *a, **k) -> bool:
        return self._sem.acquire()

    def release(self) -> None:
        self._sem.release()

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def run_chunk(chunk: Chunk, work: Work, cache: dict | None = None) -> dict[str, Any]:
    """Generate (or take), solve and score one chunk on a worker.

    Returns ``{"number", "tasks": [Task], "answers": [[Answer]], "scores": [[Score]], "cache":
    [new cache entries], "transcript": [live-model transcript records]}`` (lists in task order;
    ``answers``/``scores`` empty when generating only).  An exception raised while solving one
    task is that task's ``crashed`` answer (``runner.safe_solve``); generation errors propagate
    (the chunk is retried, then reported).
    """
    from .runner import safe_solve  # same level; runner imports this module lazily too
    tasks = chunk.make()
    out: dict[str, Any] = {"number": chunk.number, "tasks": tasks, "answers": [], "scores": [], "cache": [],
                           "transcript": []}
    if work.solver_spec is None:
        return out
    solver = get_solver(work.solver_spec, work.options)
    chat = getattr(solver, "client", None)
    known: set[str] = set()
    if chat is not None and hasattr(chat, "_cache"):
        chat._cache.update(cache or {})
        known = set(chat._cache)
        chat._trans_w = out["transcript"] = _Collect()
        if work.semaphore is not None:
            chat._sem = _LeaseSemaphore(work.semaphore, work.leases)
    try:
        if work.threads > 1 and getattr(solver, "threaded", False):
            with ThreadPoolExecutor(max_workers=work.threads) as pool:
                answers = list(pool.map(lambda t: safe_solve(solver, t), tasks))
        else:
            answers = [safe_solve(solver, t) for t in tasks]
    finally:
        if callable(getattr(solver, "close", None)):
            solver.close()
    out["answers"] = answers
    out["scores"] = [score_answers([t], a, max_steps=work.max_steps) for t, a in zip(tasks, answers)]
    if chat is not None and hasattr(chat, "_cache"):
        out["cache"] = [v for k, v in chat._cache.items() if k not in known]
    return out


# ---- the client side -------------------------------------------------------------------------

def chunks_of(*, suite: str, seed: int, keys: list[tuple[str, int]] | None = None,
              tasks: Iterable[Task] | None = None, size: int = DEFAULT_CHUNK) -> Iterator[Chunk]:
    """Cut a run into :class:`Chunk` s of ``size`` consecutive tasks: from generated ``keys``
    (suite order) or from loaded ``tasks`` (data suites; read lazily)."""
    if size < 1:
        raise ValueError(f"chunk size must be at least 1, got {size}")
    source = iter(keys if keys is not None else tasks)
    for number in itertools.count():
        part = list(itertools.islice(source, size))
        if not part:
            return
        if keys is not None:
            yield Chunk(number, keys=part, suite=suite, seed=seed)
        else:
            yield Chunk(number, tasks=part, suite=suite, seed=seed)


class ChunkStream:
    """Submit chunks to a cluster (at most ``window`` in flight) and yield their results in
    chunk order, each ``(task, answers, scores)`` (answers/scores ``[]`` when generating only).

    A chunk that failed ``RETRIES + 1`` times (or whose workers kept dying) is skipped and
    recorded in :attr:`failed` (task ids) and :attr:`errors`; the stream goes on with the others.
    ``cache_file`` / ``transcript_file``: :class:`~stsim.records.JsonlWriter` s that receive the
    new live-model cache entries and transcript records of each chunk as it arrives.  Closing the
    generator (or Ctrl-C while waiting) cancels every chunk still on the cluster.
    """

    def __init__(self, client, chunks: Iterable[Chunk], work: Work, *, window: int,
                 cache: dict | None = None, cache_file=None, transcript_file=None) -> None:
        self.transcript_file = transcript_file
        self.client = client
        self.chunks = iter(chunks)
        self.work = work
        self.window = max(1, window)
        self.cache = cache
        self.cache_file = cache_file
        self.failed: list[str] = []
        self.errors: list[str] = []
        self.token = uuid.uuid4().hex[:8]

    def __iter__(self) -> Iterator[tuple[Task, list[Answer], list[Score]]]:
        from distributed import as_completed
        client = self.client
        # the cache goes to every worker once (not inside each chunk); a list, as scatter splits dicts
        cache_f = client.scatter([self.cache], broadcast=True)[0] if self.cache else None
        pending: dict[int, Any] = {}  # chunk number -> future
        chunk_of: dict[int, Chunk] = {}
        done: dict[int, dict | None] = {}  # finished, waiting for their turn (None = failed)
        failed: dict[int, list[str]] = {}
        ac = as_completed()
        next_out = 0

        def submit() -> bool:
            chunk = next(self.chunks, None)
            if chunk is None:
                return False
            fut = client.submit(run_chunk, chunk, self.work, cache_f, key=f"stsim-{self.token}-{chunk.number}",
                                retries=RETRIES, pure=False)
            pending[chunk.number] = fut
            chunk_of[chunk.number] = chunk
            ac.add(fut)
            return True

        try:
            more = True
            while more and len(pending) < self.window:
                more = submit()
            while pending or done:
                while next_out in done:
                    res = done.pop(next_out)
                    chunk_of.pop(next_out)
                    next_out += 1
                    if res is None:
                        continue
                    answers = res["answers"] or [[] for _ in res["tasks"]]
                    scores = res["scores"] or [[] for _ in res["tasks"]]
                    yield from zip(res["tasks"], answers, scores)
                if not pending:
                    break
                fut = next(ac)
                number = int(fut.key.rsplit("-", 1)[1])
                pending.pop(number)
                if fut.status == "finished":
                    res = fut.result()
                    if self.cache_file is not None:
                        for entry in res["cache"]:
                            self.cache_file.write(entry)
                    if self.transcript_file is not None:
                        for record in res["transcript"]:
                            self.transcript_file.write(record)
                    done[number] = res
                else:
                    try:
                        exc = fut.exception()
                    except Exception as why:  # noqa: BLE001 - e.g. cancelled by the scheduler
                        exc = why
                    failed[number] = chunk_of[number].task_ids()
                    self.failed = [i for k in sorted(failed) for i in failed[k]]  # task order
                    self.errors.append(f"{type(exc).__name__}: {exc}")
                    done[number] = None
                fut.release()
                # a slow early chunk holds the later ones back: buffer at most 4 windows of them
                while more and len(pending) < self.window and len(done) < 4 * self.window:
                    more = submit()
        finally:
            if pending:
                client.cancel(list(pending.values()), force=True)
            if cache_f is not None:
                client.cancel([cache_f])


def _score_chunk(tasks: list[Task], answers: list[Answer], max_steps: int | None) -> list[Score]:
    return score_answers(tasks, answers, max_steps=max_steps)


def score_on_cluster(client, tasks: list[Task], answers: list[Answer], max_steps: int | None,
                     size: int = DEFAULT_CHUNK * 16) -> list[Score]:
    """``score_answers(tasks, answers, max_steps)`` computed in chunks of ``size`` tasks on the
    cluster (``stsim score --cluster``); the same list, in task order.

    Raises:
        ChunkFailed: a chunk that failed ``RETRIES + 1`` times (naming its tasks).
    """
    by_task: dict[str, list[Answer]] = {}
    for a in answers:
        by_task.setdefault(a.task_id, []).append(a)
    parts = [tasks[i:i + size] for i in range(0, len(tasks), size)]
    futures = [client.submit(_score_chunk, part, [a for t in part for a in by_task.get(t.id, [])], max_steps,
                             retries=RETRIES, pure=False) for part in parts]
    out: list[Score] = []
    failed, errors = [], []
    try:
        for part, fut in zip(parts, futures):
            try:
                out.extend(fut.result())
            except Exception as exc:  # noqa: BLE001 - reported with the task ids below
                failed.extend(t.id for t in part)
                errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        client.cancel(futures)
    if failed:
        raise ChunkFailed(failed, errors)
    return out
