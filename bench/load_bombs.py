"""Time and memory that `fastomkl.load` spends refusing small files that would allocate
gigabytes: compression bombs (zeros that deflate 1000x) within and beyond the default bound, one
re-signed under a guessed key, and headers whose parameters or input count imply a huge engine.

    python bench/load_bombs.py

Each file is refused (a line says LOADED otherwise); the time is one call's, the memory the peak
that NumPy and Python allocated during it (tracemalloc) and the growth of the process's peak
resident set.
"""
import io
import resource
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import fastomkl  # noqa: E402
from load_mutations import fitted, read, saved, write, zip_bomb  # noqa: E402


def cases():
    model, _ = fitted(fastomkl.Raker)
    data = saved(model)
    yield "2 GiB of zeros", zip_bomb(data, 2 ** 31), {}
    yield "256 MiB of zeros (within 1 GiB)", zip_bomb(data, 2 ** 28), {}
    signed = io.BytesIO()
    model.save(signed, key=b"secret")
    header, arrays = read(signed.getvalue())
    yield ("256 MiB re-signed, guessed key", zip_bomb(write(header, arrays, key=b"guess"), 2 ** 28),
           {"key": b"secret", "max_bytes": 2 ** 31})
    for field, value in (("n_components", 20_000_000), ("n_features_in", 10 ** 6),
                         ("n_features_in", 10 ** 7)):
        header, arrays = read(data)
        if field == "n_features_in":
            header[field] = value
        else:
            header["params"][field] = value
        yield f"Raker {field}={value:.0e}", write(header, arrays), {}
    for cls, field, value in ((fastomkl.VAW2, "n_components", 8000),
                              (fastomkl.ConcatVAW, "n_components", 1500),
                              (fastomkl.OMKLSFG, "kernels", 3000)):
        header, arrays = read(saved(fitted(cls)[0]))
        if field == "kernels":
            header["params"]["kernels"]["__kernels__"] *= value
        else:
            header["params"][field] = value
        yield f"{cls.__name__} {field} {value}", write(header, arrays), {}


def main():
    print("| file | size | time | peak allocated | peak RSS growth | outcome |\n"
          "|---|---|---|---|---|---|")
    for name, blob, kw in cases():
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        start = time.perf_counter()
        try:
            fastomkl.load(io.BytesIO(blob), **kw)
            outcome = "LOADED"
        except ValueError as exc:
            outcome = "refused: " + str(exc).split(": ", 1)[-1][:70]
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
        print(f"| {name} | {len(blob) / 1e6:.3f} MB | {elapsed * 1e3:.1f} ms | "
              f"{peak / 2 ** 20:.1f} MiB | +{grown:.0f} MB | {outcome} |", flush=True)


if __name__ == "__main__":
    main()
