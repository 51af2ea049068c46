"""MkDocs build hook (mkdocs.yml ``hooks:``): the home page is README.md (its ``docs/`` links
made relative to the docs folder) and the task catalogue page is generated from the family
registry, so neither drifts from the repository."""
from __future__ import annotations

from pathlib import Path

CATALOGUE = "<!-- catalogue -->"
README = "<!-- readme -->"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if CATALOGUE in markdown:
        from stsim.benchmarks.catalogue import catalogue_markdown
        markdown = markdown.replace(CATALOGUE, catalogue_markdown())
    if README in markdown:
        readme = (Path(config["config_file_path"]).parent / "README.md").read_text(encoding="utf-8")
        readme = readme.replace("](docs/", "](").replace("`docs/img/show-*.png`", "the pictures below")
        markdown = markdown.replace(README, readme)
    return markdown
