"""The warning a solver issues when it stops before its stopping rule is met."""

from __future__ import annotations

import warnings

try:
    from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning
except ImportError:  # scikit-learn is optional
    _SklearnConvergenceWarning = UserWarning


class ConvergenceWarning(_SklearnConvergenceWarning):
    """A solver stopped (iteration limit, failed line search) before meeting its tolerance.

    A subclass of :class:`sklearn.exceptions.ConvergenceWarning` when scikit-learn is
    installed, so filters written for scikit-learn catch it too.
    """


def warn_not_converged(solver: str, reason: str) -> None:
    warnings.warn(
        f"{solver} did not converge: {reason}. Increase max_iter, loosen tol, or scale the features.",
        ConvergenceWarning,
        stacklevel=3,
    )


#: The tightest projected-gradient bound :func:`tighten_to_relative_gap` tries: below it the gap is round-off.
SMALLEST_EPS = 1e-9


def tighten_to_relative_gap(solve, eps: float, rtol: float, *, name: str, counts=()):
    """Run ``solve(eps, start)`` at eps, eps / 10, ... until the certificate's relative gap is at most ``rtol``.

    Coordinate-descent engines stop on a projected-gradient bound eps (LIBLINEAR's rule), whose
    meaning in objective terms depends on C and the data; a caller that wants a relative
    duality gap instead tightens eps, each call warm-started from the previous Fit (``start``,
    None for the first).  It stops when the gap is reached, when a call does not converge
    (its own ConvergenceWarning was issued), or below :data:`SMALLEST_EPS` (a
    ConvergenceWarning from ``name``).

    Returns ``(fit, eps)``: the last call's Fit, its certificate's ``n_iter`` and the named
    ``counts`` of its statistics summed over the calls, ``converged`` only when the gap was
    reached, ``statistics["eps"]`` the last eps; and that eps.
    """
    import attrs  # the certificate is an attrs class; imported here to keep this module light

    epochs, totals, start = 0, dict.fromkeys(counts, 0), None
    while True:
        fit = solve(eps, start)
        epochs += fit.certificate.n_iter
        totals = {key: total + fit.certificate.statistics[key] for key, total in totals.items()}
        reached = fit.certificate.relative_gap <= rtol
        if reached or not fit.certificate.converged or eps / 10.0 < SMALLEST_EPS:
            break
        eps, start = eps / 10.0, fit
    if fit.certificate.converged and not reached:
        warn_not_converged(
            name,
            f"relative duality gap {fit.certificate.relative_gap:.3g} > tol={rtol:g} at the smallest eps={eps:g} "
            "(below it the gap is round-off)",
        )
    certificate = attrs.evolve(
        fit.certificate,
        n_iter=epochs,
        converged=bool(fit.certificate.converged and reached),
        statistics=fit.certificate.statistics | totals | {"eps": eps},
    )
    return type(fit)(fit.solution, certificate), eps
