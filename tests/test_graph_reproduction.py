"""Paper 000's published numbers: quick checks by default, the full tables behind -m slow."""
import numpy as np
import pytest

from fastomkl.reproduce import paper000
from fastomkl.reproduce.paper000 import TABLE1, load_paper_dataset, main, run_one


@pytest.fixture(scope="module")
def airfoil():
    return load_paper_dataset("airfoil")


@pytest.mark.parametrize("algorithm", ["OMKR", "RBF-1", "POLY-2"])
def test_deterministic_baselines_reproduce_airfoil(algorithm, airfoil):
    X, y = airfoil
    mse = run_one(algorithm, "airfoil", X, y, 0, legacy=False)[0]
    assert mse * 1e3 == pytest.approx(TABLE1[algorithm][0], abs=0.02)


@pytest.mark.parametrize("algorithm,legacy,tol", [
    ("Raker", False, 0.3), ("OMKL-GF", False, 1.5), ("RFOMKR", True, 1.0),
    ("OMKL-SFG", True, 1.5), ("OMKL-SFG-R", True, 1.5),
])
def test_random_feature_models_reproduce_airfoil(algorithm, legacy, tol, airfoil):
    X, y = airfoil
    mse = np.mean([run_one(algorithm, "airfoil", X, y, seed, legacy)[0] for seed in range(3)])
    assert mse * 1e3 == pytest.approx(TABLE1[algorithm][0], abs=tol)


def test_paper_mode_rfomkr_is_normalised(airfoil):
    X, y = airfoil
    mse = run_one("RFOMKR", "airfoil", X, y, 0, legacy=False)[0]
    assert mse * 1e3 < 40           # the published 350 is the un-normalised released code


def test_bias_preprocessing():
    X, y = load_paper_dataset("bias_correction")
    assert X.shape == (7750, 21) and np.isfinite(X).all() and np.isfinite(y).all()
    assert y.min() == 0.0 and y.max() == 1.0
    assert np.linalg.norm(X, axis=1).max() == pytest.approx(1.0)
    X_legacy, y_legacy = load_paper_dataset("bias_correction", legacy=True)
    assert X_legacy.shape == (7752, 20)          # the CSV's summary rows: minima, then maxima
    assert (X_legacy[-2] <= X_legacy[:-2]).all() and y_legacy[-2:].tolist() == [0.0, 1.0]
    assert load_paper_dataset("naval")[0].shape == (11934, 15)


def test_quick_command_writes_tables(tmp_path):
    assert main(["--table", "1", "--table", "2", "--quick", "--draws", "1", "--n-samples", "200",
                 "--datasets", "concrete", "--out", str(tmp_path)]) == 0
    t1 = (tmp_path / "paper000_table1_quick.md").read_text()
    assert "| Concrete | OMKL-GF | 34.45 |" in t1 and "| Airfoil |" not in t1   # cells run only
    assert "* 8 cells:" in t1 and "`--legacy` was not run (add `--with-legacy`)" in t1
    assert "Speed-up over Raker" in (tmp_path / "paper000_table2_quick.md").read_text()
    assert main(["--table", "4", "--legacy", "--quick", "--draws", "1", "--n-samples", "100",
                 "--datasets", "airfoil", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "paper000_table4_legacy_quick.md").exists()


@pytest.mark.slow
@pytest.mark.parametrize("dataset", paper000.DATASETS)
def test_legacy_table1_within_two_sigma(dataset):
    X, y = load_paper_dataset(dataset, legacy=True)
    j = paper000.DATASETS.index(dataset)
    for algorithm in paper000.ALGORITHMS:
        draws = 1 if algorithm in paper000.DETERMINISTIC else 10
        mse = np.array([run_one(algorithm, dataset, X, y, s, True)[0] for s in range(draws)]) * 1e3
        spread = max(2 * mse.std(), 0.1 if draws == 1 else 0.3)
        assert abs(mse.mean() - TABLE1[algorithm][j]) <= spread + 0.02 * TABLE1[algorithm][j], \
            (algorithm, mse.mean(), TABLE1[algorithm][j])


# --- verdicts and the computed sentences ----------------------------------------------------------
def test_verdicts_and_summary_from_hand_made_cells():
    ours = {(1, "airfoil", "OMKR", 10): [32.684],                  # exact to the printed digits
            (1, "airfoil", "RBF-1", 10): [33.19],                  # 0.02 off with no spread
            (1, "airfoil", "OMKL-SFG", 10): [40.0, 40.2],
            (4, "concrete", "OMKL-SFG", 20): [38.6, 38.8]}
    legacy = {(1, "airfoil", "OMKR", 10): [32.684], (1, "airfoil", "RBF-1", 10): [33.19],
              (1, "airfoil", "OMKL-SFG", 10): [32.4, 32.6],       # within: traced
              (4, "concrete", "OMKL-SFG", 20): [36.0, 36.2]}      # outside too: untraced
    table = paper000.cells(ours, legacy)
    assert [c["verdict"] for c in table] == ["within", "untraced", "traced", "untraced"]
    sfg = table[2]
    assert sfg["difference"] == pytest.approx(40.1 - 32.49)
    assert sfg["bound"] == pytest.approx(2 * np.hypot(paper000.PAPER_SD, np.std([40, 40.2],
                                                                                ddof=1)))
    assert sfg["traced_by"] == ["--legacy"]
    lines = paper000.summary_lines(table, legacy_run=True, legacy_mode=False)
    assert lines[0] == ("* 4 cells: **1 within** the spread, **1 traced** to a switch (outside, "
                        "and within with it), **2 untraced**.")
    assert "within the spread in 2 of 4; it traces 1 cell(s) outside without it: Table 1 " \
           "Airfoil OMKL-SFG." in lines[1]
    assert lines[2].startswith("* Untraced: Table 1 Airfoil RBF-1 (ours 33.19 ± 0.00 vs 33.17, "
                               "difference +0.02, bound 0.01; `--legacy` 33.19")
    assert "Table 4 Concrete M = 20 (ours 38.70 ± 0.14 vs 32.59, difference +6.11" in lines[2]
    assert len(lines) == 3                  # no cell is within through a huge spread
    scattered = paper000.cells({(3, "bias_correction", "OMKL-GF", 1): [12.0, 300.0, 9.0]})
    assert scattered[0]["verdict"] == "within"
    assert paper000.summary_lines(scattered, False, False)[-1].startswith(
        "* Within only through a spread larger than the paper's value itself (some draws far "
        "off): Table 3 Bias M = 1 (ours 107.00 ± 167.15 vs 12.56")
    alone = paper000.cells(ours)            # without the legacy run nothing is traced
    assert [c["verdict"] for c in alone] == ["within", "untraced", "untraced", "untraced"]
    assert "`--legacy` was not run" in paper000.summary_lines(alone, False, False)[1]


def test_gf_below_sentence_names_its_exceptions():
    gf = {"naval": [9.0, 4.7, 5.1, 5.91, 6.07], "airfoil": [50.0, 25.0, 25.5, 26.5, 26.8]}
    sfg = {"naval": [9.5, 10.1, 6.6, 5.46, 5.03], "airfoil": [60.0, 47.0, 40.0, 36.0, 33.0]}
    sentence = paper000.gf_below({"OMKL-GF": gf, "OMKL-SFG": sfg}, "Here")
    assert sentence == ("Here, OMKL-GF's mean MSE (×10⁻³) is below OMKL-SFG's in 8 of 10 (data "
                        "set, M) pairs, not on Naval at M = 15 (5.91 against 5.46), Naval at "
                        "M = 20 (6.07 against 5.03).")
    sfg_r = {d: [v + 1 for v in values] for d, values in gf.items()}
    assert paper000.gf_below({"OMKL-GF": gf, "OMKL-SFG-R": sfg_r}, "Here").endswith(
        "below OMKL-SFG-R's in 10 of 10 (data set, M) pairs, every one.")
    tie = {"naval": list(gf["naval"])}
    assert "0 of 5" in paper000.gf_below({"OMKL-GF": {"naval": gf["naval"]},
                                          "OMKL-SFG": tie}, "Here")


def _rows(text: str) -> list[list[str]]:
    """The cells of a results file's MSE table (the rows after its `| data set |` header)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| data set |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_quick_run_labels_itself_and_its_sentences_agree_with_its_tables(tmp_path):
    assert main(["--table", "3", "4", "--with-legacy", "--draws", "2", "--n-samples", "120",
                 "--datasets", "airfoil", "concrete", "--no-figures", "--quiet",
                 "--out", str(tmp_path)]) == 0
    means, texts = {}, {}
    for table, algorithm in ((3, "OMKL-GF"), (4, "OMKL-SFG")):
        text = (tmp_path / f"paper000_table{table}_quick.md").read_text()
        assert "quick run (2 draws, first 120 samples per data set)" in text.splitlines()[0]
        rows = _rows(text)
        assert len(rows) == 10
        for row in rows:
            dataset = {v: k for k, v in paper000.LABELS.items()}[row[0]]
            means.setdefault(algorithm, {}).setdefault(dataset, []).append(
                float(row[3].split(" ± ")[0]))
        verdicts = [row[9] for row in rows]
        counts = (sum(v == "within" for v in verdicts), sum(v.startswith("outside; traced")
                                                             for v in verdicts),
                  sum(v == "outside, untraced" for v in verdicts))
        assert (f"* 10 cells: **{counts[0]} within** the spread, **{counts[1]} traced** to a "
                f"switch (outside, and within with it), **{counts[2]} untraced**.") in text
        texts[table] = text
    sentence = paper000.gf_below(means, "In this run")
    assert sentence in texts[3] and sentence in texts[4]
    legacy = (tmp_path / "paper000_table4_legacy_quick.md").read_text()
    assert {row[-3] for row in _rows(legacy)} <= {"within", "outside, untraced"}
