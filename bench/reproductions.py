"""Every paper's comparison with its reproduction in one table, gathered from the committed results.

    python bench/reproductions.py                  # prints the table
    python bench/reproductions.py --out bench/results/reproductions.md

Each results file written by ``fastomkl reproduce`` opens its summary with the same count line
(``fastomkl.reproduce.common.count_line``): N cells, within the spread, traced to a switch (outside,
and within with the switch that runs as the authors' code does), untraced.  This script reads those
lines, so the table says exactly what the committed runs computed, and names the commit each file
records.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fastomkl.reproduce.common import code_commit  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
# paper -> [(what the file holds, its name in bench/results)]
FILES = {
    "000": [(f"Table {n}{mode}", f"paper000_table{n}{suffix}.md") for n in (1, 3, 4, 5)
            for mode, suffix in (("", ""), (", `--legacy`", "_legacy"))],
    "001": [("Tables 2-10", "paper001_tables.md"),
            ("Tables 4, 7, 10 (absolute loss) with every switch",
             "paper001_switches/absolute/paper001_tables.md"),
            ("Tables 3, 6, 9 (square loss) with every switch",
             "paper001_switches/squared/paper001_tables.md"),
            ("Tables 2, 5, 8 (phishing, magic04) with every switch",
             "paper001_switches/classification/paper001_tables.md")],
    "003": [("Table 2", "paper003_table2.md")],
    "004": [("numbers in the text", "paper004_results.md")],
}
COUNTS = re.compile(r"\* (\d+) cells: \*\*(\d+) within\*\* the spread, \*\*(\d+) traced\*\* to a "
                    r"switch \(outside, and within with it\), \*\*(\d+) untraced\*\*\.")
COMMIT = re.compile(r"at commit (`[0-9a-f]{40}`( \+ uncommitted changes)?|unknown)")


def counts(path: str):
    """((cells, within, traced, untraced), commit) of one results file, or None without a count
    line."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    found = COUNTS.search(text)
    if found is None:
        return None
    commit = COMMIT.search(text)
    return tuple(int(g) for g in found.groups()), commit.group(1) if commit else "not recorded"


def table() -> str:
    lines = ["# Every reproduction against its paper", "",
             f"`python bench/reproductions.py --out bench/results/reproductions.md`, at commit "
             f"{code_commit()}: the counts each committed results file computed (a cell is within "
             "when |ours − paper| ≤ 2·√(s_paper² + s_ours²); traced when it is outside and the "
             "switch that runs as the authors' code does lands it within).  Paper 000's Table 2 "
             "holds run times, which are not compared; paper 002's figures carry no numbers, and "
             "its results files check the paper's qualitative claims instead.",
             "", "| paper | results | cells | within | traced | untraced | made at commit |",
             "|---|---|---|---|---|---|---|"]
    for paper, files in FILES.items():
        for what, name in files:
            path = os.path.join(RESULTS, name)
            found = counts(path) if os.path.exists(path) else None
            if found is None:
                lines.append(f"| {paper} | {what} ([{name}]({name})) | no count line | | | | |")
                continue
            (n, within, traced, untraced), commit = found
            lines.append(f"| {paper} | {what} ([{name}]({name})) | {n} | {within} | {traced} | "
                         f"{untraced} | {commit} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the table to this Markdown file")
    args = parser.parse_args(argv)
    text = table()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
