"""Reproductions of the papers' tables and figures: ``fastomkl reproduce <paper> [options]``.

Each paper has a module ``paperNNN`` with ``main(argv) -> int``; results go to an output folder
(``--out DIR``, by default a new folder in the current directory).
"""
from __future__ import annotations

import importlib

# The papers that can be reproduced: number -> (authors, title, venue and year).
PAPERS = {
    "000": ("Ghari & Shen", "Graph-Aided Online Multi-Kernel Learning", "JMLR 24, 2023",
            "Tables 1-5, Figures 1-6"),
    "001": ("Li & Liao", "Improved regret bounds for online kernel selection under bandit feedback",
            "ECML-PKDD 2022", "Tables 2-10"),
    "002": ("Jézéquel, Gaillard & Rudi",
            "Efficient online learning with kernels for adversarial large scale problems",
            "NeurIPS 2019", "Figures 2-4"),
    "003": ("Rokhlin & Gurtovaya",
            "Random feature-based double Vovk-Azoury-Warmuth algorithm for online multi-kernel "
            "learning", "preprint, 2025", "Table 2, Figures 1-2"),
    "004": ("Dai, Xie, He, Liang, Raj, Balcan & Song",
            "Scalable kernel methods via doubly stochastic gradients", "NeurIPS 2014",
            "Figures 4(2), 5, 6(1): rate, GP, Adult; digits for MNIST"),
}


def available() -> list[str]:
    return sorted(PAPERS)


def describe() -> str:
    """One line per paper: number, authors, title, year and what is reproduced."""
    return "\n".join(f"  {number}  {authors}, \"{title}\" ({year}): {what}"
                     for number, (authors, title, year, what) in sorted(PAPERS.items()))


def run(paper: str, argv: list[str]) -> int:
    paper = paper.zfill(3)
    if paper not in PAPERS:
        raise ValueError(f"no reproduction for paper {paper!r}; available: {available()}")
    return importlib.import_module(f"{__name__}.paper{paper}").main(argv)
