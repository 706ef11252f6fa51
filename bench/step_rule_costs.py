"""Per-sample cost of each family's default step rule against its former default (AdaGrad-norm,
"adagrad"; DSG: its papers' one step, eta=1), for the 76-kernel dictionary (D = 50; OMKR: exact
expansions over its default budget of 1,000 support rows; FOGD: its one kernel, D = 1000; DSG: its
one kernel and default blocks), timed interleaved in one run.

    python bench/step_rule_costs.py --out bench/results/step_rule_costs.md
"""
import argparse
import platform
import sys
from pathlib import Path

import fastomkl as fo
from defaults import D, time_per_sample

def _pair(family, make, former="adagrad"):
    """The family's default and its former default, by name."""
    return {f"{family} (default: eta='ensemble')": lambda: make(),
            f"{family}, eta={former!r}": lambda: make(eta=former)}


MODELS = {
    **_pair("Raker", lambda **kw: fo.Raker(n_components=D, random_state=0, **kw)),
    **_pair("RFOMKR", lambda **kw: fo.RFOMKR(n_components=D, random_state=0, **kw)),
    "AdaRaker (12 levels)": lambda: fo.AdaRaker(n_components=D, random_state=0),
    **_pair("OMKL-GF", lambda **kw: fo.OMKLGF(n_components=D, random_state=0, **kw)),
    **_pair("OMKL-SFG", lambda **kw: fo.OMKLSFG(n_components=D, random_state=0, **kw)),
    **_pair("OMKL-SFG-R", lambda **kw: fo.OMKLSFGR(n_components=D, random_state=0, **kw)),
    **_pair("OMKR", lambda **kw: fo.OMKR(**kw)),
    **_pair("FOGD", lambda **kw: fo.FOGD(random_state=0, **kw)),
    **_pair("DSG", lambda **kw: fo.DoublySGDRegressor(random_state=0, **kw), former=1.0),
}
# The former default each model is measured against (AdaRaker: Raker's).
BASELINE = {name: next((other for other in MODELS
                        if other.startswith(name.split(" ")[0].rstrip(",") + ", eta=")),
                       "Raker, eta='adagrad'")
            for name in MODELS}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    seconds = time_per_sample(MODELS, repeats=args.repeats)
    command = "python bench/step_rule_costs.py " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = ["# Per-sample cost of the step rules", "",
             f"`{command.strip()}`: 76 kernels, D = 50, casp (2,000 shuffled rows), each model "
             f"learning the same rows, interleaved, the best of {args.repeats} runs; Python "
             f"{platform.python_version()} on a shared machine (ratios, not absolute times, carry "
             "over).", "",
             "| model | microseconds per sample | / the family's former default |",
             "|---|---|---|"]
    for name, value in seconds.items():
        base = seconds[BASELINE[name]]
        lines.append(f"| {name} | {value * 1e6:.1f} | {value / base:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
