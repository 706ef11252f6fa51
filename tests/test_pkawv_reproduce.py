"""``fastomkl reproduce 002``: the adversary, the budgeted curves, and the quick run end to end."""
import numpy as np
import pytest

from fastomkl.cli import main
from fastomkl.reproduce import paper002
from test_reproduce_outputs import DPI, committed, png_size  # noqa: F401  (fixture)


def test_hindsight_value_with_one_more_point_equals_a_direct_solve():
    rng = np.random.default_rng(3)
    X, Y = rng.uniform(-1, 1, (25, 5)), rng.uniform(-1, 1, 25)
    best = paper002.Hindsight(5)
    for x, y in zip(X[:-1], Y[:-1]):
        best.add(x, y)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    direct = Y @ np.linalg.solve(K + np.eye(25), Y)
    assert best.with_point(X[-1], Y[-1]) == pytest.approx(direct, rel=1e-12)
    best.add(X[-1], Y[-1])
    assert best.value == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("learner", ["Kernel-AWV", "Nyström"])
def test_adversary_probes_leave_the_learner_as_a_replay_of_the_chosen_sequence(learner):
    regret, X, Y = paper002.adversarial_run(learner, n_rounds=5, restarts=1)
    assert np.all(np.abs(X) <= 1) and set(Y) <= {-1.0, 1.0}
    fresh = paper002.make_learner(learner, "regression", "vaw", 5)
    losses = np.cumsum((fresh.predict_learn(X, Y) - Y) ** 2)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    for t in range(1, 6):
        best = Y[:t] @ np.linalg.solve(K[:t, :t] + np.eye(t), Y[:t])
        assert regret[t - 1] == pytest.approx(losses[t - 1] - best, abs=1e-10)


@pytest.mark.parametrize("name", ["casp", "magic04"])
def test_budget_run_records_the_cumulative_loss_of_the_prefix_it_covered(name):
    X, y = paper002.stream(name, 600)
    task = paper002.DATASETS[name][0]
    rows = paper002.budget_run(paper002.make_learner("Taylor M=2", task, "ridge", 600), X, y,
                               task, budget=1e9)
    assert rows[-1, 0] == 600 and np.all(np.diff(rows[:, 2]) >= 0)
    pred = paper002.make_learner("Taylor M=2", task, "ridge", 600).predict_learn(X, y)
    loss = (pred != y) if task == "classification" else (pred - y) ** 2
    np.testing.assert_allclose(rows[:, 1], np.cumsum(loss)[rows[:, 0].astype(int) - 1],
                               rtol=1e-12)
    short = paper002.budget_run(paper002.make_learner("KRR", task, "ridge", 600), X, y, task,
                                budget=1e9, stop_at=250)
    assert short[-1, 0] == 250


def test_streams_are_scaled_to_the_unit_box():
    X, y = paper002.stream("casp")
    assert X.min() == -1 and X.max() == 1 and y.min() == -1 and y.max() == 1
    _, labels = paper002.stream("magic04", 2000)
    assert set(labels) == {-1.0, 1.0}          # the file is sorted by label; the stream is not


def test_quick_run_writes_tables_and_figures(tmp_path, committed, capsys):  # noqa: F811
    out = tmp_path / "r002"
    assert main(["reproduce", "002", "--quick", "--quiet", "--out", str(out)]) == 0
    assert "quick run" in capsys.readouterr().err
    assert {p.name for p in out.iterdir()} == {
        "paper002_adversarial_quick.md", "paper002_curves_quick.md", "paper002_fig2_quick.png",
        "paper002_fig3_quick.png", "paper002_fig4_quick.png"}
    assert png_size(out / "paper002_fig3_quick.png") == (6 * DPI, 4 * DPI)
    assert png_size(out / "paper002_fig4_quick.png") == (round(10.4 * DPI), round(7.2 * DPI))
    assert png_size(out / "paper002_fig2_quick.png") == (round(10.4 * DPI), round(3.6 * DPI))
    for table in ("adversarial", "curves"):
        text = (out / f"paper002_{table}_quick.md").read_text()
        assert "quick run" in text.splitlines()[0] and "**Quick mode**" in text
    curves = (out / "paper002_curves_quick.md").read_text()
    for name in ("casp", "phishing", "magic04"):
        assert f"## {name}" in curves
    assert "not run: r = 57155" in curves           # phishing with M = 3


def test_reproduce_002_is_listed():
    from fastomkl.reproduce import PAPERS
    assert "002" in PAPERS
