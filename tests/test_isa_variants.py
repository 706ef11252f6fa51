"""Every instruction-set variant of the C kernels against NumPy and through save -> load, not only
the one this CPU picks.

FASTOMKL_ISA caps the variant chosen at load time, so each run below exercises another compiled
path (AVX-512, AVX2 + FMA, SSE2) through the NumPy-comparison tests.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import VARIANT_LEVELS as LEVELS, cpu_isa_level

HERE = Path(__file__).resolve().parent
# The tests whose results depend on the compiled path: every comparison of a compiled kernel with
# NumPy (features, independent and shared draws, OGD experts, graph feedback, the packed VAW
# kernels, the meta-learners, the sine-cosine, the bandit and expansion kernels, the DSG blocks,
# AdaRaker's restarting experts and two-layer weights, the triangular solves),
# and the save -> load round trips that must continue bit-identically (a quantity recomputed on
# load in another summation order than learning's differs on some instruction sets only).
ISA_SENSITIVE = ["test_raker_vs_numpy.py", "test_features.py", "test_graph_core.py",
                 "test_vaw_core.py", "test_vaw_meta.py", "test_sincos.py",
                 "test_shared_draw.py", "test_float32.py", "test_bandit_core.py",
                 "test_dsg_core.py", "test_dsg_draws.py", "test_adaraker.py",
                 "test_triangular_solves.py", "test_cholesky_downdate.py",
                 "test_load_fuzz.py::test_round_trip_is_bit_identical",
                 "test_common.py::test_save_and_load_continue_bit_identically"]


@pytest.mark.timeout(1800)          # a whole pytest run inside (each of its tests has its own)
@pytest.mark.parametrize("isa", ["v4", "v3", "base"])
def test_variant_matches_numpy(isa):
    if LEVELS[isa] > cpu_isa_level():
        pytest.skip(f"this CPU has no {isa} instructions")
    env = {**os.environ, "FASTOMKL_ISA": isa}
    chosen = subprocess.run([sys.executable, "-c",
                             "from fastomkl._core.features.rff import isa_level; print(isa_level())"],
                            env=env, capture_output=True, text=True, check=True)
    assert int(chosen.stdout) == LEVELS[isa]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
                         + [str(HERE / name) for name in ISA_SENSITIVE],
                         env=env, capture_output=True, text=True, cwd=HERE.parent)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


@pytest.mark.parametrize("name, isa", [("avx2", "v3"), ("sse2", "base"), ("avx512", "v4")])
def test_the_caps_answer_to_the_instruction_sets_names(name, isa):
    """FASTOMKL_ISA takes the instruction sets' names as well as the variants': the same level."""
    def chosen(cap):
        code = "from fastomkl._core.features.rff import isa_level; print(isa_level())"
        return subprocess.run([sys.executable, "-c", code],
                              env={**os.environ, "FASTOMKL_ISA": cap}, capture_output=True,
                              text=True, check=True).stdout
    assert chosen(name) == chosen(isa)
    assert int(chosen(name)) == min(LEVELS[isa], cpu_isa_level())
