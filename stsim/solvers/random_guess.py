"""The random-guess reference solver (``--solver random`` or ``random:SEED``).

For every categorical item it answers uniformly at random among the answer format's values:
0/1 for ``binary``, one of ``meta["answer_spec"]["choices"]`` for ``relation``, a non-empty
random subset of them for ``relation_set``, one of the 8 compass points for ``direction``, nine
cells from ``F 0 1 2`` for ``de9im``.  Draws depend only on (seed, task id, step), so a rerun gives the same
answers.  Numeric formats get a ``no_estimate`` answer saying there is nothing to guess from.
Its expected accuracy is the format's chance level (0.5 on balanced binary items).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..records import Answer, Task
from .base import SolverError, register_solver


@dataclass(frozen=True)
class RandomGuess:
    seed: int = 0

    @property
    def name(self) -> str:
        return f"random:{self.seed}" if self.seed else "random"

    def _rng(self, task_id: str, step) -> np.random.Generator:
        h = hashlib.sha256(f"{self.seed}|{task_id}|{step}".encode()).digest()
        return np.random.default_rng(int.from_bytes(h[:8], "big"))

    def _guess(self, task: Task, step):
        rng = self._rng(task.id, step)
        fmt = task.answer_format
        if fmt == "binary":
            return int(rng.integers(0, 2))
        if fmt == "relation":
            choices = (task.meta.get("answer_spec") or {}).get("choices")
            return None if not choices else str(choices[int(rng.integers(0, len(choices)))])
        if fmt == "de9im":
            return "".join("F012"[int(k)] for k in rng.integers(0, 4, 9))
        if fmt == "direction":
            from ..answers import COMPASS8
            return COMPASS8[int(rng.integers(0, 8))]
        if fmt == "relation_set":  # each relation in or out with probability 1/2, never empty
            choices = (task.meta.get("answer_spec") or {}).get("choices")
            if not choices:
                return None
            while True:
                pick = [str(c) for c, keep in zip(choices, rng.random(len(choices)) < 0.5) if keep]
                if pick:
                    return sorted(pick)
        return None

    def solve(self, task: Task) -> list[Answer]:
        out = []
        for step in [s.index for s in task.steps] or [None]:
            v = self._guess(task, step)
            if v is None:
                out.append(Answer(task.id, step, "no_estimate", solver=self.name,
                                  detail=f"no random guess for answer format {task.answer_format!r}"))
            else:
                out.append(Answer(task.id, step, "ok", value=v, solver=self.name))
        return out


def _factory(arg: str | None, **_options) -> RandomGuess:
    try:
        return RandomGuess(int(arg) if arg else 0)
    except ValueError:
        raise SolverError(f"--solver random:SEED takes an integer seed, got {arg!r}") from None


register_solver("random", _factory)


def random_reference(tasks, max_steps: int | None = 10) -> dict[str, dict[str, float]]:
    """Measured accuracy of :class:`RandomGuess` (seed 0) on the categorical tasks among
    ``tasks``, per family: ``{"random_accuracy", "random_partial_accuracy"?}``; reported next
    to any solver's accuracy (the random-guess reference)."""
    from ..answers import get_format
    from ..scoring.score import score_answers, summarise
    guess = RandomGuess()
    cat = [t for t in tasks if not get_format(t.answer_format).numeric]
    rows = summarise(score_answers(cat, [a for t in cat for a in guess.solve(t)], max_steps=max_steps))
    out = {}
    for fam, row in rows.items():
        if "accuracy" not in row:  # a format with nothing to guess from
            continue
        out[fam] = {"random_accuracy": row["accuracy"]}
        if "partial_accuracy" in row:
            out[fam]["random_partial_accuracy"] = row["partial_accuracy"]
    return out
