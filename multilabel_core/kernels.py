"""Stock kernels: linear, RBF, polynomial and precomputed, on dense and scipy.sparse rows.

The estimators' ``kernel`` names are resolved through the component registry by
:func:`make_kernel`, so a kernel a plugin registers is usable by name as well.

Every kernel is a function of the inner products ``G = X Z^T`` (and, for the RBF, of
the squared row norms).  On dense rows ``G`` is one BLAS product written into the
result (a symmetric rank-k update for the training kernel ``k(X)``), and the kernel's
elementwise function is applied in place over row blocks small enough to stay in cache
(no (n_X, n_Z) temporary besides the result); on sparse rows ``G`` is computed block of
rows by block of rows, the block height chosen so that a block's temporaries fit
:data:`multilabel_core._blocks.BLOCK_BUDGET_BYTES`.  Sparse inputs stay sparse (CSR or
CSC; CSC is converted to CSR for row slicing); float32 inputs are computed in float64.

Capabilities: ``__call__(X, Z=None)`` the (n_X, n_Z) kernel block, ``diagonal(X)`` the
values k(x_i, x_i) (what SMO needs for its second-order step), ``resolve(X)`` a copy with
the data-dependent defaults fixed from the training rows.

RBF width convention.  MLRL (Zhang & Yeung, *Multi-Label Relationship Learning*, ACM
TKDD, section 5.2) sets the RBF width to the mean
pairwise Euclidean distance of the training data.  We read the width as the
standard deviation sigma of ``k(x, z) = exp(-||x - z||^2 / (2 sigma^2))``, so an RBF
kernel with neither ``gamma`` nor ``width`` resolves to::

    width = mean_{i < j} ||x_i - x_j||_2,     gamma = 1 / (2 width^2).
"""

from __future__ import annotations

import inspect
from typing import ClassVar, Iterator

import attrs
import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ._blocks import BLOCK_BUDGET_BYTES, row_blocks
from .validation import SYMMETRY_RTOL, check_symmetric, check_X, count, positive, real
from .base import Kernel

__all__ = [
    "PSD_RTOL",
    "LinearKernel",
    "PolynomialKernel",
    "PrecomputedKernel",
    "RBFKernel",
    "check_positive_semidefinite",
    "make_kernel",
    "mean_pairwise_distance",
]

#: Relative agreement required when an RBF kernel is given both gamma and width.
_GAMMA_WIDTH_RTOL = 1e-12


def _rows(X, name: str):
    """Validated float64 rows; sparse ones as CSR (cheap row slices), never densified."""
    X = check_X(X, name=name)
    if sp.issparse(X):
        return X.tocsr().astype(np.float64, copy=False)
    return X.astype(np.float64, copy=False)


def _pair(X, Z):
    X = _rows(X, "X")
    if Z is None:
        return X, X
    Z = _rows(Z, "Z")
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Z has {Z.shape[1]}")
    return X, Z


def _dot(A, B) -> np.ndarray:
    """Dense ``A @ B.T`` for any mix of dense and CSR operands."""
    if sp.issparse(A) and sp.issparse(B):
        return (A @ B.T).toarray()
    if sp.issparse(B):
        return np.asarray(B @ A.T).T
    return np.asarray(A @ B.T)


def _inner_product_blocks(X, Z) -> Iterator[tuple[slice, np.ndarray]]:
    """``(rows, X[rows] @ Z.T)`` over row blocks of X; a block and its temporaries fit the budget."""
    for rows in row_blocks(X.shape[0], 3 * 8 * Z.shape[0]):
        yield rows, _dot(X[rows], Z)


#: Bytes of kernel rows one elementwise pass (RBF's distances and exp, the polynomial's power)
#: works on at a time: small enough to stay in a core's L2 cache between the passes, so that
#: the five passes of the RBF cost about one trip through memory instead of five.
_TRANSFORM_BLOCK_BYTES = 256 * 2**10


#: How many scalar sparse products (Gustavson's loop, an indexed add each) cost as much as one
#: multiply-add of a dense BLAS product: sparse rows denser than about 1 / _DENSE_ADVANTAGE are
#: multiplied densified (when the dense copies fit the block budget).
_DENSE_ADVANTAGE = 10

#: At most this many rows of a sparse Z are multiplied densified rather than by Gustavson's product.
_FEW_ROWS = 32


def _check_csr_structure(M, name: str) -> None:
    """ValueError unless M's CSR arrays are consistent: row pointers from 0 to nnz, non-decreasing, columns in range."""
    indptr, indices = M.indptr, M.indices
    n_stored = indices.shape[0]
    if (
        indptr.shape[0] != M.shape[0] + 1
        or indptr[0] != 0
        or indptr[-1] != n_stored
        or M.data.shape[0] != n_stored
        or np.any(np.diff(indptr) < 0)
        or (n_stored and (int(indices.min()) < 0 or int(indices.max()) >= M.shape[1]))
    ):
        raise ValueError(f"{name} is a CSR matrix whose index arrays are inconsistent with its shape {M.shape}")


def _gram(X, Z, symmetric: bool) -> np.ndarray:
    """``X @ Z.T`` as a new C-contiguous float64 (n_X, n_Z) array.

    Dense rows: one BLAS product written straight into the result (no block temporaries:
    the result is the only (n_X, n_Z) array), and for the training kernel (``symmetric``:
    Z is X) numpy's ``X @ X.T`` is a symmetric rank-k update (BLAS syrk), half the flops of
    a general product and symmetric bit for bit.  Two sparse operands: Gustavson's row-by-row
    product accumulated straight into the dense result
    (:func:`multilabel_core._sparse_gram.sparse_gram_rows`), whose cost is the number of
    nonzero products, unless the rows are dense enough that the BLAS product of the densified
    copies costs less (and the copies fit :data:`~multilabel_core._blocks.BLOCK_BUDGET_BYTES`).
    One sparse operand: row blocks whose temporaries fit the budget, against the other operand.
    """
    n_x, n_z = X.shape[0], Z.shape[0]
    K = np.empty((n_x, n_z))
    if not sp.issparse(X) and not sp.issparse(Z):
        np.matmul(X, X.T if symmetric else Z.T, out=K)
        return K
    d = X.shape[1]
    # A few rows of Z (a kernel column for SMO's column cache, a row block at prediction) against sparse X:
    # X times the densified few rows costs nnz(X) per row of Z, less than preparing Gustavson's operands.
    few = sp.issparse(X) and sp.issparse(Z) and n_z <= _FEW_ROWS and 8 * d * n_z <= BLOCK_BUDGET_BYTES
    if sp.issparse(X) and sp.issparse(Z) and not few:
        products = float(np.dot(np.bincount(X.indices, minlength=d).astype(np.float64),
                                np.bincount(Z.indices, minlength=d).astype(np.float64)))
        dense_fits = 8 * d * (n_x + (0 if symmetric else n_z)) <= BLOCK_BUDGET_BYTES
        if dense_fits and float(n_x) * n_z * d <= _DENSE_ADVANTAGE * products:
            dense_x = X.toarray()
            np.matmul(dense_x, dense_x.T if symmetric else Z.toarray().T, out=K)
            return K
        from ._sparse_gram import sparse_gram_rows

        # The compiled loop indexes without bounds checks: a CSR whose arrays disagree is refused here.
        _check_csr_structure(X, "X")
        _check_csr_structure(Z, "Z")
        Zt = Z.T.tocsr()
        sparse_gram_rows(
            K, X.data, X.indices.astype(np.intp, copy=False), X.indptr.astype(np.intp, copy=False), 0,
            np.ascontiguousarray(Zt.data, dtype=np.float64), Zt.indices.astype(np.intp, copy=False),
            Zt.indptr.astype(np.intp, copy=False),
        )
        return K
    if sp.issparse(X):
        if 8 * d * n_z <= BLOCK_BUDGET_BYTES:
            Zt = np.ascontiguousarray(Z.T.toarray() if sp.issparse(Z) else Z.T, dtype=np.float64)
            for rows in row_blocks(n_x, 2 * 8 * n_z):
                K[rows] = X[rows] @ Zt
            return K
        for rows in row_blocks(n_x, 3 * 8 * n_z):
            K[rows] = np.asarray(X[rows] @ Z.T)
        return K
    # Dense X, sparse Z: the product Z @ X[rows].T, transposed into K's rows.
    for rows in row_blocks(n_x, 2 * 8 * n_z):
        K[rows] = np.asarray(Z @ X[rows].T).T
    return K


def _squared_norms(X) -> np.ndarray:
    if sp.issparse(X):
        X = X.tocsr()
        counts = np.diff(X.indptr)
        rows = np.repeat(np.arange(X.shape[0]), counts)
        # bincount of no entries returns integers, whatever the weights' type.
        return np.bincount(rows, weights=X.data * X.data, minlength=X.shape[0]).astype(np.float64, copy=False)
    return np.einsum("ij,ij->i", X, X)


_STANDARDISE = (
    "standardise the features (zero mean and unit variance per column; on the command line "
    "--preprocess standardize) or rescale X"
)


def _check_rbf_scale(X, sq: np.ndarray, name: str, default_width: bool) -> None:
    """Refuse rows whose scale puts the RBF kernel's squared distances outside float64.

    The kernel is computed from ``||x||^2 + ||z||^2 - 2 x^T z``: entries beyond about 1e154
    overflow those squares (inf - inf is NaN).  Entries below about 1e-154 underflow them to
    zero; that matters only for the default width (``default_width``), which is then 0 and
    its gamma = 1 / (2 width^2) infinite: with a gamma given, such rows are at distance ~0
    and their kernel values are 1 to float64 precision, which is what is computed.  The
    error says what the data's scale did and what to do about it.
    """
    overflow = not np.all(np.isfinite(sq))
    if not overflow and not (default_width and float(sq.max()) < np.finfo(np.float64).tiny):
        return
    largest = float(abs(X).max())
    if not overflow and not (0.0 < largest and largest * largest < np.finfo(np.float64).tiny):
        return
    what = "overflow to infinity" if overflow else "underflow to zero"
    subject = (
        "the RBF width (gamma=None: the mean pairwise distance of the training rows) cannot be computed"
        if default_width
        else "the RBF kernel cannot be computed"
    )
    raise ValueError(
        f"{subject}: the scale of {name} (largest |x_ij| = {largest:.3g}) makes its squared distances {what} "
        f"in float64; {_STANDARDISE}"
    )


def _squared_distances(G: np.ndarray, x_sq: np.ndarray, z_sq: np.ndarray) -> np.ndarray:
    """``||x||^2 + ||z||^2 - 2 x^T z`` in place of G, tiny negative round-off clipped to 0."""
    G *= -2.0
    G += x_sq[:, None]
    G += z_sq[None, :]
    return np.maximum(G, 0.0, out=G)


def mean_pairwise_distance(X) -> float:
    """Compute the mean Euclidean distance over the distinct pairs ``i < j`` of the rows of X.

    Exact (no sampling); computed in row blocks (O(block * n) memory).  Distances come
    from ``||x||^2 + ||z||^2 - 2 x^T z``, accurate to about ``sqrt(machine eps) * max ||x||``
    in absolute terms.

    Parameters
    ----------
    X : array or sparse matrix of shape (n, d)
        The rows, dense or sparse, at least two.

    Returns
    -------
    float
        The mean of ``||x_i - x_j||`` over the ``n (n - 1) / 2`` pairs.

    Raises
    ------
    ValueError
        If ``X`` has fewer than two rows (or is not a valid 2-D matrix).
    """
    X = _rows(X, "X")
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"the mean pairwise distance needs at least 2 rows, got {n}")
    sq = _squared_norms(X)
    total = 0.0
    for rows, G in _inner_product_blocks(X, X):
        distances = np.sqrt(_squared_distances(G, sq[rows], sq))
        # The self-distances are 0 exactly; the formula leaves round-off there.
        distances[np.arange(rows.stop - rows.start), np.arange(rows.start, rows.stop)] = 0.0
        total += distances.sum()
    return float(total / (n * (n - 1)))


def _kernel_matrix(X, Z, transform=None) -> np.ndarray:
    """``transform(rows, G[rows])`` applied in place over cache-sized row blocks of ``G = X @ Z.T``.

    ``transform`` works in place on the block it is given (a view into the result).
    """
    K = _gram(X, Z, symmetric=Z is X)
    if transform is not None:
        for rows in row_blocks(K.shape[0], 8 * K.shape[1], _TRANSFORM_BLOCK_BYTES):
            transform(rows, K[rows])
    return K


def _power_in_place(B: np.ndarray, degree: int) -> None:
    """``B **= degree`` by repeated squaring: a few multiplications instead of ``pow`` per entry."""
    if degree == 1:
        return
    base = B.copy()
    remaining = degree - 1
    while remaining:
        if remaining & 1:
            B *= base
        remaining >>= 1
        if remaining:
            base *= base


_positive_or_none = attrs.validators.optional(positive)


@attrs.frozen
class LinearKernel(Kernel):
    """``k(x, z) = x^T z``.  Primal solvers use the features directly (``linear = True``)."""

    linear: ClassVar[bool] = True
    precomputed: ClassVar[bool] = False

    def __call__(self, X, Z=None) -> np.ndarray:
        X, Z = _pair(X, Z)
        return _kernel_matrix(X, Z)

    def diagonal(self, X) -> np.ndarray:
        """Compute the diagonal ``k(x_i, x_i)`` for the rows of ``X``, without forming the matrix.

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The rows (for a precomputed kernel, the square ``(n, n)`` training kernel).

        Returns
        -------
        ndarray of shape (n,)
            ``k(x_i, x_i)`` for every row.
        """
        return _squared_norms(_rows(X, "X"))


@attrs.frozen
class RBFKernel(Kernel):
    """``k(x, z) = exp(-gamma ||x - z||^2)``, gamma = 1 / (2 width^2).

    Give ``gamma`` or ``width`` (both only when they agree); with neither,
    :meth:`resolve` sets ``width`` to the mean pairwise Euclidean distance of the
    training rows (Zhang & Yeung, *Multi-Label Relationship Learning*, section 5.2) and
    ``gamma = 1 / (2 width^2)``.  An unresolved kernel without gamma refuses to compute, so
    that test rows never set the width.

    Parameters
    ----------
    gamma : float or None, default=None
        The inverse squared scale, positive; None to take it from ``width`` or from the
        training rows.
    width : float or None, default=None
        The width, positive; ``gamma = 1 / (2 width^2)``.

    Raises
    ------
    ValueError
        If ``gamma`` or ``width`` is not positive, or both are given and disagree.
    """

    gamma: float | None = attrs.field(default=None, validator=_positive_or_none)
    width: float | None = attrs.field(default=None, validator=_positive_or_none)

    linear: ClassVar[bool] = False
    precomputed: ClassVar[bool] = False

    def __attrs_post_init__(self):
        if self.gamma is not None and self.width is not None:
            implied = 1.0 / (2.0 * self.width**2)
            if not np.isclose(self.gamma, implied, rtol=_GAMMA_WIDTH_RTOL, atol=0.0):
                raise ValueError(
                    f"give gamma or width, not both: gamma={self.gamma!r} disagrees with "
                    f"width={self.width!r} (which means gamma = 1 / (2 width^2) = {implied!r})"
                )

    @property
    def effective_gamma(self) -> float | None:
        """``gamma`` if given, else ``1 / width**2`` if a width is given, else None (set by :meth:`resolve`)."""
        if self.gamma is not None:
            return float(self.gamma)
        if self.width is not None:
            return 1.0 / (2.0 * self.width**2)
        return None

    def resolve(self, X) -> "RBFKernel":
        """Fix ``gamma`` from the training rows when neither gamma nor width was given.

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The training rows; their mean pairwise distance becomes the width.

        Returns
        -------
        RBFKernel
            ``self`` when gamma or width was given, else a new kernel with both set.

        Raises
        ------
        ValueError
            If all rows coincide (the mean distance is round-off) or the resulting gamma is
            not representable in float64.
        """
        if self.effective_gamma is not None:
            return self
        X = _rows(X, "X")
        squared_norms = _squared_norms(X)
        _check_rbf_scale(X, squared_norms, "X", default_width=True)
        width = mean_pairwise_distance(X)
        # A squared distance ||x||^2 + ||z||^2 - 2 x^T z computed with d-term sums is within
        # 2 gamma_{d+2} (||x||^2 + ||z||^2 + 2 |x|.|z|) <= 8 gamma_{d+2} max ||x||^2 of the exact one (Higham,
        # Accuracy and Stability of Numerical Algorithms, eq. 3.5), so coinciding rows give distances, and a
        # mean, of at most the square root of that.  A width that small is round-off, which
        # gamma = 1 / (2 width^2) would amplify into every kernel value.
        unit = np.finfo(np.float64).eps / 2.0
        terms = X.shape[1] + 2
        gamma_terms = terms * unit / (1.0 - terms * unit)
        accuracy = np.sqrt(8.0 * gamma_terms * float(squared_norms.max(initial=0.0)))
        if width <= accuracy:
            raise ValueError(
                f"all rows of X coincide (mean pairwise distance {width:.3g}, not above the accuracy {accuracy:.3g} "
                f"of its computation): give gamma or width"
            )
        gamma = 1.0 / (2.0 * width**2)
        if not (np.isfinite(gamma) and gamma > 0.0):
            raise ValueError(
                f"the RBF width (gamma=None: the mean pairwise distance of the training rows) is {width:.3g}, "
                f"whose gamma = 1 / (2 width^2) is not representable in float64; {_STANDARDISE}"
            )
        return RBFKernel(gamma=gamma, width=width)

    def __call__(self, X, Z=None) -> np.ndarray:
        gamma = self.effective_gamma
        if gamma is None:
            raise ValueError("RBFKernel has neither gamma nor width: call resolve(X_train) first")
        X, Z = _pair(X, Z)
        x_sq, z_sq = _squared_norms(X), _squared_norms(Z)
        _check_rbf_scale(X, x_sq, "X", default_width=False)
        if Z is not X:
            _check_rbf_scale(Z, z_sq, "Z", default_width=False)

        def transform(rows, G):
            D = _squared_distances(G, x_sq[rows], z_sq)
            D *= -gamma
            np.exp(D, out=D)

        # The training diagonal keeps the formula's value (1 up to round-off), not an exact 1: a kernel column
        # computed alone (SMO's column cache, k(X, x_j)) has that value, and the two ways must give one matrix.
        return _kernel_matrix(X, Z, transform)

    def diagonal(self, X) -> np.ndarray:
        """Compute the diagonal ``k(x_i, x_i)`` for the rows of ``X``, without forming the matrix.

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The rows (for a precomputed kernel, the square ``(n, n)`` training kernel).

        Returns
        -------
        ndarray of shape (n,)
            ``k(x_i, x_i)`` for every row.
        """
        return np.ones(_rows(X, "X").shape[0])


@attrs.frozen
class PolynomialKernel(Kernel):
    """``k(x, z) = (gamma x^T z + coef0)^degree``; ``gamma=None`` means 1 / n_features (as scikit-learn).

    Parameters
    ----------
    degree : int, default=3
        The degree, at least 1.
    gamma : float or None, default=None
        The scale of the inner product, positive; None for ``1 / n_features``.
    coef0 : float, default=1.0
        The constant term.
    """

    degree: int = attrs.field(default=3, validator=count)
    gamma: float | None = attrs.field(default=None, validator=_positive_or_none)
    coef0: float = attrs.field(default=1.0, validator=real)

    linear: ClassVar[bool] = False
    precomputed: ClassVar[bool] = False

    def _gamma(self, n_features: int) -> float:
        return float(self.gamma) if self.gamma is not None else 1.0 / n_features

    def resolve(self, X) -> "PolynomialKernel":
        """Fix ``gamma`` from the training rows (``1 / n_features`` when not given).

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The training rows (only their number of columns is read).

        Returns
        -------
        PolynomialKernel
            A new kernel with ``gamma`` set.
        """
        return attrs.evolve(self, gamma=self._gamma(_rows(X, "X").shape[1]))

    def _apply(self, G: np.ndarray, n_features: int) -> np.ndarray:
        G *= self._gamma(n_features)
        G += self.coef0
        _power_in_place(G, int(self.degree))
        return G

    def __call__(self, X, Z=None) -> np.ndarray:
        X, Z = _pair(X, Z)
        return _kernel_matrix(X, Z, lambda rows, G: self._apply(G, X.shape[1]))

    def diagonal(self, X) -> np.ndarray:
        """Compute the diagonal ``k(x_i, x_i)`` for the rows of ``X``, without forming the matrix.

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The rows (for a precomputed kernel, the square ``(n, n)`` training kernel).

        Returns
        -------
        ndarray of shape (n,)
            ``k(x_i, x_i)`` for every row.
        """
        X = _rows(X, "X")
        return self._apply(_squared_norms(X), X.shape[1])


#: Most negative eigenvalue a training kernel matrix may have, per row and relative to its
#: largest entry: K (n, n) is accepted as positive semi-definite when
#: ``lambda_min(K) >= -n * PSD_RTOL * max |K_ij|``.
#:
#: The rounding allowance of one entry is the symmetry rule's, SYMMETRY_RTOL (= 1e-8)
#: times the largest entry (see that constant for why).  A perturbation E of a PSD matrix
#: with ``|E_ij| <= r`` moves its eigenvalues by at most ``||E||_2 <= n r`` (Weyl's
#: inequality; Horn & Johnson, *Matrix Analysis*, 4.3.1), so an honest kernel rounded entry
#: by entry within that allowance keeps ``lambda_min >= -n r``.  An indefinite matrix such
#: as -I (lambda_min = -max |K_ij|) is refused for every n < 1e8.  A kernel rounded to
#: float32 (relative entry errors up to 6e-8) may fall outside: compute kernels in float64.
PSD_RTOL = SYMMETRY_RTOL


def check_positive_semidefinite(K: np.ndarray, name: str = "kernel matrix") -> None:
    """Refuse a symmetric matrix K with ``lambda_min(K) < -n * PSD_RTOL * max |K_ij|``.

    A kernel method's dual ``max 1^T a - 1/2 a^T Q a`` (Q built from K) is concave only
    for a positive semi-definite K; on an indefinite one SMO and coordinate descent stop
    at a point that satisfies their stopping rule without solving anything, and report it
    converged.  Every kernel method goes through this check for a kernel the user gives as
    a matrix (:meth:`PrecomputedKernel.resolve`); kernels computed from features by the
    stock kernels are PSD by construction.

    Cost.  The accept path is one Cholesky factorisation of ``K + shift I``, ``shift = n *
    PSD_RTOL * max |K_ij|`` (LAPACK potrf: n^3 / 3 flops and one (n, n) copy, about a
    sixth of a full symmetric eigendecomposition).  Its success is a certificate: Cholesky
    is backward stable (Higham, *Accuracy and Stability of Numerical Algorithms*, Theorem
    10.5: the factor is exact for ``K + shift I + dA`` with ``||dA||_2`` of order ``n^2 u max |K_ij|``),
    so ``lambda_min(K) >= -shift`` up to that term, far below the shift for n < 1e7.  A
    Lanczos estimate of the smallest eigenvalue (``scipy.sparse.linalg.eigsh``) would cost
    O(n^2) per iteration but certifies nothing: it may stop short or miss the end of the
    spectrum.  Only when the factorisation fails is the smallest eigenvalue computed
    (LAPACK syevr for that one eigenvalue), to decide a borderline case by the rule itself
    and to name it in the error.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The symmetric kernel matrix (float64).
    name : str, default="kernel matrix"
        What K is, for the error message.

    Raises
    ------
    ValueError
        If K's most negative eigenvalue is below ``-n * PSD_RTOL * max |K_ij|``.
    """
    n = K.shape[0]
    scale = max(float(K.max()), -float(K.min()))
    if scale == 0.0:
        return
    shift = n * PSD_RTOL * scale
    shifted = K.copy()
    shifted[np.diag_indices(n)] += shift
    try:
        scipy.linalg.cholesky(shifted, lower=True, overwrite_a=True, check_finite=False)
        return
    except np.linalg.LinAlgError:
        pass
    finally:
        del shifted
    smallest = float(scipy.linalg.eigh(K, eigvals_only=True, subset_by_index=[0, 0], check_finite=False)[0])
    if smallest >= -shift:
        return
    raise ValueError(
        f"the {name} is not positive semi-definite: its most negative eigenvalue is {smallest:.6g}, "
        f"{smallest / scale:.3g} times its largest entry max |K_ij| = {scale:.3g}, beyond the rounding "
        f"allowance -n * PSD_RTOL * max |K_ij| = {-shift:.3g} (n = {n}, PSD_RTOL = {PSD_RTOL:g}); kernel "
        f"methods need a positive semi-definite kernel (their dual is not concave otherwise): compute K from "
        f"a positive semi-definite kernel function, in float64"
    )


@attrs.frozen
class PrecomputedKernel(Kernel):
    """The kernel values are the input: ``X`` holds rows ``K[i, j] = k(x_i, x_j^train)``.

    ``__call__(K)`` at training time requires a square K, symmetric within
    :data:`~multilabel_core.validation.SYMMETRY_RTOL` (the one symmetry rule; K is
    returned exactly symmetric, and not copied when it already is); ``__call__(K, K_train)``
    checks that K has one column per training row (as the rows of K_train).
    ``resolve(K)``, which every estimator calls once on the training kernel, also requires
    K to be positive semi-definite within rounding (:func:`check_positive_semidefinite`).
    ``diagonal(K)`` is the diagonal of the square training kernel.  Kernel matrices are dense.
    """

    linear: ClassVar[bool] = False
    precomputed: ClassVar[bool] = True

    def resolve(self, X) -> "PrecomputedKernel":
        """Check that the training Gram matrix is positive semi-definite.

        Parameters
        ----------
        X : ndarray of shape (n, n)
            The training kernel matrix.

        Returns
        -------
        PrecomputedKernel
            ``self``, unchanged.

        Raises
        ------
        ValueError
            If ``X`` is not square, not symmetric within
            :data:`~multilabel_core.validation.SYMMETRY_RTOL`, or not positive semi-definite
            (:func:`check_positive_semidefinite`).
        """
        check_positive_semidefinite(self(X), "precomputed kernel matrix")
        return self

    def __call__(self, X, Z=None) -> np.ndarray:
        K = check_X(X, name="precomputed kernel", accept_sparse=False).astype(np.float64, copy=False)
        n_train = K.shape[0] if Z is None else np.shape(Z)[0]
        if K.shape[1] != n_train:
            what = "must be square at training time" if Z is None else f"must have one column per training row ({n_train})"
            raise ValueError(f"precomputed kernel of shape {K.shape} {what}")
        return check_symmetric(K, "precomputed kernel", copy=False) if Z is None else K

    def diagonal(self, X) -> np.ndarray:
        """Compute the diagonal ``k(x_i, x_i)`` for the rows of ``X``, without forming the matrix.

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The rows (for a precomputed kernel, the square ``(n, n)`` training kernel).

        Returns
        -------
        ndarray of shape (n,)
            ``k(x_i, x_i)`` for every row.
        """
        return np.diag(self(X)).copy()


def make_kernel(kernel="linear", gamma=None, **params) -> Kernel:
    """Build the :class:`Kernel` for an estimator's ``kernel`` parameter.

    Parameters
    ----------
    kernel : str or Kernel, default="linear"
        The name of any kernel in the component registry (the stock 'linear', 'rbf', 'poly'
        and 'precomputed', and every kernel a plugin registers through the
        ``register_components`` hook; ``mlcore components`` lists them), or a Kernel object,
        returned unchanged.
    gamma : float or None, default=None
        Goes to a kernel whose factory takes a ``gamma`` parameter (read from its
        signature); a kernel without one, such as the linear and precomputed kernels,
        ignores it, as scikit-learn's SVC does, so that one grid can set gamma for every
        kernel it tries.  None leaves the kernel's own default.
    **params
        Further parameters (e.g. ``degree``, ``coef0``, ``width``) for the registered
        factory, which must accept each of them.  A Kernel object takes neither gamma nor
        params.

    Returns
    -------
    Kernel
        The kernel object.

    Raises
    ------
    ValueError
        If ``kernel`` is neither a registered name nor a Kernel, or a Kernel object is
        given with ``gamma`` or ``params``.
    PluginError
        If the registered factory builds something that is not a Kernel.
    """
    if isinstance(kernel, Kernel):
        if gamma is not None or params:
            raise ValueError("kernel is a Kernel object: set gamma and its other parameters on the object")
        return kernel
    # Imported here: the registry brings in pluggy and the plugins' entry points, which
    # `import multilabel_core.kernels` should not pay for, and the core's own plugin
    # imports this module to register the stock kernels.
    from .plugins import PluginError, list_components, make_component

    specs = {spec.name: spec for spec in list_components("kernel")}
    if not isinstance(kernel, str) or kernel not in specs:
        raise ValueError(
            f"kernel must be a registered kernel name ({', '.join(sorted(specs)) or 'none registered'}) "
            f"or a Kernel object, got {kernel!r}"
        )
    if gamma is not None and _takes_parameter(specs[kernel].factory, "gamma"):
        params["gamma"] = gamma
    built = make_component("kernel", kernel, **params)
    if not isinstance(built, Kernel):
        raise PluginError(
            f"kernel {kernel!r} registered by plugin {specs[kernel].plugin!r} built a {type(built).__name__}, "
            f"not a multilabel_core.base.Kernel"
        )
    return built


def _takes_parameter(factory, name: str) -> bool:
    """Whether ``factory`` accepts the keyword ``name`` (by name, or through ``**kwargs``)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read (some builtins): hand it nothing extra
        return False
    return any(
        (p.name == name and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)) or p.kind is p.VAR_KEYWORD
        for p in parameters
    )
