"""The DSG draws (src_c/fastomkl_draws.c): the documented generator reproduced in NumPy bit for bit,
accurate transforms, the same bits under every instruction-set variant, the right distributions."""
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from fastomkl._core.features import dsg as core
from helpers import cpu_isa_level

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x):
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def key(seed, stream, t, what):
    return splitmix64(splitmix64(splitmix64(splitmix64(seed) ^ np.uint64(stream))
                                 ^ np.uint64(t)) ^ np.uint64(what))


def bits52(k, counters):
    with np.errstate(over="ignore"):
        return splitmix64(k + np.asarray(counters, dtype=np.uint64)
                          * np.uint64(0xD1B54A32D192ED03)) >> np.uint64(12)


def open_uniform(k):
    return (k.astype(np.float64) + 0.5) * 2.0 ** -52


def log_series(x):
    """The generator's logarithm, operation for operation (each NumPy operation rounds once)."""
    m, e = np.frexp(x)                          # x = m 2^e, m in [1/2, 1)
    doubled = m <= np.sqrt(0.5)                 # m into (sqrt(1/2), sqrt(2)]
    m = np.where(doubled, 2 * m, m)
    e = (e - doubled).astype(np.float64)
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    p = 1.0 / 19.0 + z * (1.0 / 21.0)
    for odd in range(17, 1, -2):
        p = 1.0 / odd + z * p
    return e * 6.93147180369123816490e-01 + (2.0 * s + (e * 1.90821492927058770002e-10
                                                        + 2.0 * s * (z * p)))


def sincos_turns(j):
    """cos and sin of 2 pi j 2^-54, operation for operation."""
    nearest = j + np.uint64(1 << 51)
    q = (nearest >> np.uint64(52)) & np.uint64(3)
    rest = (nearest & np.uint64((1 << 52) - 1)).astype(np.float64)
    a = (rest - 2.0 ** 51) * (6.283185307179586476925 / 18014398509481984.0)
    z = a * a
    factorial = [float(np.prod(np.arange(1, n + 1, dtype=np.float64))) for n in range(19)]
    ps = -1.0 / factorial[15] + z * (1.0 / factorial[17])
    for n in range(13, 1, -2):
        ps = (-1.0) ** ((n - 1) // 2) / factorial[n] + z * ps
    pc = 1.0 / factorial[16] + z * (-1.0 / factorial[18])
    for n in range(14, 0, -2):
        pc = (-1.0) ** (n // 2) / factorial[n] + z * pc
    sin_a, cos_a = a + a * (z * ps), 1.0 + z * pc
    odd = (q & np.uint64(1)) == 1
    c, s = np.where(odd, sin_a, cos_a), np.where(odd, cos_a, sin_a)
    c = np.where(((q + np.uint64(1)) & np.uint64(2)) != 0, -c, c)
    s = np.where((q & np.uint64(2)) != 0, -s, s)
    return c, s


def reference_block(kernel, df, bandwidth, seed, stream, t, d, r):
    """The generator as documented in src_c/fastomkl_draws.h, in NumPy."""
    n = d * r
    kw = key(seed, stream, t, 0)
    b = 6.283185307179586476925 * open_uniform(bits52(key(seed, stream, t, 1), np.arange(r)))
    inv = 1.0 / bandwidth
    if kernel == "laplacian":                   # Cauchy frequencies
        c, s = sincos_turns(np.uint64(2) * bits52(kw, np.arange(n)) + np.uint64(1))
        W = -inv * c / s
    elif kernel == "cauchy":                    # Laplace frequencies
        u = open_uniform(bits52(kw, np.arange(n)))
        low = u < 0.5
        v = log_series(np.where(low, 2.0 * u, 2.0 - 2.0 * u))
        W = inv * np.where(low, v, -v)
    else:
        W = gaussians(kw, n, inv)
        if kernel == "matern":
            g = gaussians(key(seed, stream, t, 2), r * df, 1.0).reshape(r, df)
            W = (W.reshape(d, r) * np.sqrt(df / (g * g).sum(axis=1))).ravel()
    return W.reshape(d, r), b


def gaussians(k, n, scale):
    half = (n + 1) // 2
    pairs = 2 * np.arange(half, dtype=np.uint64)
    radius = np.sqrt(-2.0 * log_series(open_uniform(bits52(k, pairs)))) * scale
    c, s = sincos_turns(bits52(k, pairs + np.uint64(1)) << np.uint64(2))
    return np.concatenate([radius * c, (radius * s)[:n - half]])


KERNELS = [("gaussian", 0), ("laplacian", 0), ("cauchy", 0), ("matern", 3)]


@pytest.mark.parametrize("kernel, df", KERNELS)
@pytest.mark.parametrize("d, r", [(1, 1), (3, 5), (7, 33)])
def test_blocks_are_the_documented_generator_bit_for_bit(kernel, df, d, r):
    for seed, stream, t in [(0, 0, 0), (12345, 3, 77), (2 ** 63 + 5, 2, 10 ** 6)]:
        W, b = core.generate_block(kernel, df, 0.7, seed, stream, t, d, r)
        W_ref, b_ref = reference_block(kernel, df, 0.7, seed, stream, t, d, r)
        np.testing.assert_array_equal(W, W_ref)
        np.testing.assert_array_equal(b, b_ref)


def test_the_transforms_are_accurate_to_a_few_ulp():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(2.0 ** -53, 2.0, 200_000), 2.0 ** -np.arange(53.0),
                        [np.sqrt(2.0), np.nextafter(np.sqrt(2.0), 0), np.sqrt(0.5), 1.0, 2.0]])
    x = x[x != 1.0]
    assert np.max(np.abs(log_series(x) - np.log(x)) / np.spacing(np.abs(np.log(x)))) <= 4
    assert log_series(np.array([1.0]))[0] == 0.0
    j = rng.integers(0, 2 ** 54, 200_000, dtype=np.uint64)
    c, s = sincos_turns(j)
    assert np.max(np.abs(c * c + s * s - 1)) < 4e-16
    # Against libm on the angle rounded to double: the rounding alone costs up to 2 pi 2^-53.
    angle = 2 * np.pi * (j.astype(np.float64) * 2.0 ** -54)
    assert np.max(np.abs(c - np.cos(angle))) < 1.5e-15
    assert np.max(np.abs(s - np.sin(angle))) < 1.5e-15
    # Where long double has a 64-bit significand (x86-64), against the exact angle: a few ulp.
    if np.finfo(np.longdouble).nmant >= 63:
        exact = np.longdouble("6.28318530717958647692528676655901") * np.longdouble(2.0) ** -54 \
            * j.astype(np.longdouble)
        assert np.max(np.abs(c - np.cos(exact))) < 2.5e-16
        assert np.max(np.abs(s - np.sin(exact))) < 2.5e-16


def test_gaussian_block_is_box_muller_of_its_uniforms():
    """Against NumPy's libm: the same uniforms through np.log, np.cos, np.sin."""
    d, r, seed = 4, 25, 99
    W, _ = core.generate_block("gaussian", 0, 1.0, seed, 0, 5, d, r)
    kw = key(seed, 0, 5, 0)
    half = (d * r + 1) // 2
    pairs = 2 * np.arange(half, dtype=np.uint64)
    radius = np.sqrt(-2 * np.log(open_uniform(bits52(kw, pairs))))
    angle = 2 * np.pi * open_uniform(bits52(kw, pairs + np.uint64(1))) - np.pi * 2.0 ** -52
    expected = np.concatenate([radius * np.cos(angle), radius * np.sin(angle)])[:d * r]
    np.testing.assert_allclose(W.ravel(), expected, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("kernel, df, distribution", [
    ("gaussian", 0, stats.norm), ("laplacian", 0, stats.cauchy), ("cauchy", 0, stats.laplace),
    ("matern", 5, stats.t(5))])
def test_draws_follow_their_distribution(kernel, df, distribution):
    W, b = core.generate_block(kernel, df, 1.0, 7, 0, 1, 40, 500)
    # a Matern column shares one scale, so only the entries of one row are independent
    sample = W[0] if kernel == "matern" else W.ravel()
    assert stats.kstest(sample, distribution.cdf).pvalue > 1e-3
    assert stats.kstest(b / (2 * np.pi), "uniform").pvalue > 1e-3


DIGEST = """
import hashlib
from fastomkl._core.features import dsg as dsg
digest = hashlib.sha256()
for kernel, df in [("gaussian", 0), ("laplacian", 0), ("cauchy", 0), ("matern", 3)]:
    for t in range(3):
        for array in dsg.generate_block(kernel, df, 0.9, 42, 1, t, 13, 37):
            digest.update(array.tobytes())
print(digest.hexdigest())
"""


def test_every_instruction_set_draws_the_same_bits():
    digests = {}
    for isa, level in [("v4", 4), ("v3", 3), ("base", 2)]:
        if level <= cpu_isa_level():
            run = subprocess.run([sys.executable, "-c", DIGEST], capture_output=True, text=True,
                                 env={**os.environ, "FASTOMKL_ISA": isa}, check=True)
            digests[isa] = run.stdout.strip()
    assert len(digests) >= 2 and len(set(digests.values())) == 1, digests
