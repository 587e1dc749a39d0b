"""A new relation-learning method in one module: label weights learned by the core's driver.

The relation is a *diagonal* label covariance Omega = diag(omega), tr(Omega) = 1: the labels
share no correlation, but each gets its own weight in ``1/2 tr(W Omega^-1 W^T)`` -- labels
with larger weights are regularised less.  For fixed W the relation step
``min tr(Omega^-1 W^T W)`` over diagonal Omega of trace 1 has the closed form
``omega_j = ||w_j|| / sum_k ||w_k||`` (Cauchy-Schwarz), the diagonal analogue of MLRL's
``(W^T W)^(1/2) / tr``.  Everything else is the core: hinge loss, ``label_covariance``,
any kernel, SMO inside the alternating driver.  Register it from a package's
``register_components`` / ``register_methods`` hooks (docs/plugin-guide.md).
"""

import attrs
import numpy as np

import multilabel_core
from multilabel_core import ComponentSpec, ComposedEstimator, LabelRelation, MethodSpec, make_component
from multilabel_core.kernels import make_kernel
from multilabel_core.validation import check_symmetric, positive


@attrs.frozen
class LabelWeights(LabelRelation):
    """Omega = diag(||w_j|| + epsilon) / trace: the relation step of the diagonal covariance."""

    epsilon: float = attrs.field(default=1e-8, validator=positive)
    learned = True

    def initial(self, n_labels: int) -> np.ndarray:
        return np.eye(n_labels) / n_labels

    def update(self, gram) -> np.ndarray:
        norms = np.sqrt(np.clip(np.diag(check_symmetric(gram, "gram")), 0.0, None)) + self.epsilon
        return np.diag(norms / norms.sum())


class LabelWeightedSVM(ComposedEstimator):
    """Kernel SVMs whose labels are weighted by a learned diagonal covariance (registered as ``lwsvm``)."""

    PARTS = {"loss": "hinge", "regularizer": "label_covariance", "relation": "label_weights",
             "kernel": "rbf", "solver": "alternating"}  # fmt: skip
    CERTIFICATE_PER_STEP = True

    def __init__(self, lam=1e-3, kernel="rbf", gamma=None, tol=1e-4, max_iter=100):
        self.lam, self.kernel, self.gamma, self.tol, self.max_iter = lam, kernel, gamma, tol, max_iter

    def _parts(self) -> dict:
        parts = {role: make_component(role, self.PARTS[role]) for role in ("loss", "regularizer", "relation")}
        solver = make_component("solver", "alternating", tol=self.tol, max_iter=self.max_iter)
        return parts | {"kernel": make_kernel(self.kernel, self.gamma), "solver": solver}

    def _cost(self, n_samples: int) -> float:
        return 1.0 / (n_samples * self.lam)  # the loss averaged over the rows, as in MLRL's problem (6)


@multilabel_core.hookimpl
def register_components(register):
    register(ComponentSpec("relation", "label_weights", LabelWeights, description=LabelWeights.__doc__))


@multilabel_core.hookimpl
def register_methods(register):
    register(MethodSpec(name="lwsvm", estimator=LabelWeightedSVM, citation="docs/examples/label_weights.py",
                        parts=LabelWeightedSVM.PARTS, param_grid={"lam": [1e-4, 1e-3, 1e-2]}))  # fmt: skip
