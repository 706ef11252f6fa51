from fastomkl._core.base cimport FullInformation

cdef class FirstOutput(FullInformation):
    # The prediction is expert 0's (a model of one output, or a GP's mean beside the variance
    # functions that learn with it); the first n_active experts run each round.
    cdef readonly int n_active


cdef class BestOutput(FullInformation):
    # The prediction is the index of the best expert (a multiclass model's best class).
    pass
