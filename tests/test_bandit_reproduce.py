"""``fastomkl reproduce 001`` end to end on small synthetic stand-ins for the shared data sets."""
import json
import os
from pathlib import Path

import numpy as np
import pytest

from fastomkl.kernels import paper001_dictionary
from fastomkl.reproduce import paper001
from helpers import ran_on_variant


def test_reproduce_writes_every_requested_table(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 5, (400, 6))
    np.savez(tmp_path / "phishing.npz", X=X, y=np.where(X[:, 0] > 1, 1.0, -1.0))
    np.savez(tmp_path / "elevators.npz", X=X, y=10 + X[:, 1] ** 2)
    out = tmp_path / "out"
    assert paper001.main(["--data", str(tmp_path), "--reps", "2", "--samples", "150",
                          "--tables", "2", "5", "6", "7", "--datasets", "phishing", "elevators",
                          "--legacy-tem1", "--quiet", "--out", str(out)]) == 0
    text = (out / "paper001_tables.md").read_text()
    assert "quick run (2 repetition(s), 150 samples)" in text.splitlines()[0]
    assert (out / "paper001_tables.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for heading in ("Table 2: logistic loss, phishing", "Table 5: logistic loss, phishing",
                    "Table 6: squared loss, elevators", "Table 7: absolute loss, elevators"):
        assert heading in text
    saved = json.loads((out / "paper001_tables.json").read_text())
    assert saved["run"]["switches"] == ["--legacy-tem1"] and saved["run"]["scaling"] == "released"
    saved = saved["results"]
    assert len(saved) == 4
    for per_algorithm in saved.values():
        for values in per_algorithm.values():
            assert len(values) == 2 and all(np.isfinite(v).all() for v in values)
    phishing = saved["5|logistic|phishing"]
    assert set(phishing) == {"RF-OKS", "LKMBooks", "Raker", "RF-IOKS", "RF-OKS++",
                             "RF-OKS++ (tem1)"}
    assert phishing["RF-OKS++ (tem1)"] != phishing["RF-OKS++"]
    assert "RF-OKS++ (tem1)" in text and "OKS++ (tem1)" in saved["2|logistic|phishing"]
    assert all(0 <= v[0] <= 100 for vals in phishing.values() for v in vals)


def test_preprocessing_scales_features_and_targets(tmp_path):
    X = np.array([[0.0, 5.0, 1.0], [2.0, 5.0, 3.0], [4.0, 5.0, 2.0]])
    np.savez(tmp_path / "bank32nh.npz", X=X, y=np.array([3.0, 1.0, 2.0]))
    Xs, ys = paper001.load(str(tmp_path), "bank32nh")
    np.testing.assert_allclose(Xs, [[-1, 0, -1], [0, 0, 1], [1, 0, 0]])
    np.testing.assert_allclose(ys, [1.0, 0.0, 0.5])


def test_registered_and_reachable_from_the_command_line(tmp_path):
    from fastomkl.cli import main
    from fastomkl.reproduce import PAPERS
    assert "001" in PAPERS
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (120, 3))
    np.savez(tmp_path / "bank32nh.npz", X=X, y=X[:, 0] ** 2)
    out = tmp_path / "run"
    assert main(["reproduce", "1", "--data", str(tmp_path), "--quick", "--tables", "3",
                 "--datasets", "bank32nh", "--no-figures", "--quiet", "--out", str(out)]) == 0
    text = (out / "paper001_tables.md").read_text()
    assert "Table 3: squared loss, bank32nh" in text and "quick run" in text
    assert not (out / "paper001_tables.png").exists()


# --- preprocessing per data set ------------------------------------------------------------------

def test_preprocessing_per_data_set_as_the_released_code_reads_it(tmp_path):
    """"released": a9a and phishing unchanged, magic04 in [0, 1], regression sets in [-1, 1];
    "minmax": every feature in [-1, 1]."""
    X = np.array([[0.0, 5.0, 1.0], [2.0, 5.0, 3.0], [4.0, 5.0, 2.0]])
    labels = np.array([1.0, -1.0, 1.0])
    for name in ("a9a", "phishing", "magic04"):
        np.savez(tmp_path / f"{name}.npz", X=X, y=labels)
    np.savez(tmp_path / "elevators.npz", X=X, y=np.array([3.0, 1.0, 2.0]))
    unit = [[0, 0.5, 0], [0.5, 0.5, 1], [1, 0.5, 0.5]]      # by hand: (x - min) / (max - min)
    pm1 = [[-1, 0, -1], [0, 0, 1], [1, 0, 0]]
    for name in ("a9a", "phishing"):
        Xs, ys = paper001.load(str(tmp_path), name)
        np.testing.assert_array_equal(Xs, X)
        np.testing.assert_array_equal(ys, labels)
    np.testing.assert_allclose(paper001.load(str(tmp_path), "magic04")[0], unit)
    Xs, ys = paper001.load(str(tmp_path), "elevators")
    np.testing.assert_allclose(Xs, pm1)
    np.testing.assert_allclose(ys, [1.0, 0.0, 0.5])
    for name in ("a9a", "phishing", "magic04", "elevators"):
        np.testing.assert_allclose(paper001.load(str(tmp_path), name, "minmax")[0], pm1)
    with pytest.raises(ValueError, match="scaling"):
        paper001.load(str(tmp_path), "a9a", "unit")


def test_shipped_classification_sets_keep_libsvm_values():
    """The shipped a9a is LIBSVM's 0/1 and phishing LIBSVM's unit-norm rows: "released" passes
    them through, "minmax" does not."""
    from fastomkl.datasets import load_arrays
    for name in ("a9a", "phishing"):
        raw = load_arrays(name)["X"]
        got = paper001.load(None, name)[0]
        np.testing.assert_array_equal(got, raw)
        assert paper001.load(None, name, "minmax")[0].min() == -1.0
    np.testing.assert_array_equal(np.unique(paper001.load(None, "a9a")[0]), [0.0, 1.0])
    np.testing.assert_allclose(np.linalg.norm(paper001.load(None, "phishing")[0], axis=1), 1.0,
                               rtol=1e-4)                # 30 values 0.182574 (6 digits)
    magic = paper001.load(None, "magic04")[0]
    np.testing.assert_allclose([magic.min(0), magic.max(0)], [np.zeros(10), np.ones(10)])


# --- the released Raker code, in NumPy -----------------------------------------------------------

def released_raker(X, y, u, sigmas, loss, eta, mu, lmax):
    """What Raker-{square,absolute,logistic}.R of the authors' code computes, line by line: the
    prediction sum_j p_j f_j of each round (before learning) and the final p."""
    K, D = len(sigmas), u.shape[0]
    W, L, p = np.zeros((K, 2 * D)), np.zeros(K), np.full(K, 1.0 / K)
    preds = []
    for x, target in zip(X, y):
        hatp = 0.0
        tem = u @ x
        for j in range(K):
            tem = tem / sigmas[j]                       # the cumulative division
            zx = np.concatenate([np.cos(tem), np.sin(tem)]) / np.sqrt(D)
            f = W[j] @ zx
            hatp += p[j] * f
            if loss == "squared":
                nabla, value = 2 * (f - target), (f - target) ** 2
            elif loss == "absolute":
                nabla, value = np.sign(f - target), abs(f - target)
            else:
                ex = np.exp(-target * f)
                nabla, value = -target * ex / (1 + ex), np.log1p(ex)
            L[j] += (value + mu * W[j] @ W[j]) / lmax
            W[j] = (1 - 2 * eta * mu) * W[j] - eta * nabla * zx
        preds.append(hatp)
        p = np.exp(-eta * L) / np.exp(-eta * L).sum()
    return np.array(preds), p


@pytest.mark.parametrize("loss", ["squared", "absolute", "logistic"])
def test_legacy_raker_is_the_released_code(loss):
    rng = np.random.default_rng(3)
    n, d, D = 80, 3, 6
    X = rng.uniform(-1, 1, (n, d))
    y = (np.where(X[:, 0] > X[:, 1], 1.0, -1.0) if loss == "logistic"
         else 0.5 + 0.4 * np.sin(2 * X[:, 0]))
    model = paper001.make_model("Raker" + paper001.RAKER_CODE, loss, n, D, seed=5)
    got = model.predict_learn(X, y)
    sigmas = [k.sigma for k in paper001_dictionary()]
    u = model.features_.frequencies_[0] * sigmas[0]      # the one standard draw, shared
    eta = (1.0 if loss == "absolute" else 5.0) / np.sqrt(n)
    mu = 0.005 if loss == "logistic" else 0.01
    want, p = released_raker(X, y, u, sigmas, loss, eta, mu, 1.0 if loss == "squared" else 2.0)
    if loss == "logistic":
        decided = np.abs(want) > 1e-9                    # R predicts +1 on a tie
        np.testing.assert_array_equal(got[decided], np.sign(want[decided]))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.weights_, p, rtol=1e-9)
    # the library's Raker (correct bandwidths, the step's rate) is not that code
    plain = paper001.make_model("Raker", loss, n, D, seed=5).fit(X, y)
    assert not np.allclose(plain.weights_, p, rtol=1e-3)


# --- the released OKS / RF-OKS code and the step in hindsight -------------------------------------

def released_oks(X, y, sigma, m, loss, u=None):
    """What OKS-{square,absolute}.R (``u`` None: the kernel expansion) or RF-OKS-*.R (``u`` the
    D x d standard draw) of the authors' code computes with one kernel (so p stays 1 and no draw
    is random), at the step multiplier m: the prediction of each round, before learning."""
    n = len(y)
    delta = (1.0 / n) ** (1 / 3)
    lam = m * np.sqrt(delta) / np.sqrt(n)
    support, coef, preds = [], [], []
    w = None if u is None else np.zeros(2 * u.shape[0])
    for x, target in zip(X, y):
        if u is None:
            k = np.exp(-np.sum((np.array(support) - x) ** 2, 1) / (2 * sigma ** 2)) \
                if support else np.zeros(0)
            fx = float(np.dot(coef, k))
        else:
            tem = u @ x / sigma
            zx = np.concatenate([np.cos(tem), np.sin(tem)]) / np.sqrt(u.shape[0])
            fx = float(w @ zx)
        grad = np.sign(fx - target) if loss == "absolute" else 2 * (fx - target)
        if u is None:
            support.append(x)
            coef.append(-lam * grad)
        else:
            w = w - lam * grad * zx
        preds.append(fx)
    return np.array(preds)


@pytest.mark.parametrize("algorithm", ["OKS", "RF-OKS"])
@pytest.mark.parametrize("loss", ["absolute", "squared"])
def test_hindsight_step_rows_are_the_released_code_at_that_multiplier(algorithm, loss):
    from fastomkl.kernels import Gaussian
    rng = np.random.default_rng(4)
    n, d, D, sigma = 60, 3, 5, 0.5
    X = rng.uniform(-1, 1, (n, d))
    y = 0.5 + 0.4 * np.sin(2 * X[:, 0])
    # the largest target first: the library's experts step in units of s = the largest |y| seen
    # (for the absolute loss the hypothesis moves by s lambda sign), the released code by
    # lambda sign; they agree once the largest target has been seen
    y[0] = 1.0
    for m in paper001.STEP_GRID:
        model = paper001.make_model(algorithm + paper001.HINDSIGHT, loss, n, D, seed=2, step=m)
        model.set_params(kernels=[Gaussian(sigma)])
        got = model.predict_learn(X, y)
        u = None if algorithm == "OKS" else model.features_.frequencies_[0] * sigma
        np.testing.assert_allclose(got, released_oks(X, y, sigma, m, loss, u), rtol=1e-9,
                                   atol=1e-12, err_msg=f"m = {m}")
    # the default row is the released files' multiplier (5 absolute, 25 square); the switch
    # needs its multiplier
    assert paper001.make_model(algorithm, loss, n, D, seed=2).eta == \
        (5.0 if loss == "absolute" else 25.0)
    with pytest.raises(ValueError, match="step multiplier"):
        paper001.make_model(algorithm + paper001.HINDSIGHT, loss, n, D, seed=2)


@pytest.mark.parametrize("algorithm", ["OKS", "RF-OKS"])
def test_legacy_unit_rows_are_the_released_code(algorithm):
    """Absolute loss, the largest target arriving late: the ``--legacy-unit`` row steps as the
    released code does; the default row (the library's unit s, the largest |y| so far) does not."""
    from fastomkl.kernels import Gaussian
    rng = np.random.default_rng(5)
    n, d, D, sigma = 60, 3, 5, 0.5
    X = rng.uniform(-1, 1, (n, d))
    y = 0.3 + 0.2 * np.sin(2 * X[:, 0])
    y[40] = 1.0
    for row in (algorithm + paper001.UNIT1, algorithm):
        model = paper001.make_model(row, "absolute", n, D, seed=2)
        model.set_params(kernels=[Gaussian(sigma)])
        got = model.predict_learn(X, y)
        u = None if algorithm == "OKS" else model.features_.frequencies_[0] * sigma
        want = released_oks(X, y, sigma, 5.0, "absolute", u)
        if row == algorithm:
            assert not np.allclose(got, want, rtol=1e-3)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert paper001.SWITCHES[paper001.UNIT1][2] == ("absolute",)
    with pytest.raises(ValueError, match="raw unit"):
        paper001.make_model("IOKS" + paper001.UNIT1, "absolute", n, D, seed=2)


def test_best_step_is_the_lowest_mean():
    assert paper001.best_step({1.0: [3.0, 3.0], 5.0: [1.0, 2.0], 10.0: [2.0, 1.5]}) == 5.0
    assert paper001.best_step({25.0: [1.0], 10.0: [1.0], 1.0: [2.0]}) == 10.0   # tie: smaller


def test_hindsight_step_run_keeps_the_best_multiplier(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 5, (300, 5))
    np.savez(tmp_path / "elevators.npz", X=X, y=np.cos(X[:, 0]) + 0.1 * X[:, 1])
    out = tmp_path / "out"
    assert paper001.main(["--data", str(tmp_path), "--reps", "2", "--samples", "120",
                          "--tables", "7", "--datasets", "elevators", "--hindsight-step",
                          "--no-figures", "--quiet", "--out", str(out)]) == 0
    results, run = paper001.read_results(str(out / "paper001_tables.json"))
    steps = run["steps"]["7|absolute|elevators|RF-OKS (step in hindsight)"]
    assert list(steps["means"]) == ["1", "5", "10", "25"]
    assert steps["chosen"] == float(min(steps["means"], key=steps["means"].get))
    X, y = paper001.load(str(tmp_path), "elevators")
    want = []
    for r in range(2):
        order = np.random.default_rng(r).permutation(len(y))[:120]
        want.append(paper001.run_one("RF-OKS", "absolute", X[order], y[order], 530, r,
                                     steps["chosen"])[0])
    rows = results[(7, "absolute", "elevators")]
    np.testing.assert_allclose([v[0] for v in rows["RF-OKS (step in hindsight)"]], want,
                               rtol=1e-12)
    assert set(rows) == {"RF-OKS", "RF-OKS (step in hindsight)", "LKMBooks", "Raker", "RF-IOKS"}
    text = (out / "paper001_tables.md").read_text()
    assert f"row of `--hindsight-step`, m = {steps['chosen']:g} (means " in text


# --- verdicts ------------------------------------------------------------------------------------

def test_spread_test_by_hand():
    from fastomkl.reproduce.common import spread_test
    assert spread_test(1.0, 0.0, 1.5, 0.25) == (0.5, 0.5, True)     # on the bound
    assert spread_test(1.0, 0.3, 2.0, 0.4) == (1.0, 1.0, True)      # 2 sqrt(.09 + .16)
    diff, bound, within = spread_test(1.0, 0.3, 2.01, 0.4)
    assert not within and bound == 1.0 and abs(diff - 1.01) < 1e-12


def test_verdicts_and_summary_from_hand_computed_cells():
    key = (2, "logistic", "phishing")
    results = {key: {
        "OKS": [[13.0, 1.0], [14.0, 1.0]],          # 13.5 ± 0.7071 vs 13.80 ± 0.34: within
        "IOKS": [[20.0, 1.0], [20.0, 1.0]],         # 20 ± 0 vs 13.25 ± 0.28: bound 0.56, outside
        "OKS++": [[9.0, 1.0], [9.2, 1.0]],          # 9.1 ± 0.1414 vs 7.80 ± 0.49: bound 1.02
        "OKS++ (tem1)": [[7.5, 1.0], [7.9, 1.0]],   # 7.7 ± 0.2828: within
    }, (10, "absolute", "ailerons"): {
        "Raker": [[0.0500, 0.1], [0.0520, 0.1]],    # 0.051 vs 0.0724 ± 0.0019: outside
        "Raker (released Raker)": [[0.0900, 0.1], [0.0910, 0.1]],   # still outside
    }}
    cells = {c["algorithm"]: c for c in paper001.cells(results)}
    assert {a: c["verdict"] for a, c in cells.items()} == {
        "OKS": "within", "IOKS": "untraced", "OKS++": "traced", "Raker": "untraced"}
    assert cells["OKS++"]["traced_by"] == ["--legacy-tem1"]
    assert abs(cells["OKS++"]["bound"] - 2 * np.sqrt(0.49 ** 2 + 0.02)) < 1e-12
    assert abs(cells["OKS"]["difference"] - (-0.3)) < 1e-12
    assert cells["Raker"]["switched"]["--legacy-raker"]["within"] is False
    run = {"command": "c", "commit": "x", "scaling": "released", "label": "",
           "switches": ["--legacy-tem1", "--legacy-raker"]}
    text = paper001.report(results, run)
    assert "4 cells: **1 within** the spread, **1 traced** to a switch" in text
    assert "**2 untraced**" in text
    assert "`--legacy-tem1`: its rows are within the spread in 1 of 1 cells; it traces 1" in text
    assert "`--legacy-raker`: its rows are within the spread in 0 of 1 cells; it traces 0" in text
    assert ("| OKS++ | - | 7.80 ± 0.49 | 9.10 ± 0.14 | +1.30 | 1.02 | no | outside; traced: "
            "`--legacy-tem1` |") in text
    assert "| IOKS | - | 13.25 ± 0.28 | 20.00 ± 0.00 | +6.75 | 0.56 | no | outside, untraced |" in text
    assert "Untraced: Table 2 phishing IOKS" in text
    run["switches"] = []
    assert "`--legacy-raker` was not run (it adds rows to 1 of these cells)" in \
        paper001.report(results, run)


# --- the committed full run ----------------------------------------------------------------------

COMMITTED = Path(__file__).resolve().parents[1] / "bench" / "results"


SWITCH_RUNS = ["paper001_switches/absolute", "paper001_switches/squared",
               "paper001_switches/classification"]


@pytest.mark.parametrize("folder", [".", "paper001_minmax", *SWITCH_RUNS])
def test_committed_tables_are_the_report_of_their_numbers(folder):
    """bench/results/paper001_tables.md (and the --scaling minmax run beside it) is what
    ``report`` writes from the committed numbers (no hand-written verdicts), and records the
    command and the commit that made it."""
    results, run = paper001.read_results(str(COMMITTED / folder / "paper001_tables.json"))
    text = (COMMITTED / folder / "paper001_tables.md").read_text()
    assert text.rstrip("\n") == paper001.report(results, run).rstrip("\n")
    assert run["command"].startswith("fastomkl reproduce 001") and run["commit"] != "unknown"
    assert "uncommitted" not in run["commit"] and run["label"] == ""
    assert run["scaling"] == ("minmax" if folder == "paper001_minmax" else "released")


def test_a_short_run_repeats_the_committed_cells(request):
    """Repetition 0 of bank32nh's rows (seed 0) gives the committed run's first values, on the
    kernels' variant the committed run used (the bandits' choices carry the variants' last-bit
    differences into the fifth digit: OKS++ on bank32nh moves by 2e-5 between AVX2 and
    AVX-512).  The committed run predates the "isa" entry; it was made with AVX2 + FMA, "v3"
    (it repeats under FASTOMKL_ISA=v3, not under v4)."""
    import tempfile
    results, run = paper001.read_results(str(COMMITTED / "paper001_tables.json"))
    assert run["scaling"] == "released" and run["samples"] is None
    variant = run.get("isa", "v3")
    if ran_on_variant(request, variant):
        return
    with tempfile.TemporaryDirectory() as out:
        assert paper001.main(["--tables", "3", "9", "--datasets", "bank32nh", "--reps", "1",
                              "--legacy-raker", "--no-figures", "--quiet", "--out", out]) == 0
        mine, mine_run = paper001.read_results(os.path.join(out, "paper001_tables.json"))
    assert mine_run["isa"] == variant
    compared = 0
    for key, rows in mine.items():
        for algorithm, values in rows.items():
            np.testing.assert_allclose(values[0][0], results[key][algorithm][0][0], rtol=1e-9,
                                       err_msg=f"{key} {algorithm}")
            compared += 1
    assert compared == 9
