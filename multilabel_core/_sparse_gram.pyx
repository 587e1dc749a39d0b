# cython: language_level=3
"""Dense inner products ``X Z^T`` of two sparse row sets, for the stock kernels (multilabel_core.kernels).

scipy's sparse-times-sparse product builds a sparse result (two passes over the structure, an
index per stored value) which the kernels then densify; a kernel matrix is dense, so the rows
are accumulated straight into the dense result instead: row i of ``X Z^T`` is the sum, over the
stored ``x_ik``, of ``x_ik`` times row k of ``Z^T`` (Gustavson's row-by-row product, F. G.
Gustavson, *Two fast algorithms for sparse matrices: multiplication and permuted
transposition*, ACM TOMS 4(3), 1978, with a dense accumulator).  The cost is the number of
products ``sum_k nnz(X[:, k]) nnz(Z[:, k])``, not n_X n_Z d.
"""



def sparse_gram_rows(
    double[:, ::1] out,
    const double[::1] x_data,
    const Py_ssize_t[::1] x_indices,
    const Py_ssize_t[::1] x_indptr,
    Py_ssize_t row_start,
    const double[::1] zt_data,
    const Py_ssize_t[::1] zt_indices,
    const Py_ssize_t[::1] zt_indptr,
):
    """``out[r] = X[row_start + r] @ Z^T`` for every row r of ``out`` (overwritten).

    ``x_*`` are the CSR arrays of X, ``zt_*`` those of ``Z^T`` (CSR of shape (d, n_Z)); the
    caller guarantees canonical structure and indices within bounds (checked in Python).
    """
    cdef Py_ssize_t n_rows = out.shape[0], n_z = out.shape[1]
    cdef Py_ssize_t r, p, q, k, row
    cdef double value
    with nogil:
        for r in range(n_rows):
            for q in range(n_z):
                out[r, q] = 0.0
            row = row_start + r
            for p in range(x_indptr[row], x_indptr[row + 1]):
                k = x_indices[p]
                value = x_data[p]
                for q in range(zt_indptr[k], zt_indptr[k + 1]):
                    out[r, zt_indices[q]] += value * zt_data[q]
