"""``stsim export SUITE --format F -o DIR``: a suite's tasks in the formats other tools read.

=========  ==============================================================================
format     writes into ``DIR``
=========  ==============================================================================
chat       ``prompts.jsonl``: per task the exact chat messages the live-model solver sends
           (:func:`stsim.generators.chat_prompts.chat_record`); no gold answers
jsonl      ``tasks.jsonl``: the full tasks, as ``stsim generate`` writes them
csv        ``tasks.csv``: the table below as CSV (JSON text in the JSON columns)
parquet    ``tasks.parquet`` (pyarrow, schema :data:`TABLE_SCHEMA`) and ``README.md``, the card
hf         a Hugging Face ``datasets`` folder (``datasets.load_from_disk(DIR)``) and ``README.md``
inspect    ``stsim_task.py`` and ``tasks.jsonl``: ``inspect eval DIR/stsim_task.py --model ...``
           (:mod:`stsim.benchmarks.inspect_task`)
=========  ==============================================================================

**One table, with the family-specific parts as JSON text.**  Every task, whatever its family,
is one row of the same schema: ``id``, ``family``, ``prompt``, ``answer_format`` and ``rubric``
as strings, ``steps`` as a list of ``{index, prompt, inputs, answer}`` structs, and ``inputs``,
``answer``, ``meta`` (and each step's ``inputs`` / ``answer``) as canonical JSON strings
(:func:`stsim.records.dumps`).  Why not one typed table per family: the suites hold up to 284
families whose inputs differ in shape (sensor arrays, geometries in WKT-like lists, city graphs,
calculus names) and whose gold answers differ in type (a point, a boolean, a set of relation
names, a DE-9IM string); one table per family would need 284 schemas kept in step with the
generators, and a union schema would be mostly nulls.  A JSON column keeps every value exactly
(no float32 narrowing, ``null`` for a missing reading, no coercion of a mixed list), so
reading the table back and writing each row with :func:`stsim.records.dumps` gives the JSONL
bytes of ``stsim generate``; filtering by ``family`` and decoding one column is one line in
pandas, polars or ``datasets``.
"""
from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from .. import __version__
from ..records import Step, Task, dumps
from ..records import write_jsonl as records_write_jsonl

#: export formats and what each writes into the output folder (``--help`` lists them).
FORMATS = {
    "chat": "prompts.jsonl, the chat messages the live-model solver sends (no gold)",
    "jsonl": "tasks.jsonl, the full tasks",
    "csv": "tasks.csv, one row per task (JSON text columns)",
    "parquet": "tasks.parquet (pyarrow) and a dataset card README.md",
    "hf": "a Hugging Face datasets folder (load_from_disk) and README.md",
    "inspect": "stsim_task.py and tasks.jsonl, a task file for `inspect eval`",
}

#: the columns of the csv / parquet / hf table, in order.
COLUMNS = ("id", "family", "prompt", "answer_format", "rubric", "inputs", "answer", "steps", "meta")


class ExportError(ValueError):
    """An export that cannot be written (e.g. a format whose optional library is missing)."""


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError("this format needs pyarrow: pip install 'stsim[datasets]'") from None
    return pa, pq


def table_schema():
    """The pyarrow schema of the exported table (see the module docstring for why the
    family-specific parts are JSON strings).

    Raises:
        ExportError: pyarrow is not installed.
    """
    pa, _ = _pyarrow()
    step = pa.struct([("index", pa.int64()), ("prompt", pa.string()), ("inputs", pa.string()),
                      ("answer", pa.string())])
    fields = [pa.field("id", pa.string(), nullable=False), pa.field("family", pa.string(), nullable=False),
              pa.field("prompt", pa.string(), nullable=False),
              pa.field("answer_format", pa.string(), nullable=False),
              pa.field("rubric", pa.string(), nullable=False),
              pa.field("inputs", pa.string(), nullable=False), pa.field("answer", pa.string(), nullable=False),
              pa.field("steps", pa.list_(step), nullable=False), pa.field("meta", pa.string(), nullable=False)]
    return pa.schema(fields, metadata={"stsim_version": __version__,
                                       "json_columns": "inputs answer meta steps.inputs steps.answer"})


COLUMN_DOC = {
    "id": "string: stable task id `suite/family/NNNNNN`",
    "family": "string: task family (see the table of families)",
    "prompt": "string: the prompt text a model is shown (tracking: the task part; step readings in `steps`)",
    "answer_format": "string: answer format in `stsim.answers` (point, scalar, binary, relation, ...)",
    "rubric": "string: how model text is read (stark: between [RESULTS_START] and [RESULTS_END]; "
              "qstrbench: after `### Answer:`; cardinal: the one direction named)",
    "inputs": "string (JSON): structured inputs for first-principle solvers",
    "answer": "string (JSON): the gold answer computed by code (`null` for tracking; gold per step)",
    "steps": "list of {index: int64, prompt: string, inputs: string (JSON), answer: string (JSON)}: "
             "tracking steps; empty otherwise",
    "meta": "string (JSON): suite, seed, index, generator_version, config, rubric, answer_spec, ...",
}


def task_row(t: Task) -> dict[str, Any]:
    """One table row of a task (JSON columns as canonical JSON text)."""
    return {"id": t.id, "family": t.family, "prompt": t.prompt, "answer_format": t.answer_format,
            "rubric": str(t.meta.get("rubric", "stark")), "inputs": dumps(t.inputs), "answer": dumps(t.answer),
            "steps": [{"index": s.index, "prompt": s.prompt, "inputs": dumps(s.inputs), "answer": dumps(s.answer)}
                      for s in t.steps],
            "meta": dumps(t.meta)}


def row_task(row: dict[str, Any]) -> Task:
    """The task of a table row (inverse of :func:`task_row`); ``steps`` may be a list of
    dicts or, as in CSV, its JSON text."""
    steps = row["steps"]
    if isinstance(steps, str):
        steps = json.loads(steps)
    return Task(id=row["id"], family=row["family"], prompt=row["prompt"], inputs=json.loads(row["inputs"]),
                answer=json.loads(row["answer"]), answer_format=row["answer_format"],
                steps=[Step(int(s["index"]), s["prompt"], json.loads(s["inputs"]), json.loads(s["answer"]))
                       for s in steps or []],
                meta=json.loads(row["meta"]))


def to_arrow(tasks: Iterable[Task]):
    """A ``pyarrow.Table`` of the tasks with :func:`table_schema`.

    Raises:
        ExportError: pyarrow is not installed.
    """
    pa, _ = _pyarrow()
    rows = [task_row(t) for t in tasks]
    return pa.Table.from_pylist(rows, schema=table_schema())


def read_parquet(path: str | Path) -> list[Task]:
    """The tasks of an exported ``tasks.parquet``."""
    _, pq = _pyarrow()
    return [row_task(r) for r in pq.read_table(path).to_pylist()]


# ------------------------------------------------------------------------------- dataset card
#: where each benchmark's tasks come from (the dataset card's provenance section).
PROVENANCE = {
    "stark": ("STARK: *Benchmarking Spatiotemporal Reasoning in LLMs and Reasoning Models: "
              "Capabilities and Challenges* (seed 001). Generated families simulate the paper's "
              "scenarios with stsim's own code and wording; the `stark-published*` suites instead "
              "read STARK's released instances (BSD-3-Clause, UCLA NESL), which the user downloads."),
    "qstr": ("QSTRBench: *a New Benchmark to Evaluate the Ability of Language Models to Reason with "
             "Qualitative Spatial and Temporal Calculi*, Cohn & Blackwell (seed 000). Questions are "
             "enumerated from stsim's own calculus tables; gold by the calculus engine."),
    "qstrx": "QSTRBenchExtended presentation variants of the QSTRBench questions (Cohn & Blackwell, seed 000).",
    "geoqa": ("MultiGlobeQA: *A Multilingual and Globally Diverse Benchmark for Geospatial "
              "Reasoning* (seed 003): question templates executed over stsim's entity store (see its "
              "data files for their own sources and licences)."),
    "cardinal": ("*Evaluating the Ability of Large Language Models to Reason about Cardinal "
                 "Directions*, Cohn & Blackwell (seed 002): templates T1-T6, enumerated exhaustively."),
}


def dataset_card(tasks: list[Task], *, suite: str, seed: int, n: int | None, family: str | None,
                 schema_text: str) -> str:
    """The ``README.md`` written next to a parquet / hf export: schema, counts per family,
    licence and provenance of every source, generator versions and seed."""
    from ..registry import FAMILIES, load_families
    load_families()
    counts = Counter(t.family for t in tasks)
    items = Counter()
    for t in tasks:
        items[t.family] += t.n_items
    versions: dict[str, set[str]] = {}
    for t in tasks:
        versions.setdefault(t.family, set()).add(str(t.meta.get("generator_version", "-")))
    prefixes = sorted({f.split(".")[0] for f in counts})
    lines = ["---", "license: bsd-3-clause", f"pretty_name: stsim {suite}", "tags:", "- spatial-reasoning",
             "- temporal-reasoning", "- synthetic", "---", "", f"# stsim suite `{suite}`", "",
             f"Exported by stsim {__version__}: `stsim export {suite} --seed {seed}"
             + (f" --n {n}" if n is not None else "") + (f" --family '{family}'" if family else "") + "`. "
             f"{len(tasks)} tasks, {sum(items.values())} scored items, suite seed {seed}. Every gold "
             "answer was computed by code from a simulated scenario (or, for `*-published` suites, "
             "taken from the released data); the same stsim version, suite, seed and `--n` give the "
             "same bytes.", "",
             "Score replies with `stsim score tasks.jsonl answers.jsonl` (write the tasks back with "
             "`stsim.benchmarks.export.row_task`), or run a model with `stsim run`.", "",
             "## Schema", "", "One table, one row per task; family-specific parts are JSON text "
             "(decode with `json.loads`).", "", "| column | type and meaning |", "| --- | --- |"]
    lines += [f"| `{c}` | {COLUMN_DOC[c]} |" for c in COLUMNS]
    lines += ["", "Arrow schema:", "", "```", schema_text.strip(), "```", "",
              "## Families", "", "| family | tasks | items | answer format | rubric | generator version | source |",
              "| --- | ---: | ---: | --- | --- | --- | --- |"]
    for fam in sorted(counts):
        f = FAMILIES.get(fam)
        lines.append(f"| `{fam}` | {counts[fam]} | {items[fam]} | {f.answer_format if f else '-'} | "
                     f"{f.rubric if f else '-'} | {', '.join(sorted(versions[fam]))} | "
                     f"{(f.source if f else '') or '-'} |")
    released = sorted({str(t.meta["source"]).split("/", 1)[0] for t in tasks
                       if "generator_version" not in t.meta and t.meta.get("source")})
    n_released = sum(1 for t in tasks if "generator_version" not in t.meta)
    lines += ["", "## Licence and provenance", ""]
    if n_released < len(tasks):
        lines.append(f"{len(tasks) - n_released} task(s) are generated by stsim (BSD-3-Clause) and "
                     "released under the same licence. Prompts follow the content of each source paper "
                     "in stsim's own wording; no text of the papers' datasets is copied into generated tasks.")
    if n_released:
        lines.append(f"{n_released} task(s) are read from published data the user supplied "
                     f"(`--data`; {', '.join(released) or 'see meta.source'}) and keep that data's licence "
                     "(STARK's release: BSD-3-Clause, UCLA NESL); stsim adds only the structure.")
    lines.append("")
    lines += [f"- **{p}**: {PROVENANCE.get(p, 'stsim (beyond the seed papers)')}" for p in prefixes]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------ writers
def write_chat(tasks: Iterable[Task], path: Path, mode: str = "da", max_steps: int | None = 10) -> int:
    """Write one :func:`~stsim.generators.chat_prompts.chat_record` per task to ``path``
    (JSONL); return the count."""
    from ..generators.chat_prompts import chat_record
    return records_write_jsonl(path, (chat_record(t, mode, max_steps) for t in tasks))


def write_csv(tasks: Iterable[Task], path: Path) -> int:
    """Write the table (:data:`COLUMNS`; ``steps`` as JSON text) to ``path`` as CSV (RFC 4180,
    UTF-8, header row); return the count."""
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        for t in tasks:
            row = task_row(t)
            row["steps"] = dumps(row["steps"])
            w.writerow(row)
            n += 1
    return n


def read_csv(path: str | Path) -> list[Task]:
    """The tasks of an exported ``tasks.csv``."""
    csv.field_size_limit(1 << 30)
    with open(path, encoding="utf-8", newline="") as fh:
        return [row_task(r) for r in csv.DictReader(fh)]


def export(fmt: str, tasks: Iterable[Task], out: Path, *, suite: str, seed: int = 0, n: int | None = None,
           mode: str = "da", max_steps: int | None = 10, family: str | None = None) -> list[Path]:
    """Write ``tasks`` in format ``fmt`` (a key of :data:`FORMATS`) into the existing folder
    ``out``; return the paths written.

    Raises:
        ExportError: unknown format, or the optional library of the format is missing.
    """
    if fmt == "chat":
        write_chat(tasks, out / "prompts.jsonl", mode, max_steps)
        return [out / "prompts.jsonl"]
    if fmt == "jsonl":
        records_write_jsonl(out / "tasks.jsonl", tasks)
        return [out / "tasks.jsonl"]
    if fmt == "csv":
        write_csv(tasks, out / "tasks.csv")
        return [out / "tasks.csv"]
    if fmt in ("parquet", "hf"):
        tasks = list(tasks)
        table = to_arrow(tasks)
        card = dataset_card(tasks, suite=suite, seed=seed, n=n, family=family, schema_text=str(table.schema))
        if fmt == "parquet":
            _, pq = _pyarrow()
            pq.write_table(table, out / "tasks.parquet")
            written = [out / "tasks.parquet"]
        else:
            try:
                import datasets
            except ImportError:
                raise ExportError("--format hf needs the datasets library: pip install 'stsim[datasets]'") from None
            datasets.disable_progress_bars()
            ds = datasets.Dataset(table, info=datasets.DatasetInfo(description=f"stsim suite {suite}",
                                                                  license="bsd-3-clause"))
            ds.save_to_disk(str(out))
            written = [out]
        (out / "README.md").write_text(card, encoding="utf-8")
        return written + [out / "README.md"]
    if fmt == "inspect":
        from .inspect_task import write_task_file
        return write_task_file(tasks, out, suite, max_steps)
    raise ExportError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")
