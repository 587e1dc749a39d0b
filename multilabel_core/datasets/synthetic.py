"""Synthetic multi-label data with a known label covariance.

The generative model (one row x_i of X, one score per label)::

    x_i ~ N(0, I_d),    s_i = x_i W + noise * e_i,    e_i ~ N(0, I_L),
    y_ij = 1  iff  s_ij > b_j,

with the weights W (d x L) built so that W^T W = Sigma exactly: the label covariance
of the noiseless scores is Sigma, and that of the scores Sigma + noise^2 I.  This is
the label-side structure the relationship-learning methods estimate (MLRL models
vec(W) ~ N(0, I_d (x) Omega), i.e. the columns of W covary as Omega; here the
expected and the realised W^T W coincide).

Sigma has a block structure: labels are cut into consecutive groups of
``group_size``; groups are paired (0 with 1, 2 with 3, ...).  Within a group labels
correlate with ``+correlation``, across the two groups of a pair with
``-correlation``, and labels of different pairs are uncorrelated.  Each pair block is
(1 - rho) I + rho s s^T with s = (+1, .., +1, -1, .., -1), positive definite for
0 <= rho < 1.

W = Q Lambda^{1/2} E^T with Sigma's eigen-decomposition written in closed form, so no
LAPACK routine chooses a basis (Sigma's eigenvalues repeat, and the basis ``eigh`` returns
for a repeated eigenvalue follows the BLAS kernels of the machine).  A pair block of m
labels with signs s has the eigenvector s / sqrt(m) with eigenvalue 1 + (m - 1) rho and,
for k = 1 .. m - 1, the signed Helmert contrasts h_k = s * (1, .., 1, -k, 0, .., 0) /
sqrt(k (k + 1)) (k ones; Lancaster, "The Helmert matrices", Amer. Math. Monthly 72, 1965)
with eigenvalue 1 - rho.  The decomposition is truncated to its ``rank`` leading terms
(default: min(d, L), all of them when d >= L): eigenvalues in decreasing order, ties in the
fixed order "block vectors s / sqrt(m) by block, then contrasts by block and k".  Q is a
random d x rank matrix with orthonormal columns: a Gaussian matrix orthonormalised by
classical Gram-Schmidt applied twice (Giraud, Langou, Rozloznik and van den Eshof,
"Rounding error analysis of the classical Gram-Schmidt orthogonalization process",
Numer. Math. 101, 2005: orthogonal to working precision after the second pass for a
numerically full-rank matrix), with R's diagonal positive, which makes Q Haar-distributed
(Mezzadri, "How to generate random matrices from the classical compact groups", Notices
AMS 54, 2007).  With a smaller rank, W is low rank
(as in the LEML and LIEML models) and W^T W is a best rank-``rank`` approximation of
Sigma (the one of the tie order above when ``rank`` splits a repeated eigenvalue), which
is what ``return_covariance`` returns.

Determinism: every floating-point step after the random draws is an elementwise numpy
operation or a sum in a fixed order (no BLAS or LAPACK call, whose kernels round
differently on different CPUs and thread counts), so an integer ``random_state`` gives
the same X, Y and W^T W bit for bit on every IEEE-754 machine.  Y matters most: it
ranks the scores, and a last-bit difference between two neighbouring scores would move
a label across the threshold.  What remains machine-specific is the C library's exp and
log1p inside numpy's normal sampler, where a last-bit difference matters only if a uniform
draw falls within an ulp of the acceptance bound; glibc's FMA and non-FMA variants give the
same draws in the tests.

Thresholds: label j gets a target density p_j drawn uniformly in
[density / 2, 3 density / 2] (clipped to (0, 1)), and b_j is chosen so that the
round(p_j n) highest-scoring examples are relevant (clipped to 1 .. n - 1): every label
column holds both classes.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..validation import check_random_state, check_scalar
from ._dataset import Dataset

__all__ = ["label_covariance", "make_correlated_multilabel"]


def label_covariance(n_labels: int, *, correlation: float = 0.6, group_size: int = 3) -> np.ndarray:
    """Build the block-structured label covariance Sigma of the module docstring (unit diagonal).

    Parameters
    ----------
    n_labels : int
        L, the size of Sigma (>= 1).
    correlation : float, default=0.6
        rho in [0, 1): the correlation within a group (+rho) and across the two groups of a pair
        (-rho).
    group_size : int, default=3
        Labels per group (>= 1); consecutive groups are paired.

    Returns
    -------
    ndarray of shape (n_labels, n_labels)
        Sigma, symmetric positive definite.

    Raises
    ------
    ValueError
        For a parameter out of range.
    """
    check_scalar(n_labels, "n_labels", kind=numbers.Integral, low=1)
    check_scalar(correlation, "correlation", low=0.0, high=1.0, high_inclusive=False)
    check_scalar(group_size, "group_size", kind=numbers.Integral, low=1)
    group = np.arange(n_labels) // group_size
    sign = np.where(group % 2 == 0, 1.0, -1.0)
    same_pair = (group // 2)[:, None] == (group // 2)[None, :]
    sigma = np.where(same_pair, correlation * np.outer(sign, sign), 0.0)
    np.fill_diagonal(sigma, 1.0)
    return sigma


def make_correlated_multilabel(
    n_samples: int = 500,
    n_features: int = 20,
    n_labels: int = 6,
    *,
    rank: int | None = None,
    noise: float = 0.1,
    density: float = 0.3,
    correlation: float = 0.6,
    group_size: int = 3,
    random_state=None,
    return_covariance: bool = False,
):
    """Draw a :class:`Dataset` named "synthetic" with a known label covariance (dense X, label columns with both classes).

    Deterministic for an integer ``random_state``.  See the module docstring for the model.

    Parameters
    ----------
    n_samples : int, default=500
        Rows n (>= 2).
    n_features : int, default=20
        Features d (>= 1).
    n_labels : int, default=6
        Labels L.
    rank : int or None, default=None
        The rank of W, between 1 and min(d, L); None: min(d, L).
    noise : float, default=0.1
        The standard deviation of the Gaussian noise added to the scores (>= 0).
    density : float, default=0.3
        The mean fraction of relevant rows per label, in (0, 1): each label's target is drawn
        uniformly from ``[density / 2, min(1.5 density, 1)]``, and its top-scored rows are relevant
        (at least 1 and at most n - 1 of them).
    correlation : float, default=0.6
        rho of :func:`label_covariance`.
    group_size : int, default=3
        The group size of :func:`label_covariance`.
    random_state : None, int or numpy Generator, default=None
        The random stream.
    return_covariance : bool, default=False
        Also return W^T W.

    Returns
    -------
    Dataset or (Dataset, ndarray of shape (n_labels, n_labels))
        The dataset; with ``return_covariance``, also W^T W, the label covariance of the
        noiseless scores (Sigma itself unless ``rank`` < L).

    Raises
    ------
    ValueError
        For a parameter out of range.
    """
    check_scalar(n_samples, "n_samples", kind=numbers.Integral, low=2)
    check_scalar(n_features, "n_features", kind=numbers.Integral, low=1)
    check_scalar(noise, "noise", low=0.0)
    check_scalar(density, "density", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    rank = min(n_features, n_labels) if rank is None else rank
    check_scalar(rank, "rank", kind=numbers.Integral, low=1, high=min(n_features, n_labels))
    sigma = label_covariance(n_labels, correlation=correlation, group_size=group_size)
    rng = check_random_state(random_state)

    eigenvalues, eigenvectors = _block_eigenpairs(n_labels, correlation, group_size)
    leading = np.argsort(-eigenvalues, kind="stable")[:rank]
    Q = _orthonormal_columns(rng.standard_normal((n_features, rank)))
    factor = np.sqrt(eigenvalues[leading])[:, None] * eigenvectors[:, leading].T
    W = _fixed_order_product(Q, factor)

    X = rng.standard_normal((n_samples, n_features))
    scores = _fixed_order_product(X, W) + noise * rng.standard_normal((n_samples, n_labels))
    target = rng.uniform(density / 2, min(1.5 * density, 1.0), size=n_labels)
    positives = np.clip(np.round(target * n_samples).astype(int), 1, n_samples - 1)
    Y = np.zeros((n_samples, n_labels), dtype=np.int8)
    for j in range(n_labels):
        Y[np.argsort(-scores[:, j], kind="stable")[: positives[j]], j] = 1

    dataset = Dataset(X, Y, name="synthetic")
    return (dataset, _fixed_order_product(W.T, W)) if return_covariance else dataset


def _block_eigenpairs(n_labels: int, correlation: float, group_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form eigenvalues (L,) and orthonormal eigenvectors (L, L columns) of label_covariance.

    Listed as the block vectors s / sqrt(m) block by block, then each block's Helmert
    contrasts; this listing is the tie order of the truncation.
    """
    group = np.arange(n_labels) // group_size
    pair = group // 2
    sign = np.where(group % 2 == 0, 1.0, -1.0)
    leading_values, leading_vectors, contrast_values, contrast_vectors = [], [], [], []
    for p in range(int(pair[-1]) + 1):
        members = np.flatnonzero(pair == p)
        m = members.size
        vector = np.zeros(n_labels)
        vector[members] = sign[members] / np.sqrt(float(m))
        leading_values.append(1.0 + (m - 1) * correlation)
        leading_vectors.append(vector)
        for k in range(1, m):
            vector = np.zeros(n_labels)
            vector[members[:k]] = sign[members[:k]]
            vector[members[k]] = -k * sign[members[k]]
            contrast_values.append(1.0 - correlation)
            contrast_vectors.append(vector / np.sqrt(float(k * (k + 1))))
    values = np.array(leading_values + contrast_values)
    return values, np.stack(leading_vectors + contrast_vectors, axis=1)


def _orthonormal_columns(G: np.ndarray) -> np.ndarray:
    """Q of G = Q R with R's diagonal positive, by classical Gram-Schmidt run twice per column."""
    Q = np.zeros_like(G)
    for j in range(G.shape[1]):
        v = G[:, j].copy()
        for _ in range(2):
            coefficients = np.sum(Q[:, :j] * v[:, None], axis=0)
            v = v - np.sum(Q[:, :j] * coefficients[None, :], axis=1)
        Q[:, j] = v / np.sqrt(np.sum(v * v))
    return Q


def _fixed_order_product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B accumulated over the inner index in increasing order with elementwise operations.

    Bit-for-bit the same on every machine, unlike a BLAS product whose kernel (FMA or not,
    blocking, threads) sets the rounding.
    """
    product = A[:, 0:1] * B[0:1, :]
    for k in range(1, A.shape[1]):
        product += A[:, k : k + 1] * B[k : k + 1, :]
    return product
