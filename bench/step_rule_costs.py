"""Per-sample cost of each family's default step rule against AdaGrad-norm ("adagrad", the former
default), for the 76-kernel dictionary (D = 50), timed interleaved in one run.

    python bench/step_rule_costs.py --out bench/results/step_rule_costs.md
"""
import argparse
import platform
import sys
from pathlib import Path

import fastomkl as fo
from defaults import D, time_per_sample

MODELS = {
    "Raker (default: eta='ensemble')": lambda: fo.Raker(n_components=D, random_state=0),
    "Raker, eta='adagrad'": lambda: fo.Raker(n_components=D, eta="adagrad", random_state=0),
    "RFOMKR (default: eta='ensemble')": lambda: fo.RFOMKR(n_components=D, random_state=0),
    "RFOMKR, eta='adagrad'": lambda: fo.RFOMKR(n_components=D, eta="adagrad", random_state=0),
    "AdaRaker (12 levels)": lambda: fo.AdaRaker(n_components=D, random_state=0),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    seconds = time_per_sample(MODELS, repeats=args.repeats)
    base = {"Raker": seconds["Raker, eta='adagrad'"], "RFOMKR": seconds["RFOMKR, eta='adagrad'"],
            "AdaRaker": seconds["Raker, eta='adagrad'"]}
    command = "python bench/step_rule_costs.py " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = ["# Per-sample cost of the step rules", "",
             f"`{command.strip()}`: 76 kernels, D = 50, casp (2,000 shuffled rows), each model "
             f"learning the same rows, interleaved, the best of {args.repeats} runs; Python "
             f"{platform.python_version()} on a shared machine (ratios, not absolute times, carry "
             "over).", "",
             "| model | microseconds per sample | / the family's eta='adagrad' |", "|---|---|---|"]
    for name, value in seconds.items():
        family = name.split(" ")[0].rstrip(",")
        lines.append(f"| {name} | {value * 1e6:.1f} | {value / base[family]:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
