"""Time and memory that `fastomkl.load` spends refusing two small files that would allocate
gigabytes: a 2 GiB array of zeros compressed to 2 MB, and a 3 KB header saying n_components=2e7.

    python bench/load_bombs.py
"""
import io
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import fastomkl  # noqa: E402
from load_mutations import fitted, read, saved, write, zip_bomb  # noqa: E402


def main():
    model, _ = fitted(fastomkl.Raker)
    data = saved(model)
    header, arrays = read(data)
    header["params"]["n_components"] = 20_000_000
    for name, blob in (("2 GiB zero array", zip_bomb(data, 2 ** 31)),
                       ("n_components=2e7", write(header, arrays))):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        try:
            fastomkl.load(io.BytesIO(blob))
            outcome = "LOADED"
        except ValueError as exc:
            outcome = "refused: " + str(exc).split(": ", 1)[-1][:80]
        elapsed = time.perf_counter() - start
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        print(f"{name:18s} file {len(blob) / 1e6:6.3f} MB  {elapsed * 1e3:6.1f} ms  peak RSS "
              f"+{grown:.0f} MB  {outcome}")


if __name__ == "__main__":
    main()
