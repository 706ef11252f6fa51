"""Copy the data sets the package ships from a folder of ``.npz`` files into ``fastomkl/data``.

    python bench/pack_data.py /path/to/data            # the folder holding MANIFEST.json

Every file is checked against the folder's ``MANIFEST.json`` (sha256, arrays, rows and columns)
before it is written.  Files whose members are already deflate-compressed are copied byte for byte,
so the package holds exactly the arrays the manifest describes; any other file is rewritten with
``numpy.savez_compressed`` (same arrays, same values).  ``fastomkl/data/README.md`` lists each
file's source, licence and citation; this script does not edit it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TARGET = HERE.parent / "fastomkl" / "data"
# Every data set a documented command reads: the CLI's `run --dataset`, the reproductions of papers
# 000-004 and the benchmarks (bench/defaults.py, bench/bench_dsg.py).
SHIPPED = ("a9a", "ailerons", "airfoil", "bank32nh", "bias_correction", "casp", "concrete",
           "cpusmall", "elevators", "istanbul_stock", "magic04", "naval", "phishing")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pack(source: Path, name: str, entry: dict) -> str:
    path = source / f"{name}.npz"
    if sha256(path) != entry["sha256"]:
        raise ValueError(f"{path}: sha256 differs from MANIFEST.json")
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    if sorted(arrays) != sorted(entry["arrays"]):
        raise ValueError(f"{path}: arrays {sorted(arrays)}, MANIFEST.json says {entry['arrays']}")
    if arrays["X"].shape != (entry["n_rows"], entry["n_features"]):
        raise ValueError(f"{path}: X is {arrays['X'].shape}, MANIFEST.json says "
                         f"{(entry['n_rows'], entry['n_features'])}")
    with zipfile.ZipFile(path) as archive:
        deflated = all(i.compress_type == zipfile.ZIP_DEFLATED for i in archive.infolist())
    out = TARGET / f"{name}.npz"
    if deflated:
        shutil.copyfile(path, out)
        how = "copied"
    else:
        np.savez_compressed(out, **arrays)
        how = "compressed"
    return f"{name:16s} {how:10s} {out.stat().st_size / 1e6:6.2f} MB"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="folder of the .npz files and MANIFEST.json")
    args = parser.parse_args(argv)
    manifest = json.loads((args.source / "MANIFEST.json").read_text())
    entries = {e["name"]: e for e in manifest["datasets"]}
    missing = [n for n in SHIPPED if n not in entries]
    if missing:
        raise SystemExit(f"MANIFEST.json lists no {missing}")
    for name in SHIPPED:
        print(pack(args.source, name, entries[name]))
    total = sum((TARGET / f"{n}.npz").stat().st_size for n in SHIPPED)
    print(f"total            {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
