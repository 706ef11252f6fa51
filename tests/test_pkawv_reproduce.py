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


def test_taylor_truncation_error_is_the_tail_of_the_exponential_series():
    # two rows with x.x' = u and the Gaussian kernel exp(-|x - x'|^2 / 2) known in closed form
    X = np.array([[1.0, 0.0], [0.5, 0.5]])
    u = 0.5
    for degree in (1, 2, 4):
        error, kernel = paper002.taylor_truncation_error(X, degree, n_pairs=50)
        series = sum(u ** k / np.prod(np.arange(1, k + 1)) for k in range(degree + 1))
        assert error == pytest.approx(1.0 - series * np.exp(-u), rel=1e-12)
        assert kernel == pytest.approx(np.exp(-0.25), rel=1e-12)
    far = np.array([[1.0] * 68, [-1.0] * 68])          # u = -68: the truncation is off by 100%+
    assert paper002.taylor_truncation_error(far, 2, n_pairs=50)[0] > 1.0


def test_adversarial_notes_follow_the_numbers_they_cite():
    box = np.random.default_rng(1).uniform(-1.0, 1.0, (40, 5))
    near = {"Kernel-AWV": 10.0, "Taylor M=2": 13.0, "Taylor M=4": 10.5}
    text = paper002.adversarial_notes(near, {"Taylor M=2": box * 0.1}, n_rounds=40)
    assert "+5% against Kernel-AWV's (within 10%" in text
    assert "far from the centre" not in text          # inputs near the centre: no such claim
    far = dict(near, **{"Taylor M=4": 15.0})
    text = paper002.adversarial_notes(far, {"Taylor M=2": np.sign(box)}, n_rounds=40)
    assert "+50% against Kernel-AWV's (the paper's \"converges very fast\" holds in direction" \
        in text
    assert "median ‖x‖² = 5.00" in text and "far from the centre" in text
    assert "FOGD η = 1/√40" in text


def test_curve_notes_cite_the_runs_own_figures():
    curves = {("magic04", "KRR"): np.array([[100, 20.0, 1.0]]),
              ("magic04", "Taylor M=2"): np.array([[100, 25.0, 0.1]]),
              ("magic04", "Taylor M=4"): "not run: r = 1001 Taylor features",
              ("magic04", "Nyström"): np.array([[100, 22.0, 0.5]]),
              ("magic04", "Pros-N-KONS"): np.array([[100, 40.0, 0.5]])}
    sizes = {("magic04", "Nyström"): 10, ("magic04", "Pros-N-KONS"): 25}
    text = paper002.curve_notes(curves, sizes, ["magic04"],
                                ["KRR", "Taylor M=2", "Taylor M=4", "Nyström", "Pros-N-KONS"])
    assert "Taylor M = 2 is +25% against KRR at t = 100" in text
    assert "not run for want of memory: Taylor M=4 (r = 1,001)" in text
    assert "25 times in 100 rounds (every 4.0 rounds" in text
    assert "Nyström keeps 10 of 100 rows (10%) as centres and ranks 2 of 4" in text
