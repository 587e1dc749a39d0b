# cython: language_level=3
"""The public engine kit: what a plugin's Cython module cimports to write a new dual.

``from multilabel_core.solvers.kit cimport DualCoordinates, Rows`` is the supported way to
build on the core's dual coordinate-descent engine; the declarations below are re-exported
from the engine's own modules, whose names (``_cd``, ``_kernel_cache``) are private and may
move.  docs/solvers/cd.md explains the engine and walks through a variant.

The dual-CD coordinate interface
    :class:`DualCoordinates` -- subclass it with the ``noexcept nogil`` methods ``gradient``,
    ``curvature``, ``lower``, ``upper``, ``update``, ``objective`` (and optionally
    ``refresh``, ``prefetch``, ``enter_group``/``leave_group``, ``face_step_cost``/``face_step``),
    set ``self.alpha`` in ``__init__``; :func:`run_cd` with :class:`CDOptions` and
    :class:`CDStatistics` minimises it from Cython (:func:`multilabel_core.solvers.kit.solve_dual`
    from Python).  :func:`projected_gradient` and :func:`max_projected_gradient` give the KKT
    violation; ``cd_prefetch(address)`` is the memory hint ``prefetch`` uses.
The row access
    :class:`Rows` (dense :class:`DenseRows`, CSR :class:`SparseRows`, with LIBLINEAR's
    optional constant feature ``bias``): ``dot``, ``axpy``, ``squared_norm``, ``gather``,
    ``scatter`` and the Gram helpers, all ``noexcept nogil``.  Build one from Python with
    :func:`multilabel_core.solvers.kit.as_rows`.
The kernel column cache
    :class:`KernelColumns` -- ``column(j)`` returns a pointer to the kernel column j of the
    training rows, from a least-recently-used cache of a byte budget (or from a precomputed
    matrix); its ``hits``/``misses`` count the cache's work.
Interruption
    ``check_interrupt()`` raises KeyboardInterrupt on Ctrl-C or the cancellation of the
    label-thread pool running the solve; an engine loop calls it every so often (with the GIL).
"""

from multilabel_core.solvers._cd cimport (
    CDOptions,
    CDStatistics,
    DenseRows,
    DualCoordinates,
    Rows,
    SparseRows,
    cd_prefetch,
    check_interrupt,
    max_projected_gradient,
    projected_gradient,
    run_cd,
)
from multilabel_core.solvers._kernel_cache cimport KernelColumns
