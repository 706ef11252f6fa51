"""The packed VAW kernels in every instruction-set variant (FASTOMKL_ISA caps the one chosen at load
time), through the closed-form and meta-learner tests."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fastomkl._core.features import isa_level

HERE = Path(__file__).resolve().parent
LEVELS = {"v4": 4, "v3": 3, "base": 2}


@pytest.mark.parametrize("isa", ["v4", "v3", "base"])
def test_vaw_variant_matches_numpy(isa):
    if LEVELS[isa] > isa_level():
        pytest.skip(f"this CPU has no {isa} instructions")
    env = {**os.environ, "FASTOMKL_ISA": isa}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(HERE / "test_vaw_core.py"), str(HERE / "test_vaw_meta.py")],
                         env=env, capture_output=True, text=True, cwd=HERE.parent)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout
