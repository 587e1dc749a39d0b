"""What a solver does when it stops before its stopping rule is met: warn, or tighten its tolerance.

The warning itself, :class:`~multilabel_core.exceptions.ConvergenceWarning`, and
:func:`~multilabel_core.exceptions.warn_not_converged` live in the leaf module
:mod:`multilabel_core.exceptions` and are re-exported here.
"""

from __future__ import annotations

from ..exceptions import ConvergenceWarning, warn_not_converged


#: The tightest projected-gradient bound :func:`tighten_to_relative_gap` tries: below it the gap is round-off.
SMALLEST_EPS = 1e-9


def tighten_to_relative_gap(solve, eps: float, rtol: float, *, name: str, counts=(), warn: bool = True):
    """Run ``solve(eps, start)`` at eps, eps / 10, ... until the relative duality gap is at most ``rtol``.

    Coordinate-descent engines stop on a projected-gradient bound eps (LIBLINEAR's rule), whose
    meaning in objective terms depends on C and the data; a caller that wants a relative
    duality gap instead tightens eps, each call warm-started from the previous Fit (``start``,
    None for the first).  It stops when the gap is reached -- the certificate then holds, even
    if that call spent its epoch budget before its own eps -- when a call spends its budget
    short of the gap, or below :data:`SMALLEST_EPS`.  The outcome is reported once: nothing
    when the gap was reached, else one ConvergenceWarning from ``name`` (``warn=False``: none,
    for a caller that reports a combined outcome).  ``solve`` itself should not warn (the
    engine wrappers take ``warn=False``): a call that stops at its budget is this function's
    to report.

    Parameters
    ----------
    solve : callable
        ``solve(eps, start) -> Fit``: one engine call at the projected-gradient bound ``eps``,
        warm-started from ``start`` (a Fit, or None for the first call); it should not warn.
    eps : float
        The first projected-gradient bound, positive.
    rtol : float
        The relative duality gap to reach.
    name : str
        The solver named in the ConvergenceWarning.
    counts : tuple of str, default=()
        Names of certificate statistics summed over the calls: numbers, or equal-length lists
        of numbers (per-label step counts) summed entry by entry.
    warn : bool, default=True
        Whether an unreached gap issues a ConvergenceWarning (False: the caller reports).

    Returns
    -------
    fit : Fit
        The last call's Fit, with its certificate's ``n_iter`` and the named ``counts`` summed
        over the calls, ``converged`` exactly when the gap was reached, and
        ``statistics["eps"]`` the last eps.
    eps : float
        The last eps.

    Warns
    -----
    ConvergenceWarning
        When the gap was not reached (and ``warn`` is True).
    """
    import attrs  # the certificate is an attrs class; imported here to keep this module light

    epochs, totals, start = 0, dict.fromkeys(counts), None
    while True:
        fit = solve(eps, start)
        epochs += fit.certificate.n_iter
        totals = {key: _summed(total, fit.certificate.statistics[key]) for key, total in totals.items()}
        reached = fit.certificate.relative_gap <= rtol
        if reached or not fit.certificate.converged or eps / 10.0 < SMALLEST_EPS:
            break
        eps, start = eps / 10.0, fit
    if warn and not reached:
        budget = "" if fit.certificate.converged else f", the last call at eps={eps:g} spent its epoch budget"
        smallest = f" at the smallest eps={eps:g} (below it the gap is round-off)" if fit.certificate.converged else ""
        warn_not_converged(
            name, f"relative duality gap {fit.certificate.relative_gap:.3g} > tol={rtol:g}{smallest}{budget}"
        )
    certificate = attrs.evolve(
        fit.certificate,
        n_iter=epochs,
        converged=bool(reached),
        statistics=fit.certificate.statistics | totals | {"eps": eps},
    )
    return type(fit)(fit.solution, certificate), eps


def _summed(total, value):
    """``total + value`` for a count, entry by entry for a list of counts (None: nothing counted yet)."""
    if total is None:
        return list(value) if isinstance(value, (list, tuple)) else value
    if isinstance(value, (list, tuple)):
        return [a + b for a, b in zip(total, value, strict=True)]
    return total + value
