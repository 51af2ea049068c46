"""The witness file behind the RCC-22 composition table: every triple re-classified, the
table's laws, the reader's errors."""
from __future__ import annotations

import pytest

from stsim.qstr import get_calculus
from stsim.qstr.cell_regions import Grid, rcc23_relation
from stsim.qstr.rcc23_witnesses import (WitnessFileError, composition_from_triples, facts_of,
                                        read_witnesses, write_witnesses)


def test_table_is_complete_and_lawful():
    """All 484 entries non-empty; identity and converse laws (Calculus.check)."""
    cal = get_calculus("rcc22")
    assert cal.has_composition
    cal.check()
    # RCC-22 refines RCC-8: collapsing every entry gives the RCC-8 table exactly
    rcc8 = get_calculus("rcc8")
    to8 = lambda n: n if n in rcc8.index else n[-2:]
    for a in cal.names:
        for b in cal.names:
            got = {to8(t) for t in cal.compose(a, b)}
            assert got <= rcc8.compose(to8(a), to8(b)), (a, b)


def test_rcc22_collapses_onto_rcc8():
    """Union over refinements: RCC-8 DC ∘ DC etc. are recovered from the RCC-22 table."""
    cal, rcc8 = get_calculus("rcc22"), get_calculus("rcc8")
    to8 = lambda n: n if n in rcc8.index else n[-2:]
    for a in rcc8.names:
        for b in rcc8.names:
            union = set()
            for x in cal.names:
                for y in cal.names:
                    if to8(x) == a and to8(y) == b:
                        union |= {to8(t) for t in cal.compose(x, y)}
            assert union == rcc8.compose(a, b), (a, b)


def test_facts_of_a_triple():
    g = Grid(8)
    x, y, z = g.region([(1, 1)]), g.region([(1, 2)]), g.region([(1, 4)])
    facts = {f for f, _ in facts_of([x, y, z], rcc23_relation)}
    # x, y touch; z is away from both: every ordering shows one of three facts
    assert facts == {("OOE", "OOD", "OOD"), ("OOD", "OOD", "OOE"), ("OOD", "OOE", "OOD")}


def test_write_then_read_round_trip(tmp_path):
    g = Grid(8)
    x, y, z = (g.region(c) for c in ([(1, 1)], [(1, 2)], [(1, 4), (2, 4)]))
    facts = {f for f, _ in facts_of([x, y, z], rcc23_relation)}
    path = tmp_path / "w.txt"
    small = Grid(5)
    w = small.region([(1, 1), (3, 3)])
    assert write_witnesses(path, [(g, (x.bits, y.bits, z.bits)), (small, (w.bits, w.bits, w.bits))]) == 2
    [(g5, bits5), (grid, bits)] = read_witnesses(path)
    assert g5.n == 5 and bits5 == (w.bits,) * 3
    assert grid.n == 8 and bits == (x.bits, y.bits, z.bits)
    comp = composition_from_triples(read_witnesses(path)[1:])
    assert {(r, s, t) for (r, s), ts in comp.items() for t in ts} == facts


@pytest.mark.parametrize("text, where", [
    ("1 2 3\n", "w.txt:1: no 'grid N' line"),
    ("grid 8\n1 2\n", "w.txt:2: expected three regions"),
    ("grid 8\n1 2 zz\n", "w.txt:2:"),
    ("grid 8\n1 2 0\n", "w.txt:2: a region needs at least one cell"),
    (f"grid 8\n1 2 {1 << 36:x}\n", "w.txt:2:"),
    # damaged grid lines: named, and a huge N is refused before any work is done
    ("grid\n1 2 3\n", "w.txt:1: expected 'grid N'"),
    ("grid 8 9\n1 2 3\n", "w.txt:1: expected 'grid N'"),
    ("grid 100000\n1 2 3\n", "w.txt:1: expected 'grid N' with 3 <= N <= 256"),
    # a sign, prefix or separator is not part of the format (int(..., 16) would take them)
    ("grid 8\n1 -2 3\n", "w.txt:2: '-2' is not a hexadecimal cell set"),
    ("grid 8\n1 0x2 3\n", "w.txt:2: '0x2' is not a hexadecimal cell set"),
])
def test_bad_witness_files(tmp_path, text, where):
    path = tmp_path / "w.txt"
    path.write_text(text)
    with pytest.raises(WitnessFileError, match=where.replace(".", r"\.")):
        read_witnesses(path)


def test_non_utf8_witness_file(tmp_path):
    """Bytes that are not UTF-8 give a WitnessFileError naming the line, not a UnicodeDecodeError."""
    path = tmp_path / "w.txt"
    path.write_bytes(b"grid 8\n# caf\xe9\n1 2 3\n")
    with pytest.raises(WitnessFileError, match=r"w\.txt:2: not UTF-8"):
        read_witnesses(path)


def test_rcc22_schematics_redraw_to_their_relation():
    """Each RCC-22 picture, read back into two regions, is in the relation it illustrates."""
    from stsim.qstr.descriptions import schematics
    from stsim.qstr.topology import rcc22_name
    pics = schematics("rcc22")
    assert set(pics) == set(get_calculus("rcc22").names)
    for name, (pic,) in pics.items():
        rows = pic.splitlines()
        g = Grid(max(len(rows), len(rows[0])) + 2)
        cells = lambda chars: [(r + 1, c + 1) for r, row in enumerate(rows)
                               for c, ch in enumerate(row) if ch in chars]
        x, y = g.region(cells("XB")), g.region(cells("YB"))
        assert rcc22_name(rcc23_relation(x, y)) == name, (name, pic)
        assert set(pic) <= set("XYB~\n") and len({len(r) for r in rows}) == 1


@pytest.mark.parametrize("rels, head", [
    (("IOD", "OOD", "IOD"), "INSIDE_OUTSIDEi_DC(x,y), OUTSIDE_OUTSIDEi_DC(y,z), INSIDE_OUTSIDEi_DC(x,z):"),
    (("TPPi", "NTPPi", "NTPPi"), "TPPi(x,y), NTPPi(y,z), NTPPi(x,z):"),
])
def test_witness_command_draws_three_regions(capsys, rels, head):
    """The drawing, read back into three regions, shows the three relations asked for."""
    from stsim.cli import main
    from stsim.qstr.topology import rcc22_name
    assert main(["calculus", "witness", "rcc22", *rels]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == head
    picture = out[1:-1]
    assert {ch for row in picture for ch in row} <= set(".XYZABCD")
    g = Grid(max(len(picture), len(picture[0])) + 2)
    region = lambda chars: g.region([(r + 1, c + 1) for r, row in enumerate(picture)
                                     for c, ch in enumerate(row) if ch in chars])
    x, y, z = region("XABD"), region("YACD"), region("ZBCD")
    got = [rcc22_name(rcc23_relation(p, q)) for p, q in ((x, y), (y, z), (x, z))]
    assert got == [rcc22_name(r) for r in rels]


@pytest.mark.parametrize("args, message", [
    (["rcc8", "DC", "DC", "DC"], "RCC-22 only"),
    (["rcc22", "IOD", "OOD"], "three relation names"),
    (["rcc22", "IOD", "OOD", "EC"], "unknown RCC-22 relation"),
    (["rcc22", "IPD", "IPD", "EQ"], "EQ is not in INSIDE_PINSIDEi_DC ∘ INSIDE_PINSIDEi_DC"),
])
def test_witness_command_errors(capsys, args, message):
    from stsim.cli import main
    assert main(["calculus", "witness", *args]) == 2
    assert message in capsys.readouterr().err


def test_search_script_finds_only_facts_of_the_table(tmp_path):
    """A short run of the witness search (every triple in a 2x2 block, then 2 s of search on a
    small grid) writes a file whose facts all lie in the shipped table, with no reference
    table involved."""
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[1] / "scripts" / "find_rcc23_witnesses.py"
    out = tmp_path / "w.txt"
    done = subprocess.run([sys.executable, str(script), "--grid", "8", "--exhaustive", "2",
                           "--seconds", "2", "--seed", "3", "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = composition_from_triples(read_witnesses(out))
    table = get_calculus("rcc22")
    from stsim.qstr.topology import rcc22_name
    n = 0
    for (r, s), ts in found.items():
        for t in ts:
            assert rcc22_name(t) in table.compose(rcc22_name(r), rcc22_name(s)), (r, s, t)
            n += 1
    assert n > 500          # a 2x2 block alone shows hundreds of facts


@pytest.mark.parametrize("rels", [
    ("ipd", "pid", "ood"),                                              # codes, lower case
    ("inside_pinsidei_dc", "PINSIDE_INSIDEI_DC", "Outside_Outsidei_DC"),  # long names, any case
    ("INSIDE_PINSIDEi_DC", "PID", "OOD"),                               # mixed forms
])
def test_witness_command_reads_names_in_any_case(capsys, rels):
    """Relation names, codes and case variants all name the same entry, as in the rubric."""
    from stsim.cli import main
    assert main(["calculus", "witness", "rcc22", *rels]) == 0
    assert capsys.readouterr().out.splitlines()[0] == \
        "INSIDE_PINSIDEi_DC(x,y), PINSIDE_INSIDEi_DC(y,z), OUTSIDE_OUTSIDEi_DC(x,z):"


@pytest.mark.parametrize("args, message", [
    (["witness"], "calculus witness needs a NAME"),
    (["witness", "rcc22", "IPD", "PID", "OOD", "--format", "gqr"], "options of `calculus show`"),
    (["witness", "rcc22", "IPD", "PID", "OOD", "--out", "somewhere"], "options of `calculus show`"),
    (["witness", "rcc22", "", "PID", "OOD"], "unknown RCC-22 relation(s) ''"),
    (["list", "rcc22"], "calculus list takes no arguments"),
    (["show", "rcc8", "--out", "somewhere"], "use it with --format gqr"),
])
def test_calculus_command_usage_errors(capsys, args, message):
    """Misplaced arguments are named in a one-line error (exit 2), not silently ignored."""
    from stsim.cli import main
    assert main(["calculus", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stsim: error: ") and message in err


def _damaged_copy(tmp_path, damage):
    from stsim.qstr.rcc23_witnesses import WITNESS_FILE
    lines = WITNESS_FILE.read_text().splitlines(keepends=True)
    bad = tmp_path / "w.txt"
    bad.write_text("".join(lines[:100]) + ("" if damage == "truncated" else "1 2\n"))
    return bad


@pytest.mark.parametrize("damage, message", [("truncated", "composition entries"),
                                             ("malformed", "expected three regions")])
def test_damaged_shipped_witness_file_is_a_cli_error(tmp_path, monkeypatch, capsys, damage, message):
    """A damaged witness data file is a one-line error naming it (exit 2), not a traceback."""
    import stsim.qstr.rcc23_witnesses as W
    from stsim.cli import main
    from stsim.qstr.catalogue import all_calculi
    bad = _damaged_copy(tmp_path, damage)
    caches = (W.shipped_witnesses, W.derive_rcc23_composition, all_calculi)
    monkeypatch.setattr(W, "WITNESS_FILE", bad)
    for f in caches:
        f.cache_clear()
    try:
        assert main(["calculus", "list"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("stsim: error: ") and str(bad) in err and message in err
    finally:
        monkeypatch.undo()
        for f in caches:
            f.cache_clear()


def test_truncated_witness_file_does_not_shrink_the_benchmark(tmp_path):
    """A truncated witness file used to leave RCC-22 silently without a composition table, and
    `stsim generate qstrbench` wrote 1,322 questions instead of 1,806.  (A subprocess: the
    failure happens while the generators register, which must not leak into other tests.)"""
    import subprocess
    import sys
    bad = _damaged_copy(tmp_path, "truncated")
    code = ("import sys, pathlib, stsim.qstr.rcc23_witnesses as W; "
            f"W.WITNESS_FILE = pathlib.Path({str(bad)!r}); from stsim.cli import main; "
            f"sys.exit(main(['generate', 'qstrbench', '-o', {str(tmp_path / 't.jsonl')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("stsim: error: RCC-22: no witness triple") and "Traceback" not in proc.stderr
