"""Whole models as experts: expert k is the compiled engine of member model k, which predicts and
learns on the round's sample in turn (a mixture of models under a second-level combiner).

A member engine runs its own round (its features, experts, combiner and target standardisation)
and draws from its own round stream; the mixture's lock serialises the members' rounds, so a
member must be used through the mixture while the mixture learns.
"""
from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.engine cimport Engine


cdef class ModelExperts(ExpertBank):
    """One expert per member engine; predict_learn() runs the member's own step and returns its
    prediction, with the member's squared loss (f - y)^2 as the expert's loss."""

    def __init__(self, engines):
        engines = tuple(engines)
        if not engines or not all(isinstance(e, Engine) for e in engines):
            raise ValueError("ModelExperts needs compiled engines (models without a Python "
                             "feature map)")
        widths = {(<Engine>e).n_features for e in engines}
        if len(widths) != 1:
            raise ValueError(f"the members take different numbers of features: {sorted(widths)}")
        self.engines = engines
        self.n_experts = len(engines)
        self.independent = True
        self.whole_models = True
        self.grows = any((<Engine>e).grows for e in engines)

    cdef inline Engine member(self, int k) noexcept:
        return <Engine>self.engines[k]

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef double f
        with gil:
            f = self.member(k).predict_ptr(x)
        return f

    cdef double predict_learn(self, int k, const double* x, const double* z, Round* ctx,
                              double* loss) noexcept nogil:
        # the member's step returns the prediction it made before learning y: the mixture's
        # expert prediction, without a second pass of the member's features
        cdef double f
        with gil:
            f = self.member(k).step_ptr(x, ctx.y)
        loss[0] = (f - ctx.y) * (f - ctx.y)
        return f

    cdef bint needs_room(self) noexcept nogil:
        cdef int k
        cdef bint any_room = False
        with gil:
            for k in range(self.n_experts):
                if self.member(k).grows and self.member(k).needs_room():
                    any_room = True
        return any_room

    def reserve(self):
        cdef int k
        for k in range(self.n_experts):
            if self.member(k).grows:
                self.member(k).make_room()

    def admit(self, long n_more):
        for engine in self.engines:
            engine._admit(n_more)

    def check_input(self, X):
        for engine in self.engines:
            engine._check_input(X)

    @property
    def n_rejected_updates(self):
        """Updates the members refused (their own guards)."""
        return sum(engine.n_rejected_updates for engine in self.engines)
