"""Walking the folders of STARK's released data (shared by the tier-1, tier-2, field and
tier-3 loaders)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, TypeVar

from ..suites import SuiteError

V = TypeVar("V")


def release_folders(root: Path, folders: Mapping[str, V], wanted: Iterable[str] | None = None,
                    family_of: Callable[[V], str] = lambda v: v) -> Iterator[tuple[Path, V]]:
    """Yield ``(root / name, value)`` for each released folder ``name`` of ``folders`` whose
    family (``family_of(value)``) is in ``wanted`` (all when ``wanted`` is empty), in mapping
    order.

    Raises:
        SuiteError: a selected folder is missing from the release, naming it.
    """
    wanted = set(wanted or ())
    for name, value in folders.items():
        if wanted and family_of(value) not in wanted:
            continue
        folder = root / name
        if not folder.is_dir():
            raise SuiteError(f"{root}: folder {name!r} is missing from the STARK release")
        yield folder, value
