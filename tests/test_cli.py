"""The command line: the main job on the embedded data, CSV input, saving, plotting, errors."""
import subprocess
import sys

import numpy as np
import pytest

import fastomkl
from fastomkl.cli import main


def test_model_names_are_taken_in_any_case(capsys):
    assert main(["run", "--quiet", "--model", "Raker", "--n-components", "5"]) == 0
    assert "MSE" in capsys.readouterr().out


def test_default_run_streams_airfoil(capsys):
    assert main(["run", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "airfoil (embedded): 1503 samples, 5 features" in out
    mse = float(out.split("MSE")[1].split()[0])
    assert 0 < mse < 0.05           # y in [0, 1]: predicting the mean scores about 0.04
    assert "us per sample" in out and "top kernels" in out


def test_module_entry_point_without_arguments():
    res = subprocess.run([sys.executable, "-m", "fastomkl"], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert "prequential" in res.stdout


def test_csv_save_and_plot(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(400, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    csv = tmp_path / "d.csv"
    rows = ["a,b,target,c"] + [f"{x[0]},{x[1]},{t},{x[2]}" for x, t in zip(X, y)]
    csv.write_text("\n".join(rows) + "\n")
    model_path, plot = tmp_path / "m.npz", tmp_path / "mse.png"
    assert main(["run", "--csv", str(csv), "--target", "target", "--n-components", "10",
                 "--seed", "4", "--save", str(model_path), "--plot", str(plot), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "400 samples, 3 features" in out
    model = fastomkl.load(model_path)
    assert model.n_samples_seen_ == 400 and model.n_components == 10 and model.random_state == 4
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_errors(tmp_path, capsys):
    with pytest.raises(SystemExit, match="no such file"):
        main(["run", "--csv", str(tmp_path / "none.csv"), "--target", "y"])
    csv = tmp_path / "d.csv"
    csv.write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit, match="no column 'y'"):
        main(["run", "--csv", str(csv), "--target", "y"])
    csv.write_text("a,y\n1,x\n")
    with pytest.raises(SystemExit, match="non-numeric"):
        main(["run", "--csv", str(csv), "--target", "y"])
    with pytest.raises(SystemExit):
        main(["run", "--csv", str(csv)])                       # --target missing
    with pytest.raises(SystemExit) as exc:
        main(["run", "--model", "nope"])
    assert exc.value.code == 2 and "invalid choice: 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no reproduction"):
        main(["reproduce", "999"])
    with pytest.raises(SystemExit, match="no such folder"):
        main(["run", "--plot", str(tmp_path / "missing" / "mse.png")])
    # options the model refuses, and data that set no kernel scale: one line, no traceback
    with pytest.raises(SystemExit, match=r"^fastomkl: n_components must be"):
        main(["run", "--quiet", "--n-components", "0"])
    with pytest.raises(SystemExit, match=r"^fastomkl: random_state must be"):
        main(["run", "--quiet", "--seed", "-1"])
    csv.write_text("a,y\n1,2\n")
    with pytest.raises(SystemExit, match=r"^fastomkl: median_dictionary needs .* two rows"):
        main(["run", "--quiet", "--csv", str(csv), "--target", "y"])


def test_scaling_helpers():
    from fastomkl.datasets import (impute_column_means, scale_to_unit_ball,
                                   scale_to_unit_interval)
    X = np.array([[3.0, 4.0], [0.0, 1.0], [np.nan, 2.0]])
    filled = impute_column_means(X)
    np.testing.assert_array_equal(filled[2], [1.5, 2.0])
    ball = scale_to_unit_ball(filled)
    assert np.linalg.norm(ball, axis=1).max() == pytest.approx(1.0)
    np.testing.assert_allclose(scale_to_unit_interval([2.0, 4.0, 3.0]), [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="impute"):
        scale_to_unit_ball(X)
    with pytest.raises(ValueError, match="impute"):
        scale_to_unit_interval([1.0, np.nan])


def test_help_lists_models_data_sets_and_defaults(capsys):
    from fastomkl.cli import _regressors
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in _regressors():
        assert name in text
    for dataset in ("airfoil", "bias_correction", "concrete", "naval"):
        assert dataset in text
    assert "(default: raker)" in text and "(default: airfoil)" in text
    assert "random features per kernel (default: 50)" in text


def test_reproduce_lists_papers_with_authors_titles_and_years(capsys):
    for argv in (["reproduce"], ["reproduce", "--help"]):
        assert main(argv) == 0
        text = capsys.readouterr().out
        assert 'Ghari & Shen, "Graph-Aided Online Multi-Kernel Learning" (JMLR 24, 2023)' in text
        assert ('Rokhlin & Gurtovaya, "Random feature-based double Vovk-Azoury-Warmuth algorithm '
                'for online multi-kernel learning" (preprint, 2025)') in text
        assert ('Jézéquel, Gaillard & Rudi, "Efficient online learning with kernels for '
                'adversarial large scale problems" (NeurIPS 2019)') in text
        assert ('Li & Liao, "Improved regret bounds for online kernel selection under bandit '
                'feedback" (ECML-PKDD 2022)') in text
        assert ('Dai, Xie, He, Liang, Raj, Balcan & Song, "Scalable kernel methods via doubly '
                'stochastic gradients" (NeurIPS 2014)') in text


def test_progress_bar_unless_quiet(monkeypatch, capsys):
    from fastomkl.reproduce import common
    monkeypatch.setattr(common, "BAR_DELAY", 0.0)       # as if the run took longer than the delay
    assert main(["run"]) == 0
    err = capsys.readouterr().err
    assert "Raker:" in err and "/1503" in err and "sample/s" in err
    assert main(["run", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_short_runs_print_no_bar(capsys):
    assert main(["run", "--n-components", "2"]) == 0   # well under the one-second delay
    assert capsys.readouterr().err == ""


def test_plot_without_matplotlib_stops_before_the_run(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)        # import matplotlib fails
    with pytest.raises(SystemExit, match=r"fastomkl\[plot\]"):
        main(["run", "--plot", str(tmp_path / "mse.png"), "--save", str(tmp_path / "m.npz")])
    assert "MSE" not in capsys.readouterr().out                 # no run was wasted
    assert not (tmp_path / "m.npz").exists()


def test_failing_plot_keeps_the_saved_model(monkeypatch, tmp_path):
    from fastomkl import cli

    def broken(*args):
        raise RuntimeError("disk full")
    monkeypatch.setattr(cli, "plot_mse", broken)
    model_path = tmp_path / "m.npz"
    with pytest.raises(SystemExit, match="disk full.*saved"):
        main(["run", "--quiet", "--plot", str(tmp_path / "mse.png"), "--save", str(model_path)])
    assert fastomkl.load(model_path).n_samples_seen_ == 1503


def test_reproduce_dispatch(capsys):
    assert main(["reproduce"]) == 0
    assert "000" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "000", "--help"])          # reaches the paper's own parser
    assert exc.value.code == 0
    assert "--table" in capsys.readouterr().out


def test_default_run_uses_the_median_dictionary(tmp_path):
    """The CLI's default dictionary is centred on the data (fastomkl.median_dictionary of the first
    samples, scaled as the run scales them); --kernels paper000 keeps the paper's 76 kernels."""
    from fastomkl.datasets import impute_column_means, scale_to_unit_ball
    from fastomkl.cli import MEDIAN_SAMPLES
    X, _ = fastomkl.load_dataset("airfoil")
    expected = fastomkl.median_dictionary(scale_to_unit_ball(impute_column_means(X))[:MEDIAN_SAMPLES])
    for option, kernels in (([], expected), (["--kernels", "paper000"], None)):
        path = tmp_path / "model.npz"
        assert main(["run", "--quiet", "--save", str(path)] + option) == 0
        assert fastomkl.load(path).kernels == kernels


def test_every_listed_model_runs_and_learns(tmp_path, capsys):
    """Each choice of --model runs on the default median dictionary (the Gaussian-only families
    take its Gaussian members) and beats predicting zero on a smooth target."""
    from fastomkl.cli import _regressors
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(150, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
    csv = tmp_path / "d.csv"
    csv.write_text("\n".join(["a,b,y"] + [f"{a},{b},{t}" for (a, b), t in zip(X, y)]) + "\n")
    scaled = (y - y.min()) / (y.max() - y.min())
    for name in _regressors():
        assert main(["run", "--model", name, "--csv", str(csv), "--target", "y",
                     "--n-components", "10", "--quiet"]) == 0, name
        mse = float(capsys.readouterr().out.split("MSE")[1].split()[0])
        assert mse < np.mean(scaled ** 2), name


def _printed_mse(out: str) -> float:
    return float(out.split("MSE")[1].split()[0])


def test_rows_with_missing_values_are_dropped_and_said(capsys):
    from fastomkl.datasets import load_dataset
    data = load_dataset("bias_correction")
    incomplete = int((~(np.isfinite(data.y) & np.isfinite(data.X).all(axis=1))).sum())
    assert incomplete > 0                           # the data set holds NaN in x and in y
    assert main(["run", "--dataset", "bias_correction", "--n-components", "4", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"{len(data.y) - incomplete} samples, 21 features" in out
    assert f"{incomplete} rows with a missing value (NaN) in x or y dropped" in out
    assert np.isfinite(_printed_mse(out))


def _independent_run(X, y, seed, n_components, order):
    """The CLI's run computed here from its definition: complete rows, the order, x over the
    largest row norm, y min-max to [0, 1], Raker on the median dictionary of the first rows."""
    from fastomkl import Raker, median_dictionary
    if order == "shuffled":
        perm = np.random.default_rng(seed).permutation(len(y))
        X, y = X[perm], y[perm]
    X = X / np.sqrt((X ** 2).sum(axis=1)).max()
    y = (y - y.min()) / (y.max() - y.min())
    model = Raker(median_dictionary(X[:500]), n_components=n_components, random_state=seed)
    preds = model.predict_learn(X, y)
    return np.mean((preds - y) ** 2)


def test_a_file_sorted_by_its_target_is_shuffled_by_default(capsys):
    from fastomkl.datasets import load_dataset
    X, y = load_dataset("magic04")
    assert np.all(np.diff(y) <= 0)                  # gamma rows first, then hadron rows
    assert main(["run", "--dataset", "magic04", "--n-components", "4", "--seed", "3",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "shuffled (seed 3, the file is sorted by its target)" in out
    shuffled = _independent_run(X, y, 3, 4, "shuffled")
    assert _printed_mse(out) == pytest.approx(shuffled, rel=1e-5)
    assert main(["run", "--dataset", "magic04", "--n-components", "4", "--seed", "3",
                 "--order", "natural", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "order       file order" in out
    assert _printed_mse(out) == pytest.approx(_independent_run(X, y, 3, 4, "natural"), rel=1e-5)
    # airfoil is not sorted: its file order stays unless asked
    assert main(["run", "--quiet", "--n-components", "4"]) == 0
    assert "order       file order" in capsys.readouterr().out
    assert main(["run", "--quiet", "--n-components", "4", "--order", "shuffled"]) == 0
    assert "order       shuffled (seed 0)" in capsys.readouterr().out


def test_a_saved_run_predicts_in_the_targets_units(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 40, size=(1500, 3))
    y = 120 + 30 * np.sin(X[:, 0] / 8) + 0.5 * X[:, 1]        # far from [0, 1]
    csv = tmp_path / "train.csv"
    csv.write_text("a,b,c,price\n" + "".join(f"{a},{b},{c},{t}\n" for (a, b, c), t in zip(X, y)))
    model_path = tmp_path / "m.npz"
    assert main(["run", "--csv", str(csv), "--target", "price", "--n-components", "20",
                 "--save", str(model_path), "--quiet"]) == 0
    assert "fastomkl predict applies it" in capsys.readouterr().out
    X_new = rng.uniform(0, 40, size=(200, 3))
    y_new = 120 + 30 * np.sin(X_new[:, 0] / 8) + 0.5 * X_new[:, 1]
    new = tmp_path / "new.csv"            # columns in another order, and no target
    new.write_text("c,a,b\n" + "".join(f"{c},{a},{b}\n" for a, b, c in X_new))
    out = tmp_path / "pred.csv"
    assert main(["predict", str(model_path), "--csv", str(new), "--out", str(out)]) == 0
    lines = out.read_text().split()
    assert lines[0] == "price"
    predicted = np.array([float(v) for v in lines[1:]])
    # the same numbers from the saved model and the scaling computed here from the training data
    top = np.sqrt((X ** 2).sum(axis=1)).max()
    expected = fastomkl.load(model_path).predict(X_new / top) * (y.max() - y.min()) + y.min()
    np.testing.assert_allclose(predicted, expected, rtol=1e-9)
    # in the target's units: far closer to the truth than the training targets' spread
    assert np.sqrt(np.mean((predicted - y_new) ** 2)) < 0.5 * y.std()
    # a file without a model's column is refused, naming it
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit, match=r"lacks the columns \['c'\]"):
        main(["predict", str(model_path), "--csv", str(tmp_path / "bad.csv")])
    with pytest.raises(SystemExit, match="no scaling file"):
        main(["predict", str(tmp_path / "none.npz"), "--csv", str(new)])


def test_the_data_folder_message_names_the_folder_given(tmp_path, capsys):
    from fastomkl.reproduce import paper001, paper004
    missing = tmp_path / "nowhere"
    for module in (paper001, paper004):
        with pytest.raises(SystemExit) as exc:
            module.main(["--data", str(missing), "--quick", "--no-figures", "--quiet"])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and f"--data {missing}: no such folder" in err
        assert "give the" not in err
    with pytest.raises(SystemExit):
        paper004.main(["--data", str(tmp_path), "--quick", "--no-figures", "--quiet"])
    assert f"--data {tmp_path}: the folder has no a9a.npz" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        paper001.main(["--data", str(tmp_path), "--datasets", "elevators", "ailerons",
                       "--quick", "--no-figures", "--quiet"])
    assert "the folder has no elevators.npz, ailerons.npz" in capsys.readouterr().err


def test_reproductions_read_the_shipped_data_by_default(monkeypatch):
    """paper 001's and 004's loaders give, without --data, what they give from a folder holding
    the same files."""
    from importlib import resources

    from fastomkl.reproduce import paper001, paper004
    monkeypatch.delenv("FASTOMKL_DATA", raising=False)
    folder = resources.files("fastomkl.data")
    for name in paper001.CLASSIFICATION + paper001.REGRESSION:
        shipped, from_folder = paper001.load(None, name), paper001.load(str(folder), name)
        for a, b in zip(shipped, from_folder):
            np.testing.assert_array_equal(a, b)
    with np.load(str(folder.joinpath("a9a.npz")), allow_pickle=False) as z:
        order = np.random.default_rng(0).permutation(len(z["y"]))
        X, y = z["X"][order][:3000], z["y"][order][:3000]
    got = paper004.load_a9a(None, quick=True)
    np.testing.assert_array_equal(got[0], X)
    np.testing.assert_array_equal(got[1], y)


def test_paper004_without_scikit_learn_says_what_to_install(monkeypatch, tmp_path, capsys):
    from fastomkl.reproduce import paper004
    monkeypatch.setitem(sys.modules, "sklearn", None)            # import sklearn fails
    with pytest.raises(SystemExit) as exc:
        paper004.main(["--quick", "--quiet", "--no-figures", "--out", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert "need scikit-learn: pip install 'fastomkl[reproduce]'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()                         # stopped before any work
