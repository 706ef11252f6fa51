from fastomkl._core.base cimport ExpertBank
from fastomkl._core.engine cimport Engine

cdef class ModelExperts(ExpertBank):
    cdef readonly tuple engines             # the member models' compiled engines
    cdef Engine member(self, int k) noexcept
