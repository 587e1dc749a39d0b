cdef class KernelColumns:
    cdef readonly Py_ssize_t n_samples
    cdef readonly Py_ssize_t capacity
    cdef readonly long long hits
    cdef readonly long long misses
    cdef readonly bint precomputed
    cdef const double[:, ::1] matrix
    cdef const double[::1] diagonal
    cdef object slot_array
    cdef double[:, ::1] slots
    cdef Py_ssize_t[::1] slot_of
    cdef Py_ssize_t[::1] column_in
    cdef Py_ssize_t[::1] newer
    cdef Py_ssize_t[::1] older
    cdef Py_ssize_t newest
    cdef Py_ssize_t oldest
    cdef Py_ssize_t n_used
    cdef object compute

    cdef const double* column(self, Py_ssize_t j) except NULL nogil
    cdef void _unlink(self, Py_ssize_t slot) noexcept nogil
    cdef void _push_newest(self, Py_ssize_t slot) noexcept nogil
