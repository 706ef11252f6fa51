"""Graph-aided online multi-kernel learning (Ghari & Shen, JMLR 2023): OMKL-GF, OMKL-SFG, OMKL-SFG-R.

All three run Raker's per-kernel models (random features, OGD on
L_i = loss(theta_i . z_i, y) + lam ||theta_i||^2) but evaluate and update only a subset S_t of the
kernels each round, chosen through a feedback graph.  Kernels outside S_t are not computed at all,
so a round costs O(|S_t| d D) instead of O(N d D).  The updates of the kernels in S_t use
importance weights 1/q_i, q_i = P(i in S_t):
theta_i -= eta_t grad L_i / q_i and w_i *= exp(-eta_t L_i / q_i).

* ``OMKLGF`` (Alg. 1-3): a random bipartite graph of J selective nodes, each attached to M kernels
  drawn from the weights mixed with uniform exploration eta_e^j; one selective node is drawn.
* ``OMKLSFG`` (Alg. 5): a fixed similarity graph (Alg. 4, ``fastomkl.graph.similarity_graph``)
  on the kernels, out-degree M with the self-loop; a node I_t is drawn from
  p = (1 - xi) u / U + xi Unif(D), D a dominating set, and S_t = N_out(I_t); the node weights u
  follow Exp3 on the loss of the combined prediction.
* ``OMKLSFGR`` (Alg. 6): as SFG, but every round the nodes with large p form D_t and the graph is
  refined so that D_t dominates it, which guarantees q_i >= beta.

Prediction without learning (``predict``, ``predict_one``) is deterministic and draws nothing:
GF uses the M kernels with the largest weights, SFG/SFG-R the out-neighbourhood of argmax u (in
the refined graph of the last round for SFG-R), each mixed with the normalised kernel weights;
``predict_with="all"`` uses every kernel instead.

Fidelity switches
-----------------
The defaults are the paper's algorithms.  Each switch below reproduces a behaviour of the authors'
released code (the implementation the authors published with the paper); ``legacy_options(model_name,
dataset)`` returns all of them.

============================  ======================  =========================================
parameter                     legacy value            default (paper)
============================  ======================  =========================================
``legacy_sampler``            True                    False: exact inverse-CDF sampling.  True:
                                                      each GF kernel draw / SFG(-R) node draw k
                                                      becomes min(k + 1, N - 1) (off by one)
``divergence``                "legacy_nan"            "exact" S of eq. (27) in closed form;
                              ("legacy_code")         "legacy_code": the released formulas with
                                                      their missing return added
``dominating``                "legacy"                "chvatal" greedy set cover
``exploit_after`` (SFG)       300 (Bias: 500) with    None.  With a value T0: I_t = argmax u for
``exploit="node0"``                                   t > T0 (the paper's text); "node0": I_t = 0
``freeze_graph_after``        302 (Bias: 502) GF;     None.  GF: no new bipartite graph after the
                              300 (500) SFG-R         round; SFG-R: D_t and G_t frozen
``q_floor``                   0.05 GF, 0.1 SFG(-R)    None: 1/q unclipped
``p_floor``                   0.2 (SFG, SFG-R)        None: u update divides by p_{I_t}
``regularizer_after_update``  True                    False: lam ||theta_t||^2 in L_i
``refine_scope`` (SFG-R)      "all"                   "uncovered": edges only for nodes D_t
                                                      does not cover
``predict_set`` (SFG-R)       "unrefined"             "refined" N_out_t(I_t)
============================  ======================  =========================================

Further options (not legacy): ``q="conditional"`` (GF: q_i = sum_j p_j A_ij, exactly unbiased given
the graph), ``refine_rule="argmin"`` (SFG-R), ``beta`` (SFG-R constant threshold instead of the
``top_k`` rule), ``graph_dim`` (the dimension of the divergence integral; default: the data's).
"""
from __future__ import annotations

import functools

import numpy as np

from fastomkl._estimator import BinaryClassifier, OnlineEstimator
from fastomkl._core.engine import Engine
from fastomkl._core.combiners.graph import GraphFeedback, SimilarityGraphFeedback
from fastomkl._core.steps import SELF_CONFIDENT
from fastomkl._estimator.params import Boolean, Interval, Options, take_renamed
from fastomkl._rff_models import (CLASSIFICATION_LOSSES, MAX_RATE, OGD_PARAMETERS, OGD_STEP,
                                  PAPER_EXPLORATION, REGRESSION_LOSSES, RFF_PARAMETERS,
                                  SELF_CONFIDENT_RATE, ChangeDetection, RFFModelMixin, auto,
                                  check_rate, ogd_experts, with_dtype_doc)
from fastomkl.kernels import Gaussian, Laplacian
from fastomkl.graph import adjacency_to_csr, dominating_set, similarity_graph

__all__ = ["OMKLGF", "OMKLGFClassifier", "OMKLSFG", "OMKLSFGClassifier", "OMKLSFGR",
           "OMKLSFGRClassifier", "legacy_options"]


def legacy_options(model: str, dataset: str | None = None) -> dict:
    """The parameters that make a model behave like the authors' released code.

    ``model`` is "OMKLGF", "OMKLSFG" or "OMKLSFGR"; on "bias_correction" the released notebooks
    use 500 instead of 300 rounds before exploiting/freezing.
    """
    t0 = 500 if dataset in ("bias", "bias_correction") else 300
    common = {"regularizer_after_update": True, "legacy_sampler": True}
    if model.startswith("OMKLGF"):
        return {**common, "q_floor": 0.05, "freeze_graph_after": t0 + 2}
    sfg = {**common, "q_floor": 0.1, "p_floor": 0.2, "divergence": "legacy_nan",
           "dominating": "legacy"}
    if model.startswith("OMKLSFGR"):
        sfg.pop("dominating")
        return {**sfg, "freeze_graph_after": t0, "refine_scope": "all",
                "predict_set": "unrefined"}
    if model.startswith("OMKLSFG"):
        return {**sfg, "exploit_after": t0, "exploit": "node0"}
    raise ValueError(f"no legacy options for {model!r}")


def _or_zero(value):
    """An optional round or floor as the compiled code takes it: 0 for None (none)."""
    return 0 if value is None else value


# Declarations shared by the graph models (fastomkl._estimator.params).
MAX_COUNT = 10_000          # kernels per node, selective nodes, top-k: far beyond any dictionary
ROUND = [None, Interval("int", 1, 2 ** 62)]
PROBABILITY_RATE = ["auto", None, Interval("real", 0.0, 1.0, closed="right")]
FLOOR = [None, Interval("real", 0.0, 1.0)]
_GRAPH_PARAMETERS = {
    **RFF_PARAMETERS, **OGD_PARAMETERS, "eta": OGD_STEP,
    "M": ["auto", Interval("int", 1, MAX_COUNT)],
    "q_floor": FLOOR,
    "legacy_sampler": [Boolean()],
    "predict_with": [Options("subset", "all")],
}
_SIMILARITY_PARAMETERS = {
    **_GRAPH_PARAMETERS,
    "eta_u": ["auto", None, Interval("real", 0.0, MAX_RATE, closed="right")],
    "xi": PROBABILITY_RATE,
    "divergence": [Options("exact", "legacy_code", "legacy_nan")],
    "graph_dim": [None, Interval("int", 1, MAX_COUNT)],
    "p_floor": FLOOR,
    "exploit_after": [None, Interval("int", 0, 2 ** 62)],
}
# Under M="auto" a similarity graph has out-degree min(AUTO_DEGREE, number of kernels), and a
# selective node of OMKL-GF draws AUTO_DEGREE kernels (AUTO_DEGREE times the members per kernel
# of a step ensemble).
AUTO_DEGREE = 10


def _unit_kernels():
    return [Gaussian(0.5), Gaussian(2.0), Laplacian(1.0)]


_COMMON_DOC = """
    kernels : list of Kernel, default None
        The dictionary; None is paper 000's 76 kernels (``fastomkl.paper000_dictionary()``).
    n_components : int, default 50
        Random frequencies per kernel (D); each kernel's model has 2D weights.
    M : {m_type}
        {m_doc}
    eta : "ensemble", "auto", "adagrad" or float, default "ensemble"
        OGD step size.  "ensemble" adapts to the data and keeps adapting on a stream that
        changes: each kernel runs three models with the constant steps 2^-4, 2^-2 and 1
        (truncated, proximal, on regression targets standardised online; see ``Raker``), and
        the graph's experts are these kernel x step members, expert k * m + s the member s of
        kernel k ({m_ensemble}).  "auto" (or "adagrad", the former default) is one
        model per kernel with truncated AdaGrad-norm steps whose accumulator estimates the
        full-information one (see ``fastomkl._rff_models``): its steps only shrink, so after a
        change it stays slow.  Under either rule the weights' rates are self-confident,
        sqrt(ln N / (1 + V_t)) with V_t the accumulated second moment of the
        importance-weighted losses, and the exploration rates the paper's 0.1 / sqrt(t).
        Measured on 13 shipped data sets and 7 of river's drifting streams, each in recorded
        order and shuffled: "ensemble" within {ensemble_worst} of the best point of a step grid in
        every cell, "auto" up to {auto_worst} in recorded order (bench/results/defaults_orders.md).
        A number is the paper's step, constant or eta / sqrt(t) (``eta_schedule``):
        ``eta=0.1`` is the paper's experimental setting.
    eta_schedule : {{"inv_sqrt", "constant"}}, default "inv_sqrt"
        Schedule shared by every rate of the model (the paper's experiments: 0.1 / sqrt(t)).
    eta_combiner : "auto" or float, default "auto"
        Rate of the kernel weights' exponential update; "auto" uses a numeric ``eta``
        (self-confident under "ensemble" and "auto").  Formerly ``eta_hedge`` (still accepted,
        with a FutureWarning).
    lam : float, default 1e-3
        Weight of lam ||theta_i||^2 in every kernel's loss.
    loss : str, default "auto"
        {loss_doc}
    q_floor : float or None
        Importance weights use 1 / max(q, q_floor) (legacy: {q_floor_legacy}); None: no clip.
    legacy_sampler : bool, default False
        Off-by-one inverse-CDF draws of the released code (see the module docstring).
    regularizer_after_update : bool, default False
        lam ||theta||^2 in L_i after the OGD step (released code) instead of before (paper).
    predict_with : {{"subset", "all"}}, default "subset"
        Kernels used by ``predict``/``predict_one`` (see the module docstring).
    shared_draw : bool, default False
        Share one standard frequency draw per kernel family, scaled per bandwidth.
    rng_protocol : {{"default", "legacy"}}, default "default"
        "legacy" replays the authors' notebooks: with an integer ``random_state`` s, the stream of
        ``np.random.seed(s)`` draws the frequencies (``fastomkl.features.legacy_frequencies``, Gaussian
        and Laplacian kernels) and then, continuing, the per-round draws.
    random_state : None, int, SeedSequence or Generator
        Seeds the frequency draws and, on a separate stream, the per-round sampling (one stream,
        in that order, under ``rng_protocol="legacy"``)."""
_COMMON_DOC = with_dtype_doc(_COMMON_DOC)


class _GraphRFFBase(RFFModelMixin):
    _losses = REGRESSION_LOSSES
    # The kernel weights learn from importance-weighted losses L / q, whose spread grows with 1/q:
    # self-confident rates under either adaptive step rule (measured:
    # bench/results/defaults_orders.md)
    _auto_rate = SELF_CONFIDENT_RATE
    _ensemble_rate = SELF_CONFIDENT_RATE
    _renamed_parameters = {"eta_hedge": "eta_combiner"}

    def _common_config(self) -> dict:
        config = self._check_ogd_params()
        config["M"] = self._degree(len(config["kernels"]))
        config["q_floor"] = float(_or_zero(self.q_floor))
        config["predict_all"] = self.predict_with == "all"
        return config

    def _degree(self, n_kernels: int) -> int:
        return AUTO_DEGREE * self._members(self.eta) if self.M == "auto" else self.M

    def _exploration(self, rate):
        """An exploration probability's rate (OMKL-GF's eta_e, SFG's xi): the papers' 0.1 / sqrt(t)
        under either adaptive step rule, the step's number otherwise."""
        return check_rate(auto(rate), self.eta, self.eta_schedule, PAPER_EXPLORATION,
                          PAPER_EXPLORATION)

    def _experts(self, config, bank):
        return ogd_experts(config, bank.n_kernels, bank.n_outputs, config["lam"],
                           bool(self.regularizer_after_update))

    @property
    def weights_(self) -> np.ndarray:
        """Normalised kernel weights w_bar (non-negative, summing to 1).

        Returns
        -------
        ndarray of float, shape (n_kernels,)

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.

        Examples
        --------
        >>> from fastomkl import Gaussian, Laplacian, OMKLSFG
        >>> model = OMKLSFG([Gaussian(1.0), Laplacian(1.0)], n_components=8, M=1, random_state=0)
        >>> model = model.learn_one([0.1, 0.2], 1.0)
        >>> model.weights_.shape, bool(abs(model.weights_.sum() - 1) < 1e-12)
        ((2,), True)
        """
        return self._kernel_weights()


# -- OMKL-GF -------------------------------------------------------------------------------------
class _GFBase(ChangeDetection, _GraphRFFBase):
    _parameter_constraints = {**_GRAPH_PARAMETERS,
                              "loss": [Options("auto", *REGRESSION_LOSSES)],
                              "J": [Interval("int", 1, MAX_COUNT)],
                              "eta_e": PROBABILITY_RATE,
                              "q": [Options("paper", "conditional")],
                              "freeze_graph_after": ROUND,
                              **ChangeDetection._change_parameters}

    def __init__(self, kernels=None, n_components=50, M="auto", J=2, eta="ensemble",
                 eta_schedule="inv_sqrt",
                 eta_combiner="auto", eta_e="auto", lam=1e-3, loss="auto", q="paper",
                 freeze_graph_after=None, q_floor=None, legacy_sampler=False,
                 regularizer_after_update=False, predict_with="subset", shared_draw=False,
                 rng_protocol="default", random_state=None, dtype="float64",
                 detect_changes="auto", **renamed):
        self.kernels = kernels
        self.n_components = n_components
        self.M = M
        self.J = J
        self.detect_changes = detect_changes
        self.eta = eta
        self.eta_schedule = eta_schedule
        self.eta_combiner = eta_combiner
        self.eta_e = eta_e
        self.lam = lam
        self.loss = loss
        self.q = q
        self.freeze_graph_after = freeze_graph_after
        self.q_floor = q_floor
        self.legacy_sampler = legacy_sampler
        self.regularizer_after_update = regularizer_after_update
        self.predict_with = predict_with
        self.shared_draw = shared_draw
        self.rng_protocol = rng_protocol
        self.random_state = random_state
        self.dtype = dtype
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernels": _unit_kernels(), "n_components": 4, "M": 2, "J": 2, "random_state": 0},
                {"kernels": _unit_kernels(), "n_components": 4, "M": 1, "J": 1, "eta": 0.1,
                 "q": "conditional", "freeze_graph_after": 5, "random_state": 0},
                {"kernels": _unit_kernels(), "n_components": 4, "eta": "auto", "random_state": 0}]

    def _check_params(self) -> dict:
        config = self._common_config()
        config["J"] = self.J
        eta_e, kind = self._exploration(self.eta_e)
        config["eta_e"] = (min(eta_e, 1.0), kind)      # eta_e="auto" follows a step eta, at most 1
        config["conditional"] = self.q == "conditional"
        config["freeze"] = _or_zero(self.freeze_graph_after)
        # the test restarts a self-confident rate; "auto" runs it for the classifier only
        config["change"] = self._change_kind(config["eta_combiner"][1] == SELF_CONFIDENT,
                                             self._losses == CLASSIFICATION_LOSSES)
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        bank = self._rff_bank(config, n_features, feature_rng)
        experts = self._experts(config, bank)
        combiner = GraphFeedback(experts.n_experts, config["J"], config["M"],
                                 *config["eta_combiner"], *config["eta_e"], config["freeze"],
                                 config["conditional"], config["q_floor"],
                                 bool(self.legacy_sampler), config["predict_all"],
                                 sort_members=experts.per_kernel > 1,
                                 change=self._new_change_test(config["change"]))
        return Engine(bank, experts, combiner, round_bit_generator, config["standardize"])

    @property
    def graph_(self) -> np.ndarray:
        """The current bipartite graph: A (n_experts, J) bool, A[i, j] = expert i on node j (the
        experts are the kernels, or under ``eta="ensemble"`` the kernel x step members, expert
        k * m + s the member s of kernel k)."""
        return np.asarray(self._fitted_engine().combiner.adj, dtype=bool).T.copy()


_GF_DOC = _COMMON_DOC.format(
    m_type='"auto" or int, default "auto"',
    m_doc="Expert draws per selective node (its maximum degree); \"auto\" is 10, or 30 (10\n"
          "        per step) under ``eta=\"ensemble\"``.",
    m_ensemble="a selective node draws M of them", ensemble_worst="1.09x",
    auto_worst="2.18x",
    loss_doc="{loss_choices}", q_floor_legacy="0.05") + """
    J : int, default 2
        Selective nodes; node j explores with probability eta_e^j.
    eta_e : "auto" or float in (0, 1], default "auto"
        Exploration rate (same schedule); "auto" uses a numeric ``eta`` capped at 1 (the
        paper), or 0.1 / sqrt(t) under "ensemble" and "auto".
    q : {"paper", "conditional"}, default "paper"
        Observation probability: eq. (21), or sum_j p_j A_ij (exactly unbiased given the graph).
    freeze_graph_after : int or None
        Stop regenerating the bipartite graph after this round (the paper's experiments: 300).
    detect_changes : "auto" or bool, default "auto"
        Under a self-confident weight rate (``eta="ensemble"`` or ``"auto"``, ``eta_combiner``
        "auto"), restart it when the stream changes: a Page-Hinkley test (tolerance 0.005,
        threshold 50) on the combined prediction's mistakes (classifier) or squared errors in
        standard units, capped at 4 (regressor), sets V = 0 on an alarm, so the weights move again
        as fast as in the first round; ``n_changes_detected_`` counts the alarms. Without it the
        rate only shrinks, and after a change the weights stay on the old concept's kernels: on
        ConceptDriftStream's abrupt switch the classifier's error over its last 1000 rounds went
        from 0.41-0.42 to 0.20-0.23 on two seeds of four, from 0.33 to 0.31 on a third and stayed
        at 0.29 on the fourth, and the test never fired on the shipped classification data in
        either order.  "auto": True for the classifier, False for the regressor (its errors moved
        by at most 2% on the shipped regression data, and on FriedmanDrift rose by up to 8% over
        the stream and 28% over its last 1000 rounds: the weights a restarted rate moves at once
        cost more than the old weights; bench/results/change_detection.md). False: the rate of
        earlier releases (files written by them load with it).  A numeric rate has no test (True
        raises)."""


class OMKLGF(_GFBase, OnlineEstimator):
    __doc__ = ("OMKL-GF: online multi-kernel learning with bipartite graph feedback (regression)."
               "\n\n    Parameters\n    ----------" + _GF_DOC.replace(
                   "{loss_choices}", '"auto" (the squared loss), "squared" or "absolute".') + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, OMKLGF
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> kernels = [Gaussian(0.3), Gaussian(1.0), Laplacian(0.5), Laplacian(2.0)]
    >>> y = np.sin(3 * X[:, 0])
    >>> model = OMKLGF(kernels, n_components=20, M=2, J=2, random_state=0).fit(X, y)
    >>> model.graph_.shape, model.weights_.shape, model.score(X, y) > 0.8
    ((12, 2), (4,), True)
    """)


class OMKLGFClassifier(_GFBase, BinaryClassifier):
    __doc__ = ("OMKL-GF for binary classification (labels map to -1/+1)."
               "\n\n    Parameters\n    ----------" + _GF_DOC.replace(
                   "{loss_choices}", '"auto" (the logistic loss), "logistic" or "hinge".') + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, OMKLGFClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = OMKLGFClassifier([Gaussian(0.5), Laplacian(1.0)], n_components=20,
    ...                          random_state=0)
    >>> model.fit(X, y).classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)
    _losses = CLASSIFICATION_LOSSES
    _parameter_constraints = {**_GFBase._parameter_constraints,
                              "loss": [Options("auto", *CLASSIFICATION_LOSSES)]}


# -- OMKL-SFG and OMKL-SFG-R ---------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def _cached_graph(kernels: tuple, M: int, dim: int, divergence: str):
    A, delta = similarity_graph(list(kernels), M, dim=dim, divergence=divergence,
                                return_divergence=True)
    A.flags.writeable = False
    delta.flags.writeable = False
    return A, delta


class _SimilarityBase(_GraphRFFBase):
    _refine = False

    def _degree(self, n_kernels: int) -> int:
        """The graph's out-degree: M, or under "auto" min(AUTO_DEGREE, the number of kernels)."""
        if self.M == "auto":
            return min(AUTO_DEGREE, n_kernels)
        if self.M > n_kernels:
            raise ValueError(f"M must be at most the number of kernels ({n_kernels}), "
                             f"got {self.M}")
        return self.M

    def _implied_state_size(self, n_features: int) -> int:
        """The random features, and the N x N divergences and adjacency of the similarity graph
        (computed pair by pair when the engine is built), N the experts."""
        return (super()._implied_state_size(n_features)
                + 2 * (len(self.kernels_) * self._members(self.eta)) ** 2)

    def _similarity_config(self, config, n_features) -> tuple:
        """The similarity graph and its divergences, over the experts: the kernels', or under
        ``eta="ensemble"`` their members', member s of kernel k pointing to every member of the
        kernels k points to (the members of a kernel are one kernel to the graph: divergence 0)."""
        dim = n_features if self.graph_dim is None else self.graph_dim
        A, delta = _cached_graph(tuple(config["kernels"]), config["M"], dim, self.divergence)
        m = self._members(self.eta)
        if m > 1:
            block = np.ones((m, m))
            A, delta = np.kron(A, block).astype(bool), np.kron(delta, block)
        return A, delta

    def _check_similarity_params(self, config) -> dict:
        config["xi"] = self._exploration(self.xi)
        config["eta_u"] = check_rate(auto(self.eta_u), self.eta, self.eta_schedule,
                                     self._auto_rate, self._auto_rate)
        config["p_floor"] = float(_or_zero(self.p_floor))
        config["exploit_after"] = _or_zero(self.exploit_after)
        return config

    @property
    def graph_(self) -> np.ndarray:
        """The similarity graph G: adjacency (N, N) bool, A[i, j] = edge (i, j), over the graph's
        nodes: the kernels, or under ``eta="ensemble"`` their members (expert k * m + s the member
        s of kernel k; the nodes ``dominating_set_`` and ``node_weights_`` speak of too)."""
        return np.array(self._fitted_engine().combiner.adj, dtype=bool)

    @property
    def dominating_set_(self) -> np.ndarray:
        """SFG: the dominating set of G; SFG-R: D_t of the last round."""
        return self._fitted_engine().combiner.dominating_set

    @property
    def node_weights_(self) -> np.ndarray:
        """Normalised node weights u / U."""
        u = np.asarray(self._fitted_engine().combiner.u)
        return u / u.sum()


class _SFGBase(_SimilarityBase):
    _parameter_constraints = {**_SIMILARITY_PARAMETERS,
                              "loss": [Options("auto", *REGRESSION_LOSSES)],
                              "dominating": [Options("chvatal", "legacy")],
                              "exploit": [Options("argmax", "node0")]}

    def __init__(self, kernels=None, n_components=50, M="auto", eta="ensemble",
                 eta_schedule="inv_sqrt", eta_combiner="auto", eta_u="auto", xi="auto", lam=1e-3,
                 loss="auto", divergence="exact", graph_dim=None, dominating="chvatal",
                 exploit_after=None, exploit="argmax", q_floor=None, p_floor=None,
                 legacy_sampler=False, regularizer_after_update=False, predict_with="subset",
                 shared_draw=False, rng_protocol="default", random_state=None, dtype="float64",
                 **renamed):
        self.kernels = kernels
        self.n_components = n_components
        self.M = M
        self.eta = eta
        self.eta_schedule = eta_schedule
        self.eta_combiner = eta_combiner
        self.eta_u = eta_u
        self.xi = xi
        self.lam = lam
        self.loss = loss
        self.divergence = divergence
        self.graph_dim = graph_dim
        self.dominating = dominating
        self.exploit_after = exploit_after
        self.exploit = exploit
        self.q_floor = q_floor
        self.p_floor = p_floor
        self.legacy_sampler = legacy_sampler
        self.regularizer_after_update = regularizer_after_update
        self.predict_with = predict_with
        self.shared_draw = shared_draw
        self.rng_protocol = rng_protocol
        self.random_state = random_state
        self.dtype = dtype
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernels": _unit_kernels(), "n_components": 4, "M": 2, "random_state": 0},
                {"kernels": _unit_kernels(), "n_components": 4, "eta": 0.1, "exploit_after": 3,
                 "exploit": "node0", "p_floor": 0.2, "random_state": 0},
                {"kernels": _unit_kernels(), "n_components": 4, "M": 2, "eta": "auto",
                 "random_state": 0}]

    def _check_params(self) -> dict:
        config = self._check_similarity_params(self._common_config())
        config["dominating"] = self.dominating
        config["exploit_mode"] = {"argmax": 0, "node0": 1}[self.exploit]
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        A, delta = self._similarity_config(config, n_features)
        bank = self._rff_bank(config, n_features, feature_rng)
        n = A.shape[0]
        dom = np.zeros(n, dtype=bool)
        dom[dominating_set(A, config["dominating"])] = True
        ptr, idx = adjacency_to_csr(A)
        combiner = SimilarityGraphFeedback(
            n, ptr, idx, dom, delta, config["loss"], *config["eta_combiner"], *config["eta_u"],
            *config["xi"], q_floor=config["q_floor"], p_floor=config["p_floor"],
            exploit_after=config["exploit_after"], exploit_mode=config["exploit_mode"],
            legacy_sampler=bool(self.legacy_sampler), predict_all=config["predict_all"])
        return Engine(bank, self._experts(config, bank), combiner, round_bit_generator,
                      config["standardize"])


_SIM_DOC = """
    eta_u : "auto" or float, default "auto"
        Rate of the node weights' Exp3 update; "auto" uses a numeric ``eta`` (self-confident
        under "ensemble" and "auto").
    xi : "auto" or float in (0, 1], default "auto"
        Exploration rate over the dominating set (same schedule); "auto" uses a numeric ``eta``
        (0.1 / sqrt(t) under "ensemble" and "auto").
    divergence : {"exact", "legacy_code", "legacy_nan"}, default "exact"
        Kernel divergence of the similarity graph (``fastomkl.graph.kernel_divergence``).
    graph_dim : int or None
        Dimension of the divergence integral; None uses the data's number of features.
    p_floor : float or None
        The u update divides the combined loss by max(p_{I_t}, p_floor) (legacy: 0.2).
    exploit_after : int or None
        After this round I_t is not drawn any more (see ``exploit``)."""

_SFG_DOC = _COMMON_DOC.format(
    m_type='"auto" or int, default "auto"',
    m_ensemble="the similarity graph is the kernels': member s of kernel k links to every member "
               "of the M kernels k links to", ensemble_worst="1.24x", auto_worst="2.29x",
    m_doc="Out-degree of the similarity graph, self-loop included (|S_t| = M); \"auto\" is "
          "min(10, the number of kernels): with 10 kernels or fewer every node points to every "
          "kernel, each round observes them all, and ``xi``, ``eta_u`` and ``exploit_after`` "
          "change nothing (SFG and SFG-R are then the same model).  The node weights learn "
          "from the drawn node's loss alone and concentrate slowly: at M = 10 of paper 000's 76 "
          "kernels its error is 1.28x OMKL-GF's on geometric mean over bench/defaults.py's "
          "streams (3.1x on phishing), 1.11x at M = 20 for 1.6x the time a sample "
          "(bench/results/graph_degree.md).",
    loss_doc="{loss_choices}", q_floor_legacy="0.1") + _SIM_DOC + """
    dominating : {"chvatal", "legacy"}, default "chvatal"
        Greedy dominating set (``fastomkl.graph.dominating_set``).
    exploit : {"argmax", "node0"}, default "argmax"
        After ``exploit_after``: I_t = argmax u (the paper's text) or node 0 (released code)."""


class OMKLSFG(_SFGBase, OnlineEstimator):
    __doc__ = ("OMKL-SFG: online multi-kernel learning with a similarity feedback graph "
               "(regression).\n\n    Parameters\n    ----------" + _SFG_DOC.replace(
                   "{loss_choices}", '"auto" (the squared loss), "squared" or "absolute".') + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, OMKLSFG
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> kernels = [Gaussian(0.3), Gaussian(1.0), Laplacian(0.5), Laplacian(2.0)]
    >>> model = OMKLSFG(kernels, n_components=20, M=2, random_state=0).fit(X, np.sin(3 * X[:, 0]))
    >>> model.weights_.shape, model.score(X, np.sin(3 * X[:, 0])) > 0.8
    ((4,), True)
    """)


class OMKLSFGClassifier(_SFGBase, BinaryClassifier):
    __doc__ = ("OMKL-SFG for binary classification (labels map to -1/+1)."
               "\n\n    Parameters\n    ----------" + _SFG_DOC.replace(
                   "{loss_choices}", '"auto" (the logistic loss), "logistic" or "hinge".') + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, OMKLSFGClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = OMKLSFGClassifier([Gaussian(0.5), Laplacian(1.0)], n_components=20, M=2,
    ...                           random_state=0)
    >>> model.fit(X, y).classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)
    _losses = CLASSIFICATION_LOSSES
    _parameter_constraints = {**_SFGBase._parameter_constraints,
                              "loss": [Options("auto", *CLASSIFICATION_LOSSES)]}


class _SFGRBase(_SimilarityBase):
    _parameter_constraints = {**_SIMILARITY_PARAMETERS,
                              "loss": [Options("auto", *REGRESSION_LOSSES)],
                              "beta": [None, Interval("real", 0.0, 1.0, closed="right")],
                              "top_k": [Interval("int", 1, MAX_COUNT)],
                              "refine_scope": [Options("uncovered", "all")],
                              "refine_rule": [Options("argmax", "argmin")],
                              "predict_set": [Options("refined", "unrefined")],
                              "freeze_graph_after": ROUND}

    def __init__(self, kernels=None, n_components=50, M="auto", eta="ensemble",
                 eta_schedule="inv_sqrt", eta_combiner="auto", eta_u="auto", xi="auto", lam=1e-3,
                 loss="auto", beta=None, top_k=10, divergence="exact", graph_dim=None,
                 refine_scope="uncovered", refine_rule="argmax", predict_set="refined",
                 freeze_graph_after=None, exploit_after=None, q_floor=None, p_floor=None,
                 legacy_sampler=False, regularizer_after_update=False, predict_with="subset",
                 shared_draw=False, rng_protocol="default", random_state=None, dtype="float64",
                 **renamed):
        self.kernels = kernels
        self.n_components = n_components
        self.M = M
        self.eta = eta
        self.eta_schedule = eta_schedule
        self.eta_combiner = eta_combiner
        self.eta_u = eta_u
        self.xi = xi
        self.lam = lam
        self.loss = loss
        self.beta = beta
        self.top_k = top_k
        self.divergence = divergence
        self.graph_dim = graph_dim
        self.refine_scope = refine_scope
        self.refine_rule = refine_rule
        self.predict_set = predict_set
        self.freeze_graph_after = freeze_graph_after
        self.exploit_after = exploit_after
        self.q_floor = q_floor
        self.p_floor = p_floor
        self.legacy_sampler = legacy_sampler
        self.regularizer_after_update = regularizer_after_update
        self.predict_with = predict_with
        self.shared_draw = shared_draw
        self.rng_protocol = rng_protocol
        self.random_state = random_state
        self.dtype = dtype
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernels": _unit_kernels(), "n_components": 4, "M": 2, "top_k": 2,
                 "random_state": 0},
                {"kernels": _unit_kernels(), "n_components": 4, "eta": 0.1, "beta": 0.2,
                 "refine_scope": "all", "predict_set": "unrefined", "freeze_graph_after": 4,
                 "random_state": 0},
                {"kernels": _unit_kernels(), "n_components": 4, "M": 2, "top_k": 2,
                 "eta": "auto", "random_state": 0}]

    def _check_params(self) -> dict:
        config = self._check_similarity_params(self._common_config())
        if self.beta is None:
            config["beta"] = -1.0
            config["top_k"] = self.top_k
        else:
            config["beta"] = float(self.beta)
            config["top_k"] = 0
        config["refine_all"] = self.refine_scope == "all"
        config["argmin"] = self.refine_rule == "argmin"
        config["unrefined"] = self.predict_set == "unrefined"
        config["freeze"] = _or_zero(self.freeze_graph_after)
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        A, delta = self._similarity_config(config, n_features)
        bank = self._rff_bank(config, n_features, feature_rng)
        ptr, idx = adjacency_to_csr(A)
        combiner = SimilarityGraphFeedback(
            A.shape[0], ptr, idx, None, delta, config["loss"], *config["eta_combiner"],
            *config["eta_u"], *config["xi"], q_floor=config["q_floor"],
            p_floor=config["p_floor"], exploit_after=config["exploit_after"], exploit_mode=0,
            legacy_sampler=bool(self.legacy_sampler), refine=True, beta=config["beta"],
            top_k=config["top_k"], refine_all=config["refine_all"],
            refine_argmin=config["argmin"], predict_unrefined=config["unrefined"],
            freeze_after=config["freeze"], predict_all=config["predict_all"])
        return Engine(bank, self._experts(config, bank), combiner, round_bit_generator,
                      config["standardize"])

    @property
    def refined_graph_(self) -> np.ndarray:
        """G_t of the last round: G plus the refinement edges (over the nodes of ``graph_``)."""
        return self._fitted_engine().combiner.refined_adjacency()


_SFGR_DOC = _COMMON_DOC.format(
    m_type='"auto" or int, default "auto"',
    m_ensemble="the similarity graph is the kernels': member s of kernel k links to every member "
               "of the M kernels k links to; D_t and the refinement are over the members",
    ensemble_worst="1.20x", auto_worst="1.76x",
    m_doc="Out-degree of the similarity graph G, self-loop included; \"auto\" is min(10, the "
          "number of kernels): with 10 kernels or fewer every node points to every kernel and "
          "each round observes them all (SFG and SFG-R are then the same model).",
    loss_doc="{loss_choices}", q_floor_legacy="0.1") + _SIM_DOC + """
    beta : float or None
        Constant threshold: D_t = {i : p_i >= beta} (the theory wants beta <= 1/N).  None uses
        the experiments' rule: D_t = the ``top_k`` nodes of largest u (ties included).
    top_k : int, default 10
    refine_scope : {"uncovered", "all"}, default "uncovered"
        Nodes that get a refinement edge from D_t: those D_t does not cover (paper) or all.
    refine_rule : {"argmax", "argmin"}, default "argmax"
        The edge (d_i, i) uses the most (eq. 45) or least divergent d_i in D_t.
    predict_set : {"refined", "unrefined"}, default "refined"
        The prediction mixes N_out_t(I_t) of G_t (paper) or N_out(I_t) of G (released code).
    freeze_graph_after : int or None
        Keep D_t and G_t fixed after this round (I_t is still drawn)."""


class OMKLSFGR(_SFGRBase, OnlineEstimator):
    __doc__ = ("OMKL-SFG-R: OMKL with a refined similarity feedback graph, q >= beta "
               "(regression).\n\n    Parameters\n    ----------" + _SFGR_DOC.replace(
                   "{loss_choices}", '"auto" (the squared loss), "squared" or "absolute".') + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, OMKLSFGR
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> kernels = [Gaussian(0.3), Gaussian(1.0), Laplacian(0.5), Laplacian(2.0)]
    >>> y = np.sin(3 * X[:, 0])
    >>> model = OMKLSFGR(kernels, n_components=20, M=2, top_k=2, random_state=0).fit(X, y)
    >>> model.refined_graph_.shape, model.score(X, y) > 0.8
    ((12, 12), True)
    """)


class OMKLSFGRClassifier(_SFGRBase, BinaryClassifier):
    __doc__ = ("OMKL-SFG-R for binary classification (labels map to -1/+1)."
               "\n\n    Parameters\n    ----------" + _SFGR_DOC.replace(
                   "{loss_choices}", '"auto" (the logistic loss), "logistic" or "hinge".') + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, OMKLSFGRClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = OMKLSFGRClassifier([Gaussian(0.5), Laplacian(1.0)], n_components=20, M=2, top_k=1,
    ...                            random_state=0)
    >>> model.fit(X, y).classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)
    _losses = CLASSIFICATION_LOSSES
    _parameter_constraints = {**_SFGRBase._parameter_constraints,
                              "loss": [Options("auto", *CLASSIFICATION_LOSSES)]}
