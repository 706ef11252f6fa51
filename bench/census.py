"""Lines per module of the package at two git revisions.

    python bench/census.py [BEFORE [AFTER]]        (defaults: 6d3514d and HEAD)

Reads every ``.pyx`` / ``.pxd`` / ``.py`` file under ``fastomkl/`` at both revisions with
``git show REV:path`` (no checkout needed) and prints a Markdown table: module, lines before, lines
after, with subtotals for the compiled core (``fastomkl/_core`` ``.pyx`` / ``.pxd``), the Python
files inside ``fastomkl/_core`` and the Python files of the rest of the package.  "lines" are
physical lines (as ``wc -l`` counts them); the totals also give non-blank lines.  A file present
at one revision only shows "-" at the other.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUFFIXES = (".py", ".pyx", ".pxd")


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True,
                          text=True).stdout


def files_at(rev: str) -> dict[str, str]:
    names = [p for p in git("ls-tree", "-r", "--name-only", rev, "fastomkl").splitlines()
             if p.endswith(SUFFIXES)]
    return {p: git("show", f"{rev}:{p}") for p in names}


def group(path: str) -> str:
    if path.startswith("fastomkl/_core/"):
        return "core-compiled" if path.endswith((".pyx", ".pxd")) else "core-python"
    return "package-python"


TITLES = {"core-compiled": "Compiled core: `fastomkl/_core/**/*.pyx, *.pxd`",
          "core-python": "Python inside the core: `fastomkl/_core/**/*.py`",
          "package-python": "Python package: `fastomkl/**/*.py` outside `_core`"}


def lines(text: str | None) -> int | None:
    return None if text is None else text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def nonblank(text: str | None) -> int:
    return 0 if text is None else sum(1 for line in text.splitlines() if line.strip())


def fmt(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def main(argv: list[str]) -> int:
    before_rev = argv[1] if len(argv) > 1 else "6d3514d"
    after_rev = argv[2] if len(argv) > 2 else "HEAD"
    before, after = files_at(before_rev), files_at(after_rev)
    sha = {r: git("rev-parse", "--short", r).strip() for r in (before_rev, after_rev)}
    out = [f"Lines per module, `{before_rev}` ({sha[before_rev]}) -> `{after_rev}` "
           f"({sha[after_rev]}); command: `python bench/census.py {before_rev} {after_rev}`", ""]
    grand = {"before": 0, "after": 0, "files_b": 0, "files_a": 0, "nb_b": 0, "nb_a": 0}
    summary = []
    for key, title in TITLES.items():
        paths = sorted(p for p in set(before) | set(after) if group(p) == key)
        out += [f"### {title}", "", "| module | lines before | lines after |", "|---|---:|---:|"]
        tb = ta = nb_b = nb_a = fb = fa = 0
        for p in paths:
            b, a = lines(before.get(p)), lines(after.get(p))
            out.append(f"| `{p.removeprefix('fastomkl/')}` | {fmt(b)} | {fmt(a)} |")
            tb += b or 0
            ta += a or 0
            fb += b is not None
            fa += a is not None
            nb_b += nonblank(before.get(p))
            nb_a += nonblank(after.get(p))
        out += [f"| **subtotal ({fb} -> {fa} files)** | **{tb:,}** | **{ta:,}** |", ""]
        summary.append((title, fb, fa, tb, ta, nb_b, nb_a))
        for k, v in zip(("files_b", "files_a", "before", "after", "nb_b", "nb_a"),
                        (fb, fa, tb, ta, nb_b, nb_a)):
            grand[k] += v
    out += ["### Totals", "",
            "| part | files before | files after | lines before | lines after | change | "
            "non-blank before | non-blank after |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for title, fb, fa, tb, ta, nb_b, nb_a in summary + [
            ("**all of `fastomkl/`**", grand["files_b"], grand["files_a"], grand["before"],
             grand["after"], grand["nb_b"], grand["nb_a"])]:
        change = f"{(ta - tb) / tb:+.1%}" if tb else "-"
        out.append(f"| {title.split(':')[0]} | {fb} | {fa} | {tb:,} | {ta:,} | {change} | "
                   f"{nb_b:,} | {nb_a:,} |")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
