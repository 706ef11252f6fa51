"""What ran a benchmark: the CPU, its logical CPUs, the kernels' instruction-set variant chosen at
load time (FASTOMKL_ISA caps it), Python, NumPy and the load average, for every results file; and
``write_report``, which ends a results file with the run's wall time."""
from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import numpy as np

VARIANTS = {4: "AVX-512 (x86-64-v4)", 3: "AVX2 + FMA (x86-64-v3)", 2: "SSE2 (baseline)"}


def describe() -> str:
    from fastomkl._core.features.rff import isa_level
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        out = ""
    cpu = next((line.split(":", 1)[1].strip() for line in out.splitlines()
                if line.startswith("Model name")), platform.processor() or "unknown CPU")
    cap = os.environ.get("FASTOMKL_ISA")
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    return (f"{cpu}, {os.cpu_count()} logical CPUs, kernels' variant: {VARIANTS[isa_level()]}"
            f"{f' (FASTOMKL_ISA={cap})' if cap else ''}, Python {platform.python_version()}, "
            f"NumPy {np.__version__}, load average {load}")


def write_report(lines: list, out, seconds: float) -> None:
    """A results file: `lines`, then the run's wall time; says where it went."""
    Path(out).write_text("\n".join(lines + ["", f"{seconds:.0f} s."]) + "\n")
    print("wrote", out)
