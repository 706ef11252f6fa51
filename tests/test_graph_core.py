"""The compiled graph-feedback combiners against plain NumPy rounds on the same draws."""
import numpy as np
import pytest

from fastomkl._core.steps import (ADAGRAD, CHANGE_STATISTICS, ENSEMBLE_STEPS, SELF_CONFIDENT,
                                  ChangeTest)
from fastomkl._core.combiners.hedge import Hedge
from fastomkl._core.engine import Engine
from fastomkl._core.experts.ogd import OGDExperts, OGDStepEnsemble
from fastomkl._core.features.rff import RFFBank
from fastomkl._core.combiners.hedge import DiscountHedge
from fastomkl._core.combiners.graph import GraphFeedback, SimilarityGraphFeedback

from graph_reference import gf_stream, rff, sfg_stream
from reference import PageHinkley

N, d, D, T = 12, 3, 8, 300
STEPS = ENSEMBLE_STEPS


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(5)
    sig = np.geomspace(0.1, 10, N)
    freqs = rng.standard_normal((N, D, d)) / sig[:, None, None]
    X = rng.uniform(-1, 1, (T, d)) / np.sqrt(d)
    y = np.clip(0.5 + 0.4 * np.sin(3 * X[:, 0]) * X[:, 1] + 0.05 * rng.standard_normal(T), 0, 1)
    return freqs, X, y


def random_graph(rng, n, m):
    A = np.eye(n, dtype=bool)
    for i in range(n):
        others = rng.choice([j for j in range(n) if j != i], m - 1, replace=False)
        A[i, others] = True
    return A


def greedy_dom(A):
    unc = np.ones(len(A), dtype=bool)
    dom = np.zeros(len(A), dtype=bool)
    while unc.any():
        v = int(np.argmax((A & unc).sum(1)))
        dom[v] = True
        unc &= ~A[v]
    return dom


def csr(A):
    rows, cols = np.nonzero(A)
    return np.searchsorted(rows, np.arange(len(A) + 1)), cols


def engine(freqs, combiner, seed, lam=1e-3, eta=(0.1, 1), steps=None):
    n = freqs.shape[0]
    if steps is not None:
        experts = OGDStepEnsemble(n, steps, 2 * freqs.shape[1], 0, lam)
    else:
        experts = OGDExperts(n, 2 * freqs.shape[1], 0, lam, eta[0], eta[1])
    return Engine(RFFBank(freqs), experts, combiner, np.random.PCG64(seed))


def run(eng, X, y):
    out = np.empty(len(y))
    eng.predict_learn_many(np.ascontiguousarray(X), np.ascontiguousarray(y), out)
    return out


def test_next_double_matches_generator_random():
    # The reference replays the compiled draws with Generator.random() on the same bit generator.
    bg = np.random.PCG64(3)
    g = np.random.Generator(bg)
    a = g.random(5)
    b = np.random.Generator(np.random.PCG64(3)).random(5)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("opts", [
    dict(),
    dict(conditional_q=True),
    dict(legacy_sampler=True, q_floor=0.05),
    dict(freeze_after=40),
    dict(J=3, M=2),
])
def test_gf_matches_numpy(problem, opts):
    freqs, X, y = problem
    opts = dict(opts)
    J, M = opts.pop("J", 2), opts.pop("M", 4)
    comb = GraphFeedback(N, J, M, 0.1, 1, 0.1, 1, **opts)
    ours = run(engine(freqs, comb, 11), X, y)
    ref, theta, logw, record = gf_stream(freqs, X, y, 11, J=J, M=M, **opts)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    eng_theta = np.asarray(comb.log_w)
    np.testing.assert_allclose(eng_theta - eng_theta.max(), logw - logw.max(), rtol=1e-9,
                               atol=1e-9)
    assert comb.chosen_node == record[-1][0]


@pytest.mark.parametrize("opts", [
    dict(),
    dict(q_floor=0.1, p_floor=0.2, legacy_sampler=True),
    dict(exploit_after=100),
    dict(exploit_after=100, exploit_mode=1),
    dict(xi=(0.5, 0)),
])
def test_sfg_matches_numpy(problem, opts):
    freqs, X, y = problem
    rng = np.random.default_rng(1)
    A = random_graph(rng, N, 4)
    dom = greedy_dom(A)
    ptr, idx = csr(A)
    xi = opts.pop("xi", (0.1, 1))
    comb = SimilarityGraphFeedback(N, ptr, idx, dom, np.zeros((N, N)), 0, 0.1, 1, 0.1, 1,
                                   xi[0], xi[1], **opts)
    ours = run(engine(freqs, comb, 7), X, y)
    ref, theta, logw, u, record = sfg_stream(freqs, X, y, 7, A=A, dom=dom, xi=xi, **opts)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(comb.u) / np.sum(comb.u), u / u.sum(), rtol=1e-9)
    lw = np.asarray(comb.log_w)
    np.testing.assert_allclose(lw - lw.max(), logw - logw.max(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("opts", [
    dict(),
    dict(top_k=3),
    dict(refine_all=True, predict_unrefined=True, q_floor=0.1, p_floor=0.2),
    dict(refine_argmin=True, freeze_after=60),
    dict(top_k=0, beta=0.02),
])
def test_sfgr_matches_numpy(problem, opts):
    freqs, X, y = problem
    rng = np.random.default_rng(2)
    A = random_graph(rng, N, 3)
    div = rng.uniform(0, 1, (N, N))
    div = div + div.T
    ptr, idx = csr(A)
    comb = SimilarityGraphFeedback(N, ptr, idx, None, div, 0, 0.1, 1, 0.1, 1, 0.1, 1,
                                   refine=True, **opts)
    ours = run(engine(freqs, comb, 9), X, y)
    ref, theta, logw, u, record = sfg_stream(freqs, X, y, 9, A=A, div=div, refine=True, **opts)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(comb.dominating_set, record[-1][3])


# eta="auto": AdaGrad-norm experts (scale 2: their steps are often truncated; 0.05: rarely) with
# self-confident combiner rates
@pytest.mark.parametrize("scale", [2.0, 0.05])
@pytest.mark.parametrize("opts", [dict(), dict(q_floor=0.05, conditional_q=True)])
def test_gf_auto_matches_numpy(problem, opts, scale):
    """eta="auto": importance-weighted AdaGrad-norm accumulators, truncated steps and the
    self-confident weight rate, against the NumPy rounds."""
    freqs, X, y = problem
    comb = GraphFeedback(N, 2, 4, 1.0, SELF_CONFIDENT, 0.1, 1, **opts)
    eng = engine(freqs, comb, 11, eta=(scale, ADAGRAD))
    ours = run(eng, X, y)
    ref, theta, logw, _ = gf_stream(freqs, X, y, 11, J=2, M=4, auto=scale, **opts)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(eng.experts.theta), theta, rtol=1e-9, atol=1e-12)
    lw = np.asarray(comb.log_w)
    np.testing.assert_allclose(lw - lw.max(), logw - logw.max(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("scale", [2.0, 0.05])
@pytest.mark.parametrize("refine", [False, True])
def test_sfg_auto_matches_numpy(problem, refine, scale):
    freqs, X, y = problem
    rng = np.random.default_rng(3)
    A = random_graph(rng, N, 3)
    div = rng.uniform(0, 1, (N, N))
    dom = None if refine else greedy_dom(A)
    ptr, idx = csr(A)
    opts = dict(refine=True, top_k=3) if refine else {}
    comb = SimilarityGraphFeedback(N, ptr, idx, dom, div, 0, 1.0, SELF_CONFIDENT, 1.0,
                                   SELF_CONFIDENT, 0.1, 1, **opts)
    eng = engine(freqs, comb, 5, eta=(scale, ADAGRAD))
    ours = run(eng, X, y)
    ref, theta, logw, u, _ = sfg_stream(freqs, X, y, 5, A=A, dom=dom, div=div, auto=scale, **opts)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(eng.experts.theta), theta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(comb.u) / np.sum(comb.u), u / u.sum(), rtol=1e-9)


# eta="ensemble": the graph's experts are each kernel's members of a step ensemble, under the
# self-confident rates; GF draws members, SFG's graph over the members is the kernels' blown up
@pytest.mark.parametrize("opts", [dict(), dict(q_floor=0.05, conditional_q=True, J=3, M=9)])
def test_gf_ensemble_matches_numpy(problem, opts):
    freqs, X, y = problem
    J, M = opts.pop("J", 2), opts.pop("M", 12)
    comb = GraphFeedback(N * len(STEPS), J, M, 1.0, SELF_CONFIDENT, 0.1, 1, sort_members=True,
                         **opts)
    eng = engine(freqs, comb, 11, steps=STEPS)
    ours = run(eng, X, y)
    ref, theta, logw, record = gf_stream(freqs, X, y, 11, J=J, M=M, steps=STEPS, **opts)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(eng.experts.theta), theta, rtol=1e-9, atol=1e-12)
    lw = np.asarray(comb.log_w)
    np.testing.assert_allclose(lw - lw.max(), logw - logw.max(), rtol=1e-9, atol=1e-9)
    # each node holds its members in index order, so the members of a kernel run in turn
    members = [sorted(record[-1][1])]
    assert list(np.asarray(comb.members)[comb.chosen_node, :len(members[0])]) == members[0]


# A change test restarts the self-confident rate: half-way the targets move up by 2, or the
# labels (the sign of x_0) turn over; a low threshold makes the test fire soon after
@pytest.mark.parametrize("statistic,threshold", [("squared", 1.0), ("mistakes", 4.0)])
def test_gf_change_test_restarts_the_rate_as_numpy(problem, statistic, threshold):
    freqs, X, y = problem
    later = np.arange(T) >= T // 2
    if statistic == "mistakes":
        y = np.where(later, -1.0, 1.0) * np.where(X[:, 0] > 0, 1.0, -1.0)
    else:
        y = y + 2.0 * later
    comb = GraphFeedback(N * len(STEPS), 2, 12, 1.0, SELF_CONFIDENT, 0.1, 1, sort_members=True,
                         change=ChangeTest(CHANGE_STATISTICS[statistic], 0.005, threshold))
    eng = engine(freqs, comb, 11, steps=STEPS)
    ours = run(eng, X, y)
    ref, theta, logw, record = gf_stream(freqs, X, y, 11, J=2, M=12, steps=STEPS,
                                         change=(statistic, 0.005, threshold))
    test = record[-1]
    assert test.alarms and comb.change.alarms == len(test.alarms)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(eng.experts.theta), theta, rtol=1e-9, atol=1e-12)
    lw = np.asarray(comb.log_w)
    np.testing.assert_allclose(lw - lw.max(), logw - logw.max(), rtol=1e-9, atol=1e-9)
    # the state holds the test as the textbook's sums give it: rounds since the last alarm, their
    # mean, the cumulative deviation and its minimum
    n, mean, cum, low, alarms = eng.get_state()["combiner.change_test"]
    assert n == len(test.xs) and alarms == len(test.alarms)
    np.testing.assert_allclose([mean, cum, low], [np.mean(test.xs), test.cs[-1], min(test.cs)],
                               rtol=1e-9, atol=1e-12)


def test_page_hinkley_reference_fires_on_a_mean_shift_only():
    """The reference test itself: silent on a stationary stream of mistakes at rate 0.2 (10^4
    rounds), firing within 300 rounds once the rate becomes 0.6."""
    rng = np.random.default_rng(0)
    test = PageHinkley(0.005, 50.0)
    for t in range(10_000):
        test.add(float(rng.random() < 0.2), t)
    assert test.alarms == []
    for t in range(10_000, 10_300):
        if test.add(float(rng.random() < 0.6), t):
            break
    assert test.alarms and test.alarms[0] < 10_300


def test_change_test_arguments_are_checked():
    with pytest.raises(ValueError, match="SELF_CONFIDENT"):
        GraphFeedback(6, 2, 2, 1.0, 1, 0.1, 1, change=ChangeTest(CHANGE_STATISTICS["mistakes"]))
    with pytest.raises(ValueError, match="kind"):
        ChangeTest(7)
    for delta, threshold in ((-1.0, 50.0), (0.005, 0.0), (np.nan, 50.0)):
        with pytest.raises(ValueError, match="delta must be >= 0 and threshold > 0"):
            ChangeTest(CHANGE_STATISTICS["squared"], delta, threshold)


def test_a_change_test_state_at_the_threshold_is_accepted():
    """The check measures the deviation above the minimum as the test does (cum - low): a state
    the test left without an alarm loads, whatever rounding cum <= low + threshold would see."""
    ChangeTest(CHANGE_STATISTICS["mistakes"]).check(
        "test", np.array([3.0, 0.5, 5.3201679488614975, -44.679832051138504, 0.0]))


@pytest.mark.parametrize("sums,match", [
    ([1, 0.5, np.nan, 0, 0], "NaN or infinity"), ([-1, 0, 0, 0, 0], "whole"),
    ([2.5, 0, 0, 0, 0], "whole"),
    ([2.0 ** 60, 0, 0, 0, 0], "whole"), ([3, 0.5, 1.0, 0, 1e300], "whole"),
    ([3, 7.0, 0, 0, 0], r"mean in \[0, 1\]"), ([3, 0.5, 1.0, 2.0, 0], "minimum"),
    ([3, 0.5, 60.0, 0, 0], "at most 50 below"), ([0, 0.5, 0, 0, 0], "no rounds")])
def test_a_change_test_no_run_reaches_is_refused(problem, sums, match):
    freqs, X, y = problem
    make = lambda: GraphFeedback(N * len(STEPS), 2, 12, 1.0, SELF_CONFIDENT, 0.1, 1,  # noqa: E731
                                 sort_members=True,
                                 change=ChangeTest(CHANGE_STATISTICS["mistakes"]))
    eng = engine(freqs, make(), 11, steps=STEPS)
    run(eng, X[:50], np.where(y[:50] > 0.5, 1.0, -1.0))
    state = eng.get_state()
    state["combiner.change_test"] = np.array(sums, dtype=float)
    fresh = engine(freqs, make(), 11, steps=STEPS)
    before = fresh.get_state()
    with pytest.raises(ValueError, match=match):
        fresh.set_state(state)
    for key, value in fresh.get_state().items():
        np.testing.assert_array_equal(value, before[key])


@pytest.mark.parametrize("refine", [False, True])
def test_sfg_ensemble_matches_numpy(problem, refine):
    freqs, X, y = problem
    rng = np.random.default_rng(3)
    m = len(STEPS)
    A = np.kron(random_graph(rng, N, 3), np.ones((m, m), dtype=bool))
    div = np.kron(rng.uniform(0, 1, (N, N)), np.ones((m, m)))
    dom = None if refine else greedy_dom(A)
    ptr, idx = csr(A)
    opts = dict(refine=True, top_k=5) if refine else {}
    comb = SimilarityGraphFeedback(N * m, ptr, idx, dom, div, 0, 1.0, SELF_CONFIDENT, 1.0,
                                   SELF_CONFIDENT, 0.1, 1, **opts)
    eng = engine(freqs, comb, 5, steps=STEPS)
    ours = run(eng, X, y)
    ref, theta, logw, u, _ = sfg_stream(freqs, X, y, 5, A=A, dom=dom, div=div, steps=STEPS,
                                        **opts)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(eng.experts.theta), theta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(comb.u) / np.sum(comb.u), u / u.sum(), rtol=1e-9)


def test_self_confident_rates_keep_their_sums_in_the_state(problem):
    freqs, X, y = problem
    comb = GraphFeedback(N, 2, 4, 1.0, SELF_CONFIDENT, 0.1, 1)
    run(engine(freqs, comb, 1, eta=(2.0, ADAGRAD)), X[:50], y[:50])
    state = comb.get_state()
    assert state["rate_v"][0] > 0
    for bad in (-1.0, np.nan):
        broken = dict(state, rate_v=np.array([bad]))
        with pytest.raises(ValueError, match="rate_v"):
            comb.check_state(broken)
    with pytest.raises(ValueError, match="rate_v"):
        comb.check_state({k: v for k, v in state.items() if k != "rate_v"})
    assert "rate_v" not in GraphFeedback(N, 2, 4, 0.1, 1, 0.1, 1).get_state()


def test_exploration_rates_are_not_self_confident():
    with pytest.raises(ValueError, match="eta_e"):
        GraphFeedback(N, 2, 4, 1.0, SELF_CONFIDENT, 1.0, SELF_CONFIDENT)
    A = np.ones((N, N), dtype=bool)
    ptr, idx = csr(A)
    with pytest.raises(ValueError, match="xi"):
        SimilarityGraphFeedback(N, ptr, idx, A[0], np.zeros((N, N)), 0, 0.1, 1, 0.1, 1, 1.0,
                                SELF_CONFIDENT)


def test_sfgr_q_at_least_beta_and_dominates(problem):
    freqs, X, y = problem
    rng = np.random.default_rng(4)
    A = random_graph(rng, N, 2)
    div = rng.uniform(0, 1, (N, N))
    ptr, idx = csr(A)
    beta = 0.05
    comb = SimilarityGraphFeedback(N, ptr, idx, None, div, 0, 0.1, 1, 0.1, 1, 0.1, 1,
                                   refine=True, top_k=0, beta=beta)
    eng = engine(freqs, comb, 1)
    for t in range(1, 120):
        eng.predict_learn_one(X[t], y[t])
        At = comb.refined_adjacency()
        dom = comb.dominating_set
        assert At[dom].any(axis=0).all()               # D_t dominates G_t
        q = comb.observation_probabilities(t)
        assert (q >= beta - 1e-12).all()


def test_sfg_incremental_q_equals_direct_sum(problem):
    """q_i from the O(1) running sums equals sum_{j in N_in(i)} p_j recomputed from scratch."""
    freqs, X, y = problem
    rng = np.random.default_rng(8)
    A = random_graph(rng, N, 5)
    dom = greedy_dom(A)
    ptr, idx = csr(A)
    comb = SimilarityGraphFeedback(N, ptr, idx, dom, np.zeros((N, N)), 0, 0.1, 1, 3.0, 1, 0.1, 1)
    eng = engine(freqs, comb, 3)
    for t in range(1, T):
        q_direct = comb.observation_probabilities(t)
        eng.predict_learn_one(X[t - 1], y[t - 1])
        S = np.flatnonzero(A[comb.chosen_node])
        np.testing.assert_allclose(np.asarray(comb.q)[S], q_direct[S], rtol=1e-10)
        u = np.asarray(comb.u)
        np.testing.assert_allclose(np.asarray(comb.s), A.T.astype(float) @ u, rtol=1e-10)
        np.testing.assert_allclose(comb.dstate[0], u.sum(), rtol=1e-12)


def test_sfg_complete_graph_equals_hedge(problem):
    freqs, X, y = problem
    A = np.ones((N, N), dtype=bool)
    ptr, idx = csr(A)
    dom = np.zeros(N, dtype=bool)
    dom[0] = True
    comb = SimilarityGraphFeedback(N, ptr, idx, dom, np.zeros((N, N)), 0, 0.1, 1, 0.1, 1, 0.3, 1)
    ours = run(engine(freqs, comb, 1), X, y)
    raker = run(engine(freqs, Hedge(N, 0.1, 1), 1), X, y)
    np.testing.assert_allclose(ours, raker, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(comb.q), 1.0, rtol=1e-14)


def test_gf_uniform_large_m_matches_hedge(problem):
    freqs, X, y = problem
    comb = GraphFeedback(N, 1, 600, 0.1, 1, 1.0, 0)
    ours = run(engine(freqs, comb, 1), X, y)
    raker = run(engine(freqs, Hedge(N, 0.1, 1), 1), X, y)
    np.testing.assert_allclose(ours, raker, rtol=1e-9, atol=1e-12)


def test_gf_monte_carlo_conditional_q():
    """With w fixed, the frequency of i in S_t matches sum_j p_j A_ij given the graph, and the
    unconditional frequency matches eq. (21) within its known bias."""
    n, J, M, reps = 8, 2, 3, 40000
    comb = GraphFeedback(n, J, M, 0.0, 0, 0.3, 0, conditional_q=True)
    np.asarray(comb.log_w)[:] = np.log(np.arange(1, n + 1.0))
    comb.rebuild_weights_state()
    freqs = np.zeros((n, 1, 1))
    eng = Engine(RFFBank(freqs), OGDExperts(n, 2, 0, 0.0, 0.0, 0), comb, np.random.PCG64(0))
    hits = np.zeros(n)
    q_sum = np.zeros(n)
    ell = np.zeros(n)
    attached = np.zeros(n)
    L = np.linspace(0.2, 1.0, n)
    x = np.zeros(1)
    for _ in range(reps):
        eng.predict_learn_one(x, 0.0)              # f = 0, y = 0: zero losses, w stays fixed
        members = np.asarray(comb.members)[comb.chosen_node, :comb.n_members[comb.chosen_node]]
        hits[members] += 1
        q_sum += np.asarray(comb.adj).T @ np.asarray(comb.node_p)
        ell[members] += L[members] / np.asarray(comb.q)[members]
        attached += np.asarray(comb.adj).any(axis=0)
    freq = hits / reps
    np.testing.assert_allclose(freq, q_sum / reps, atol=4 * np.sqrt(0.25 / reps))
    # given the graph, E[L 1{i in S} / q] = L for every kernel the graph attaches
    np.testing.assert_allclose(ell / reps, L * attached / reps, rtol=0.06)


def test_gf_eq21_is_close_to_the_inclusion_frequency():
    """Eq. (21) uses the unconditional edge probabilities: not exact (spec §9.4), but close."""
    n, J, M, reps = 8, 2, 3, 30000
    comb = GraphFeedback(n, J, M, 0.0, 0, 0.3, 0)
    np.asarray(comb.log_w)[:] = np.log(np.arange(1, n + 1.0))
    comb.rebuild_weights_state()
    eng = Engine(RFFBank(np.zeros((n, 1, 1))), OGDExperts(n, 2, 0, 0.0, 0.0, 0), comb,
                 np.random.PCG64(2))
    hits = np.zeros(n)
    q21 = np.zeros(n)
    seen = np.zeros(n)
    for _ in range(reps):
        eng.predict_learn_one(np.zeros(1), 0.0)
        node = comb.chosen_node
        members = np.asarray(comb.members)[node, :comb.n_members[node]]
        hits[members] += 1
        q21[members] += np.asarray(comb.q)[members]
        seen[members] += 1
    np.testing.assert_allclose(hits / reps, q21 / seen, rtol=0.1)


def test_sfg_monte_carlo_inclusion_and_unbiased_loss():
    n, reps = 10, 40000
    rng = np.random.default_rng(0)
    A = random_graph(rng, n, 3)
    dom = greedy_dom(A)
    ptr, idx = csr(A)
    comb = SimilarityGraphFeedback(n, ptr, idx, dom, np.zeros((n, n)), 0, 0.0, 0, 0.0, 0,
                                   0.2, 0)
    np.asarray(comb.u)[:] = np.arange(1, n + 1.0)
    comb.refresh_state()
    eng = Engine(RFFBank(np.zeros((n, 1, 1))), OGDExperts(n, 2, 0, 0.0, 0.0, 0), comb,
                 np.random.PCG64(1))
    q = comb.observation_probabilities(1)
    L = np.linspace(0.1, 1.0, n)                   # a fixed loss per kernel
    hits = np.zeros(n)
    ell = np.zeros(n)
    x = np.zeros(1)
    for _ in range(reps):
        eng.predict_learn_one(x, 0.0)
        S = np.flatnonzero(A[comb.chosen_node])
        hits[S] += 1
        ell[S] += L[S] / np.asarray(comb.q)[S]
    np.testing.assert_allclose(hits / reps, q, atol=4 * np.sqrt(0.25 / reps))
    np.testing.assert_allclose(ell / reps, L, rtol=0.05)


def test_discount_hedge_legacy_unnormalised(problem):
    freqs, X, y = problem
    exp_ = OGDExperts(N, 2 * D, 0, 0.0, 0.1, 1)
    comb = DiscountHedge(N, 0.5, normalize=False)
    eng = Engine(RFFBank(freqs), exp_, comb, np.random.PCG64(0))
    ours = run(eng, X, y)
    # NumPy: theta -= eta 2 (f - y) z; w <- w 0.5^{(f - y)^2}, w_1 = 1/N; y_hat = sum w f
    theta = np.zeros((N, 2 * D))
    w = np.full(N, 1.0 / N)
    ref = []
    for t in range(1, T + 1):
        Z = np.array([rff(freqs[i], X[t - 1]) for i in range(N)])
        f = np.einsum("ij,ij->i", theta, Z)
        ref.append(w @ f)
        theta -= (0.1 / np.sqrt(t)) * 2 * (f - y[t - 1])[:, None] * Z
        w = w * 0.5 ** ((f - y[t - 1]) ** 2)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    comb2 = DiscountHedge(N, 0.5)
    ours2 = run(Engine(RFFBank(freqs), OGDExperts(N, 2 * D, 0, 0.0, 0.1, 1), comb2,
                       np.random.PCG64(0)), X, y)
    assert np.abs(ours2).mean() > np.abs(ours).mean()   # normalised: no shrinkage towards 0


def test_sfgr_monte_carlo_inclusion_is_exact():
    n, reps = 10, 40000
    rng = np.random.default_rng(3)
    A = random_graph(rng, n, 2)
    div = rng.uniform(0, 1, (n, n))
    ptr, idx = csr(A)
    comb = SimilarityGraphFeedback(n, ptr, idx, None, div, 0, 0.0, 0, 0.0, 0, 0.2, 0,
                                   refine=True, top_k=3)
    np.asarray(comb.u)[:] = rng.uniform(0.5, 2.0, n)
    comb.refresh_state()
    eng = Engine(RFFBank(np.zeros((n, 1, 1))), OGDExperts(n, 2, 0, 0.0, 0.0, 0), comb,
                 np.random.PCG64(4))
    eng.predict_learn_one(np.zeros(1), 0.0)          # builds D_t and G_t
    q = comb.observation_probabilities(1)
    G = comb.refined_adjacency()
    assert (q >= 0.2 / 3 - 1e-12).all()               # >= xi / |D_t| by domination
    hits = np.zeros(n)
    for _ in range(reps):
        eng.predict_learn_one(np.zeros(1), 0.0)
        hits[np.flatnonzero(G[comb.chosen_node])] += 1
    np.testing.assert_allclose(hits / reps, q, atol=4 * np.sqrt(0.25 / reps))


@pytest.mark.parametrize("refine", [False, True])
def test_node_and_observation_probability_invariants(problem, refine):
    freqs, X, y = problem
    rng = np.random.default_rng(6)
    A = random_graph(rng, N, 3)
    ptr, idx = csr(A)
    comb = SimilarityGraphFeedback(N, ptr, idx, None if refine else greedy_dom(A),
                                   rng.uniform(size=(N, N)), 0, 0.1, 1, 0.5, 1, 0.1, 1,
                                   refine=refine, top_k=3)
    eng = engine(freqs, comb, 5)
    for t in range(1, 150):
        eng.predict_learn_one(X[t - 1], y[t - 1])
        p = comb.node_probabilities(t + 1)
        dom = comb.dominating_set
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        assert (p[dom] >= comb.xi_at(t + 1) / len(dom) - 1e-15).all()
        q = comb.observation_probabilities(t + 1)
        assert ((q > 0) & (q <= 1 + 1e-12)).all()
        assert (q >= comb.xi_at(t + 1) / len(dom) - 1e-12).all()     # domination bound
