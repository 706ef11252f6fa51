"""Reproductions of the papers' tables: ``fastomkl reproduce <paper> [options]``.

Each paper has a module ``paperNNN`` with ``main(argv) -> int``; results go to ``bench/results/``.
"""
from __future__ import annotations

import importlib
import pkgutil


def available() -> list[str]:
    return sorted(m.name[len("paper"):] for m in pkgutil.iter_modules(__path__)
                  if m.name.startswith("paper"))


def run(paper: str, argv: list[str]) -> int:
    paper = paper.zfill(3)
    if paper not in available():
        raise ValueError(f"no reproduction for paper {paper!r}; available: {available()}")
    return importlib.import_module(f"{__name__}.paper{paper}").main(argv)
