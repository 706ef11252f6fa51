"""The reproductions end to end in their quick form: where the files go, that the tables and
figures are there (valid PNGs of the intended size), and that quick reports say they are quick."""
import os
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from fastomkl.cli import main

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
DPI = 100


def _snapshot(folder: Path) -> dict:
    return {p.name: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def png_size(path: Path) -> tuple:
    """(width, height) from the PNG signature and IHDR chunk, read without matplotlib."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def committed():
    before = _snapshot(RESULTS)
    yield
    assert _snapshot(RESULTS) == before, "a quick run touched bench/results"


def test_paper000_quick_writes_tables_and_figures_into_its_folder(tmp_path, committed, capsys):
    out = tmp_path / "r000"
    assert main(["reproduce", "000", "--quick", "--n-samples", "300", "--quiet",
                 "--out", str(out)]) == 0
    assert "quick run" in capsys.readouterr().err
    expected = {"paper000_table1_quick.md", "paper000_table2_quick.md"} | {
        f"paper000_fig{n}_quick.png" for n in (1, 2, 5, 6)}
    assert {p.name for p in out.iterdir()} == expected
    # four data sets: 2 x 2 panels of 5.2 x 3.6 inches; the graphs are single drawings
    sizes = {1: (7, 3.6), 2: (8, 4), 5: (10.4, 7.2), 6: (10.4, 7.2)}
    for n, (w, h) in sizes.items():
        assert png_size(out / f"paper000_fig{n}_quick.png") == (round(w * DPI), round(h * DPI))
    table1 = (out / "paper000_table1_quick.md").read_text()
    assert "quick run (2 draws, first 300 samples per data set)" in table1.splitlines()[0]
    assert "* 32 cells:" in table1 and "`--legacy` was not run (add `--with-legacy`)" in table1
    assert "bench/results/paper000_table1.md" in table1
    assert "quick run" in (out / "paper000_table2_quick.md").read_text().splitlines()[0]


def test_paper000_sweep_figures(tmp_path, committed):
    assert main(["reproduce", "000", "--table", "3", "4", "--draws", "2", "--n-samples", "150",
                 "--datasets", "airfoil", "--quiet", "--out", str(tmp_path)]) == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert {"paper000_table3_quick.md", "paper000_table4_quick.md", "paper000_fig3_quick.png",
            "paper000_fig4_quick.png"} <= names
    assert "paper000_fig5_quick.png" not in names        # Tables 1-2 were not run
    assert png_size(tmp_path / "paper000_fig3_quick.png") == (520, 360)   # one panel


def test_paper003_quick_into_a_new_folder_of_the_working_directory(tmp_path, monkeypatch,
                                                                     committed, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "003", "--quick", "--quiet"]) == 0
    assert "quick run" in capsys.readouterr().err
    (out,) = tmp_path.iterdir()
    assert out.name.startswith("fastomkl-reproduce-003-")
    assert {p.name for p in out.iterdir()} == {"paper003_table2.md", "paper003_table2.json",
                                               "paper003_fig1.png", "paper003_fig2.png"}
    for name in ("paper003_fig1.png", "paper003_fig2.png"):
        assert png_size(out / name) == (1040, 720)              # the four real data sets
    text = (out / "paper003_table2.md").read_text()
    assert "quick run (first 500 samples, seeds [0])" in text.splitlines()[0]
    assert "The notes below are about the full run" in text


def test_tables_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)           # import matplotlib fails
    assert main(["reproduce", "003", "--datasets", "Airfoil", "--methods", "VAW²",
                 "--samples", "100", "--quiet", "--out", str(tmp_path)]) == 0
    assert "fastomkl[plot]" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["paper003_table2.json", "paper003_table2.md"]


def test_unwritable_output_folder_fails_before_running(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit, match="cannot create the output folder"):
        main(["reproduce", "003", "--out", str(blocker / "sub")])


def test_figure1_curves_of_paper003():
    from fastomkl.reproduce.figures003 import plotted_mse
    rng = np.random.default_rng(0)
    pred, y = rng.uniform(size=50), rng.uniform(size=50)
    errors = (pred - y) ** 2
    # the notebooks: 1/(t+1) * MSE(pred[:t+1], y[:t+1]) for the 0-based round t
    notebook = [1 / (t + 1) * ((pred[:t + 1] - y[:t + 1]) ** 2).mean() for t in range(50)]
    running = [((pred[:t + 1] - y[:t + 1]) ** 2).mean() for t in range(50)]
    assert plotted_mse(errors, "paper") == pytest.approx(notebook, rel=1e-12)
    assert plotted_mse(errors) == pytest.approx(running, rel=1e-12)


def test_regret_comparator_is_the_best_kernel_ridge_fit():
    """Figure 6 of paper 000: scikit-learn's KernelRidge (what the released code used) over the
    same 76 kernels, in its own parameterisation, picks the same per-sample errors."""
    from sklearn.kernel_ridge import KernelRidge

    from fastomkl.kernels import Gaussian, paper000_dictionary
    from fastomkl.reproduce.figures000 import best_kernel_ridge_errors
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(60, 3)) / np.sqrt(3)
    y = np.sin(3 * X[:, 0]) * 0.5 + 0.5 + 0.05 * rng.standard_normal(60)
    fits = []
    for k in paper000_dictionary():
        gamma = 1 / (2 * k.sigma ** 2) if isinstance(k, Gaussian) else 1 / k.sigma
        model = KernelRidge(alpha=1e-3, kernel="rbf" if isinstance(k, Gaussian) else "laplacian",
                            gamma=gamma).fit(X, y)
        fits.append((model.predict(X) - y) ** 2)
    best = min(fits, key=np.sum)
    np.testing.assert_allclose(best_kernel_ridge_errors(X, y), best, rtol=1e-6, atol=1e-12)


def test_figure6_comparator_runs_blas_on_one_thread(monkeypatch):
    """Its small factorisations wait on OpenBLAS's threads (minutes on a loaded 2-core machine)."""
    import scipy.linalg
    from threadpoolctl import threadpool_info

    from fastomkl.reproduce.figures000 import best_kernel_ridge_errors
    seen, factor = [], scipy.linalg.cho_factor

    def recording(*args, **kwargs):
        seen.append({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
        return factor(*args, **kwargs)
    monkeypatch.setattr(scipy.linalg, "cho_factor", recording)
    rng = np.random.default_rng(0)
    best_kernel_ridge_errors(rng.uniform(size=(40, 3)), rng.uniform(size=40))
    assert len(seen) == 76 and all(threads == {1} for threads in seen)


# Every committed full run of a reproduction names the command and the commit of the code that
# made it, so its numbers can be traced to code (a quick run is compared cell by cell where one
# is cheap: see the papers' own test files).
# every results file of a reproduction: the full runs, paper 001's runs in subfolders and paper
# 000's quick runs beside its figures
COMMITTED_RUNS = sorted(RESULTS.rglob("paper00*.md"))
COMMIT = r"at commit `([0-9a-f]{40})`"


@pytest.mark.parametrize("path", COMMITTED_RUNS, ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_committed_results_record_their_command_and_commit(path):
    import re
    text = path.read_text(encoding="utf-8")
    assert re.search(r"Command: `(fastomkl reproduce 00\d|python bench/paper00\d\w*\.py)[^`]*`",
                     text), path.name
    found = re.search(COMMIT, text)
    assert found and "uncommitted changes" not in text[found.end():found.end() + 30], path.name


@pytest.mark.skipif(not (RESULTS.parents[1] / ".git").exists(),
                    reason="needs the git history the results were committed in (an sdist has "
                           "none)")
@pytest.mark.parametrize("path", COMMITTED_RUNS, ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_committed_results_were_made_by_an_ancestor_of_this_checkout(path):
    import re
    import subprocess
    commit = re.search(COMMIT, path.read_text(encoding="utf-8")).group(1)
    ancestor = subprocess.run(["git", "-C", str(RESULTS), "merge-base", "--is-ancestor", commit,
                               "HEAD"], capture_output=True, timeout=10)
    assert ancestor.returncode == 0, f"{path.name}: {commit} is not an ancestor of HEAD"


def test_paper000_quick_figures_say_so_on_the_plot(tmp_path, monkeypatch):
    """A quick figure is often seen without its table: its title names the run's size, and the
    paper's points drawn beside it are labelled as the full-data values they are."""
    from fastomkl.reproduce import figures000
    drawn = {}

    def record(fig, path):
        legends = [t.get_text() for ax in fig.axes if ax.get_legend()
                   for t in ax.get_legend().get_texts()]
        titles = [fig._suptitle.get_text()] if fig._suptitle else []
        drawn[os.path.basename(path)] = (titles + [ax.get_title() for ax in fig.axes], legends)
        import matplotlib.pyplot as plt
        plt.close(fig)
    monkeypatch.setattr(figures000, "save_figure", record)
    assert main(["reproduce", "000", "--table", "3", "--draws", "2", "--n-samples", "80",
                 "--datasets", "airfoil", "--quiet", "--out", str(tmp_path)]) == 0
    assert set(drawn) == {f"paper000_fig{n}_quick.png" for n in (1, 2, 3, 4)}
    for name, (titles, _) in drawn.items():
        assert any("quick run" in t and "first 80 samples per data set" in t for t in titles), name
    for n in (3, 4):
        titles, legends = drawn[f"paper000_fig{n}_quick.png"]
        assert any("the paper's points are full-data runs" in t for t in titles)
        assert "OMKL-GF: paper (full data)" in legends and "OMKL-GF: ours" in legends


@pytest.mark.parametrize("path", sorted(RESULTS.glob("paper000_table*.md"))
                         + sorted(RESULTS.glob("figures/paper000_table*_quick.md")),
                         ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_committed_paper000_results_open_with_their_command_and_mode(path):
    """Paper 000's files name their mode and command in their header line (the commit is checked
    for every results file above); the full runs are in bench/results, the figures' quick runs
    beside the figures, labelled so."""
    lines = path.read_text().splitlines()
    header = lines[2]
    assert "Command: `fastomkl reproduce 000 " in header
    assert ("quick run" in lines[0]) == (path.parent.name == "figures")
    assert header.startswith("Mode: released-code switches") == path.stem.endswith("_legacy")
