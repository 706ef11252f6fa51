"""``fastomkl reproduce 001`` end to end on small synthetic stand-ins for the shared data sets."""
import json

import numpy as np

from fastomkl.reproduce import paper001


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
