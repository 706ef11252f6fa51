"""What the reproductions share: their output folder, a progress bar, figures, the spread test
that compares a cell with the paper's and the commit a results file records.

A reproduction writes into a folder of its own (``--out DIR``, by default a new time-stamped folder
in the current directory), so a short run never replaces the committed full-run results in
``bench/results/`` unless that folder is named explicitly.  Figures need matplotlib (the optional
``plot`` extra); without it the tables are still written.
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time

PLOT_HINT = "figures need matplotlib: pip install 'fastomkl[plot]' (the tables are written anyway)"
DPI = 100
BAR_DELAY = 1.0        # seconds before a progress bar appears: short runs print nothing


def add_output_arguments(parser, paper: str) -> None:
    """--out, --quiet and --no-figures, with the same meaning for every paper."""
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="output folder (default: a new ./fastomkl-reproduce-"
                             f"{paper}-YYYYmmdd-HHMMSS; bench/results holds the committed runs)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--no-figures", dest="figures", action="store_false",
                        help="write the tables only")


def check_data_folder(parser, data_dir, names) -> None:
    """Stop with a message naming what is missing when ``--data`` (or FASTOMKL_DATA) names a
    folder without the data sets ``names``; None means the shipped copies, always present."""
    if data_dir is None:
        return
    if not os.path.isdir(data_dir):
        parser.error(f"--data {data_dir}: no such folder (leave --data and FASTOMKL_DATA unset "
                     "to use the data sets shipped with the package)")
    missing = [f"{n}.npz" for n in names if not os.path.isfile(os.path.join(data_dir, f"{n}.npz"))]
    if missing:
        parser.error(f"--data {data_dir}: the folder has no {', '.join(missing)}")


def output_folder(out: str | None, paper: str) -> str:
    """Create (if needed) and return the folder a run writes into; fail before any work if it
    cannot be written."""
    if out is None:
        out = os.path.join(os.getcwd(),
                           f"fastomkl-reproduce-{paper}-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise SystemExit(f"fastomkl: cannot create the output folder {out}: {exc}") from None
    if not os.access(out, os.W_OK):
        raise SystemExit(f"fastomkl: the output folder {out} is not writable")
    return out


def progress(total: int, quiet: bool, unit: str, desc: str = ""):
    """A tqdm bar on stderr that stays silent for runs shorter than about a second."""
    from tqdm import tqdm
    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, disable=quiet, leave=False,
                delay=BAR_DELAY, mininterval=0.5, dynamic_ncols=True)


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keeps the module docstring's layout and shows every default that is not already spelled
    out in the option's help."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default is None or action.nargs == 0 or "default" in text:
            return text
        return super()._get_help_string(action)


def note(bar, text: str) -> None:
    """A line on stderr above the bar, without drawing a bar that is still within its delay."""
    if not bar.disable and time.time() - bar.start_t >= bar.delay:
        bar.write(text, file=sys.stderr)
    else:
        print(text, file=sys.stderr)


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def figure_backend(wanted: bool):
    """pyplot if figures are wanted and can be drawn, else None (saying why).  Called before the
    runs, so the message comes first and no work is lost."""
    if not wanted:
        return None
    plt = pyplot()
    if plt is None:
        print(f"fastomkl: {PLOT_HINT}", file=sys.stderr)
    return plt


def save_figure(fig, path: str) -> None:
    fig.savefig(path, dpi=DPI)
    fig.clf()
    import matplotlib.pyplot as plt
    plt.close(fig)
    print(f"wrote {path}", file=sys.stderr)


def write_text(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")
    print(f"wrote {path}", file=sys.stderr)


def spread_test(paper: float, paper_sd: float, ours: float, ours_sd: float):
    """(difference ours - paper, bound 2 sqrt(s_paper^2 + s_ours^2), whether |difference| is
    within the bound)."""
    diff = ours - paper
    bound = 2.0 * math.sqrt(paper_sd ** 2 + ours_sd ** 2)
    return diff, bound, abs(diff) <= bound


def spread_row(paper: float, paper_sd: float, ours: float, ours_sd: float) -> dict:
    """A row of a comparison: ours (mean and std) with ``spread_test``'s difference, bound and
    whether it is within, under the names every report reads."""
    diff, bound, within = spread_test(paper, paper_sd, ours, ours_sd)
    return {"ours": ours, "ours_sd": ours_sd, "difference": diff, "bound": bound,
            "within": within}


def verdict(within: bool, switched: dict) -> tuple[str, list]:
    """(verdict, traced_by) of a cell: "within" the spread; "traced" when outside but the run of
    a switch (``switched`` maps its flag to whether that run is within) lands it within, naming
    those switches; "untraced" otherwise."""
    traced_by = [] if within else [flag for flag, ok in switched.items() if ok]
    return ("within" if within else "traced" if traced_by else "untraced"), traced_by


def count_line(cells: list[dict]) -> str:
    """The first line of a verdict summary: how many cells, and how many of each verdict."""
    n = {v: sum(c["verdict"] == v for c in cells) for v in ("within", "traced", "untraced")}
    return (f"* {len(cells)} cells: **{n['within']} within** the spread, **{n['traced']} traced** "
            f"to a switch (outside, and within with it), **{n['untraced']} untraced**.")


# The compiled kernels' instruction-set variants (fastomkl_dispatch.h), by isa_level().
KERNEL_VARIANTS = {4: "v4", 3: "v3", 2: "base"}


def kernels_variant() -> str:
    """The instruction-set variant the compiled kernels run on: "v4" (AVX-512), "v3" (AVX2 +
    FMA) or "base" (SSE2).  Their sums take another order on each, so the last bits of a result
    differ between them, and a run that draws on its own results (a bandit's choices) can carry
    the difference into its fourth digit; a run records the variant, and ``FASTOMKL_ISA=<it>``
    repeats it on any machine that has those instructions."""
    from fastomkl._core.features.rff import isa_level
    return KERNEL_VARIANTS[isa_level()]


def code_commit() -> str:
    """The git commit of the package's checkout ("+ uncommitted changes" when the package's
    tracked files differ from it), or "unknown" outside a checkout.  Only the package counts:
    results files that a run (or an earlier run) rewrites do not change the code that ran."""
    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.dirname(here)
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain",
                                "--untracked-files=no", "--", package], capture_output=True,
                               text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"`{head}`" + (" + uncommitted changes" if dirty else "")


def provenance(paper: str, argv) -> str:
    """The sentence a results file opens with: the command that wrote it, the commit of the
    code that ran and the kernels' variant it ran on, so a committed file says which code made
    its numbers."""
    command = " ".join(["fastomkl reproduce", paper, *(argv or [])])
    return provenance_clause(command, code_commit(), kernels_variant()) + "."


def provenance_clause(command: str, commit: str, variant=None, variant_note: str = "") -> str:
    """"Command: `command`, at commit commit, kernels' variant variant" (the variant and its note
    left out for a run recorded before runs kept it), for a results file that goes on in the same
    sentence or joins several runs."""
    clause = f"Command: `{command}`, at commit {commit}"
    return clause + (f", kernels' variant {variant}{variant_note}" if variant is not None else "")

