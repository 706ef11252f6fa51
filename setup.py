"""Build the compiled core.

Every ``fastomkl/_core/*.pyx`` becomes an extension module.  The plain C kernels in ``src_c/`` are
compiled once into object files with their own flags and linked into every extension: fast-math and
OpenMP-SIMD apply to those kernels only (so NaN checks elsewhere keep their meaning), and every
kernel is compiled once per instruction set (AVX-512, AVX2 + FMA, SSE2; ``src_c/fastomkl_dispatch.h``),
the widest the CPU has chosen at load time, so one build runs on any x86-64 machine and
``FASTOMKL_ISA`` can run any narrower variant for tests.

Binaries are built without debugging information (``-g0``) and linked stripped (``-s``), which
keeps the wheel small.  The generated C files are build products only; the sdist carries the
``.pyx``/``.pxd`` sources and ``src_c`` (MANIFEST.in), and the wheel neither.
"""
import glob
import os
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
C_KERNELS = sorted(glob.glob(os.path.join("src_c", "*.c")))
# Flags for src_c only.  -ffast-math is never passed at link time: GCC would then link
# crtfastmath.o, which switches the whole process to flush-to-zero.
KERNEL_FLAGS = ["-O3", "-g0", "-ffast-math", "-fopenmp-simd", "-fno-semantic-interposition"]
# Files whose results must be the same bits on every CPU: IEEE rounding of every operation, no
# reassociation, no fused multiply-add (sqrt needs no errno, so it stays one instruction).
EXACT_KERNELS = {os.path.join("src_c", "fastomkl_draws.c")}
EXACT_FLAGS = ["-O3", "-g0", "-ffp-contract=off", "-fno-math-errno",
               "-fno-semantic-interposition"]
# -g0 after Python's own CFLAGS (which carry -g on most builds of CPython) so it wins; -s strips
# the symbol tables the linker would otherwise keep.
MODULE_FLAGS = ["-O3", "-g0"]
LINK_FLAGS = ["-s"] if sys.platform.startswith("linux") else []
LIBRARIES = ["mvec", "m"] if sys.platform.startswith("linux") else []


CYTHON_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": False,
}


class BuildWithKernels(build_ext):
    """Compile ``src_c/*.c`` with kernel flags, then link the objects into every extension."""

    def finalize_options(self):
        super().finalize_options()
        # setuptools compiles one extension at a time unless told (-j): the 26 modules take
        # 4.5 minutes on one core of a 2-core machine and 2.6 on both (pip install -e .)
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        objects = []
        for sources, flags in ((sorted(set(C_KERNELS) - EXACT_KERNELS), KERNEL_FLAGS),
                               (sorted(EXACT_KERNELS), EXACT_FLAGS)):
            objects += self.compiler.compile(sources, output_dir=self.build_temp,
                                             include_dirs=["src_c"], extra_postargs=flags)
        for ext in self.extensions:
            ext.extra_objects = list(objects)
        super().build_extensions()


SOURCES = sorted(glob.glob(os.path.join("fastomkl", "_core", "**", "*.pyx"), recursive=True))
if not SOURCES or not C_KERNELS:
    # An sdist or checkout without the Cython sources would otherwise build a wheel with no
    # compiled core at all, which installs and then fails at the first model.
    sys.exit(f"setup.py: no fastomkl/_core/**/*.pyx or src_c/*.c found under {HERE}: the compiled "
             "core cannot be built (an incomplete source tree or sdist; see MANIFEST.in)")

extensions = [
    Extension(
        os.path.splitext(path)[0].replace(os.sep, "."),
        [path],
        include_dirs=[numpy.get_include(), "src_c"],
        extra_compile_args=MODULE_FLAGS,
        extra_link_args=LINK_FLAGS,
        depends=C_KERNELS + sorted(glob.glob(os.path.join("src_c", "*.h"))),   # relink on change
        libraries=LIBRARIES,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for path in SOURCES
]

setup(
    ext_modules=cythonize(extensions, compiler_directives=CYTHON_DIRECTIVES),
    cmdclass={"build_ext": BuildWithKernels},
)
