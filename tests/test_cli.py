"""The command line: the main job on the embedded data, CSV input, saving, plotting, errors."""
import subprocess
import sys

import numpy as np
import pytest

import fastomkl
from fastomkl.cli import main


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
