"""Inference in the concept network: ICM on the local models, or coordinate ascent on the global score.

Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept Network*, section 4.
For one row x, with the site scores ``g_l = v_l^T phi_l(x)`` and the edge scores
``f_lt = w_lt^T phi_lt(x)`` (one per ordered edge: w_lt and w_tl are separate parameters), the
global score (3) of a labelling y in {0, 1}^L is

    S(y) = sum_l pi(y_l) g_l + sigma sum_l sum_{t in N_l} pi'(y_l, y_t) f_lt,

with pi(1) = 1, pi(0) = -eps and pi'(1, 1) = 1, pi'(y_l != y_t) = -eps', pi'(0, 0) = 0.  With
``d(y_t) = 1 + eps'`` if y_t = 1 else ``-eps'``:

* **ICM** (the paper's rule) starts from ``y_l = [g_l > 0]`` and sweeps the labels in order,
  setting ``y_l = [h_l > 0]`` with the local model's gain ``h_l = (1 + eps) g_l + sigma sum_t
  d(y_t) f_lt`` (eq. 4 at y_l = 1 minus at y_l = 0).  It ignores the terms f_tl of the
  neighbours' models that also depend on y_l, so it is not an ascent on S and can cycle: the
  sweeps are capped, a row whose state after a sweep repeats an earlier one (other than the
  previous: a fixed point) is stopped as *cycled*, and both counts are reported.
* **global** coordinate ascent uses the exact gain of S,
  ``Delta_l = (1 + eps) g_l + sigma sum_t d(y_t) (f_lt + f_tl)``, and changes y_l only when that
  strictly increases S (a tie keeps y_l), so S never decreases, no state repeats, and the
  sweeps end at a labelling no single change improves (within the cap, reported like ICM's).

The per-label scores (``decision_function``) are the gains at the final labelling: h_l for ICM,
Delta_l for the global variant.  At a fixed point y_l = [score_l > 0] (a global tie at exactly 0
aside), so the ranking measures and the labels agree.
"""

from __future__ import annotations

import attrs
import numpy as np

__all__ = ["INFERENCE", "InferenceResult", "global_score", "infer"]

#: The inference procedures by name.
INFERENCE = ("icm", "global")


@attrs.frozen(eq=False)
class InferenceResult:
    """Hold what inference found for each row.

    Parameters
    ----------
    labels : ndarray of shape (n, L), int64
        The final labelling, 0/1.
    scores : ndarray of shape (n, L), float64
        The gains at ``labels``: h_l for ICM, Delta_l for the global variant (module docstring).
    n_sweeps : ndarray of shape (n,), int64
        The sweeps made for each row.
    converged : ndarray of shape (n,), bool
        A sweep changed nothing (a fixed point).
    cycled : ndarray of shape (n,), bool
        The state repeated an earlier one other than the previous (ICM only).
    hit_cap : ndarray of shape (n,), bool
        Neither within ``max_sweeps`` sweeps.
    max_sweeps : int
        The sweep cap the rows were run with.
    """

    labels: np.ndarray
    scores: np.ndarray
    n_sweeps: np.ndarray
    converged: np.ndarray
    cycled: np.ndarray
    hit_cap: np.ndarray
    max_sweeps: int

    @property
    def n_cycled(self) -> int:
        """The number of rows whose inference revisited a labelling (a cycle) instead of reaching a fixed point."""
        return int(np.count_nonzero(self.cycled))

    @property
    def n_hit_cap(self) -> int:
        """The number of rows whose inference stopped at the sweep cap."""
        return int(np.count_nonzero(self.hit_cap))


def _factors(Y: np.ndarray, eps_edge: float) -> np.ndarray:
    return np.where(Y, 1.0 + eps_edge, -eps_edge)


def _gains(label, G, F, Y, neighbour_edges, eps, sigma, eps_edge) -> np.ndarray:
    """The gain of label ``label`` for every row; ``neighbour_edges`` = [(t, columns of F to add)]."""
    gain = (1.0 + eps) * G[:, label]
    for t, columns in neighbour_edges[label]:
        gain = gain + sigma * _factors(Y[:, t], eps_edge) * F[:, columns].sum(axis=1)
    return gain


def _neighbour_edges(edges: np.ndarray, n_labels: int, both: bool) -> list[list]:
    """Per label l: [(t, [index of (l, t)] or [index of (l, t), index of (t, l)])] over t in N_l."""
    index = {(int(l), int(t)): e for e, (l, t) in enumerate(edges)}
    table = [[] for _ in range(n_labels)]
    for (l, t), e in index.items():
        table[l].append((t, [e, index[(t, l)]] if both else [e]))
    return table


def infer(G, F, edges, *, eps: float, sigma: float, eps_edge: float, method: str = "icm", max_sweeps: int = 100):
    """Infer the labels of the rows from their site and edge scores (module docstring).

    Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept Network*,
    section 4.  The rows are processed together (vectorised), each stopping on its own.

    Parameters
    ----------
    G : array-like of shape (n, L)
        The site scores g_l of each row.
    F : array-like of shape (n, E)
        The edge scores f_lt of each row, one column per ordered edge of ``edges``.
    edges : array-like of shape (E, 2), int
        The ordered edges (l, t), each undirected edge in both directions.
    eps : float
        eps of pi(0) = -eps, the site penalty of a label set to 0.
    sigma : float
        The weight of the edge terms in the global score; 0 leaves the initial labelling.
    eps_edge : float
        eps' of pi'(y_l != y_t) = -eps', the penalty of a disagreeing edge.
    method : {"icm", "global"}, default "icm"
        The paper's ICM on the local models, or coordinate ascent on the global score (3).
    max_sweeps : int, default 100
        The sweeps over the labels at most, per row.

    Returns
    -------
    InferenceResult
        The labels, their gains and the per-row counts of sweeps, fixed points, cycles and
        rows stopped at the cap.

    Raises
    ------
    ValueError
        When ``method`` is not one of :data:`INFERENCE`.
    """
    if method not in INFERENCE:
        raise ValueError(f"inference must be one of {INFERENCE}, got {method!r}")
    G, F = np.asarray(G, dtype=np.float64), np.asarray(F, dtype=np.float64)
    n, n_labels = G.shape
    edges = np.asarray(edges, dtype=np.intp).reshape(-1, 2)
    table = _neighbour_edges(edges, n_labels, both=method == "global")
    Y = G > 0.0
    states = [np.packbits(Y, axis=1)]
    active = np.ones(n, dtype=bool)
    n_sweeps = np.zeros(n, dtype=np.int64)
    converged = np.zeros(n, dtype=bool)
    cycled = np.zeros(n, dtype=bool)
    # Without edges (or sigma = 0) the initial labelling is already the answer of both procedures.
    if sigma == 0.0 or edges.shape[0] == 0:
        converged[:] = True
        active[:] = False
    sweep = 0
    while active.any() and sweep < max_sweeps:
        sweep += 1
        rows = np.flatnonzero(active)
        Ga, Fa, Ya = G[rows], F[rows], Y[rows]
        for label in range(n_labels):
            if not table[label]:
                continue
            gain = _gains(label, Ga, Fa, Ya, table, eps, sigma, eps_edge)
            if method == "icm":
                Ya[:, label] = gain > 0.0
            else:
                Ya[:, label] = np.where(gain > 0.0, True, np.where(gain < 0.0, False, Ya[:, label]))
        Y[rows] = Ya
        n_sweeps[rows] = sweep
        packed = np.packbits(Ya, axis=1)
        fixed = np.all(packed == states[-1][rows], axis=1)
        repeated = np.zeros(rows.size, dtype=bool)
        for earlier in states[:-1]:
            repeated |= np.all(packed == earlier[rows], axis=1)
        repeated &= ~fixed
        converged[rows[fixed]] = True
        cycled[rows[repeated]] = True
        active[rows[fixed | repeated]] = False
        current = states[-1].copy()
        current[rows] = packed
        states.append(current)
    hit_cap = active.copy()
    scores = np.column_stack([_gains(label, G, F, Y, table, eps, sigma, eps_edge) for label in range(n_labels)])
    return InferenceResult(
        labels=Y.astype(np.int64),
        scores=scores,
        n_sweeps=n_sweeps,
        converged=converged,
        cycled=cycled,
        hit_cap=hit_cap,
        max_sweeps=int(max_sweeps),
    )


def global_score(Y, G, F, edges, *, eps: float, sigma: float, eps_edge: float) -> np.ndarray:
    """Compute the global score S(y) of eq. (3) of Zhang et al. for each row's labelling.

    Parameters
    ----------
    Y : array-like of shape (n, L), 0/1
        One labelling per row.
    G : array-like of shape (n, L)
        The site scores g_l.
    F : array-like of shape (n, E)
        The edge scores f_lt, one column per ordered edge of ``edges``.
    edges : array-like of shape (E, 2), int
        The ordered edges (l, t).
    eps : float
        eps of pi(0) = -eps.
    sigma : float
        The weight of the edge terms.
    eps_edge : float
        eps' of pi'(y_l != y_t) = -eps'.

    Returns
    -------
    ndarray of shape (n,), float64
        ``S(y) = sum_l pi(y_l) g_l + sigma sum_l sum_{t in N_l} pi'(y_l, y_t) f_lt`` per row.
    """
    Y = np.asarray(Y).astype(bool)
    G, F = np.asarray(G, dtype=np.float64), np.asarray(F, dtype=np.float64)
    site = np.where(Y, 1.0, -eps)
    score = np.einsum("il,il->i", site, G)
    edges = np.asarray(edges, dtype=np.intp).reshape(-1, 2)
    if edges.shape[0]:
        yl, yt = Y[:, edges[:, 0]], Y[:, edges[:, 1]]
        pair = np.where(yl & yt, 1.0, np.where(yl != yt, -eps_edge, 0.0))
        score = score + sigma * np.einsum("ie,ie->i", pair, F)
    return score
