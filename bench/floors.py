"""The arithmetic floors of a VAW round (``_floors.pyx``), compiled on first use into bench/.floors.

Benchmark-only kernels stay out of the package: this builds them with the package's own C kernels
and flags (see setup.py) the first time a benchmark imports them.
"""
from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUILD = HERE / ".floors"


def _build() -> None:
    import numpy
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    extension = Extension(
        "_floors", [str(HERE / "_floors.pyx"), str(ROOT / "src_c" / "fastomkl_linalg.c")],
        include_dirs=[numpy.get_include(), str(ROOT / "src_c")],
        extra_compile_args=["-O3", "-ffast-math", "-fopenmp-simd"])
    dist = Distribution({"ext_modules": cythonize([extension], build_dir=str(BUILD),
                                                  compiler_directives={"language_level": 3,
                                                                       "boundscheck": False,
                                                                       "wraparound": False}),
                         "script_args": ["build_ext", "--build-lib", str(BUILD),
                                         "--build-temp", str(BUILD / "tmp")]})
    dist.parse_command_line()
    dist.run_commands()


def load():
    """The compiled module (blas_floor, kernel_floor)."""
    BUILD.mkdir(exist_ok=True)
    if str(BUILD) not in sys.path:
        sys.path.insert(0, str(BUILD))
    try:
        return importlib.import_module("_floors")
    except ImportError:
        cwd = os.getcwd()
        try:
            _build()
        finally:
            os.chdir(cwd)
        return importlib.import_module("_floors")
