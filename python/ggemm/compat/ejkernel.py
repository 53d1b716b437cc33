"""ejkernel's grouped matmul: the same ``gmm`` / ``tgmm`` signatures as
megablox (see :mod:`ggemm.compat.megablox`).

Example::

    from ggemm.compat.ejkernel import gmm
    out = gmm(lhs, rhs, group_sizes)
"""

from .megablox import gmm, group_indptr, tgmm

__all__ = ["gmm", "tgmm", "group_indptr"]
