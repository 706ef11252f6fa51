"""``fastomkl reproduce 004 --quick`` end to end on a small stand-in for a9a."""
import numpy as np

from fastomkl.reproduce import paper004


def test_quick_run_writes_the_report_and_figures(tmp_path):
    rng = np.random.default_rng(0)
    X = (rng.uniform(size=(3500, 12)) < 0.3).astype(float)
    y = np.where(X[:, 0] + X[:, 1] > 0.5, 1.0, -1.0)
    Xt = (rng.uniform(size=(400, 12)) < 0.3).astype(float)
    np.savez(tmp_path / "a9a.npz", X=X, y=y, X_test=Xt,
             y_test=np.where(Xt[:, 0] + Xt[:, 1] > 0.5, 1.0, -1.0))
    out = tmp_path / "out"
    assert paper004.main(["--data", str(tmp_path), "--quick", "--quiet", "--out", str(out)]) == 0
    text = (out / "paper004_results.md").read_text()
    assert "quick run" in text.splitlines()[0]
    for heading in ("Section 7.1", "Section 7.2", "Section 7.3", "digits", "Not run"):
        assert heading in text
    for name in ("paper004_fig4_rate.png", "paper004_fig6_adult.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rate_experiment_error_falls():
    """The averaged iterate's error to the generating function decreases over the iterations."""
    class Silent:
        def update(self, *_):
            pass
    rate = paper004.rate_experiment(True, Silent())
    assert rate["error"][-1] < 0.5 * rate["error"][0] and rate["slope"] < 0
