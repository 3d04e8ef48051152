"""numloom's core: the array handle, the DAG, storages and their evaluation.

The folder's name is also NumPy's ``numpy.core``, the deprecated alias of ``numpy._core``
that programs still reach as ``np.core.records`` or ``from numpy.core import numeric``. A name
that is none of this folder's modules is NumPy's, with NumPy's DeprecationWarning.
"""

from __future__ import annotations

import os as _os
import sys as _sys
import warnings as _warnings

# (listed, not imported: `from .core import config` must find the module, not NumPy's name)
_OWN = frozenset(
    name.partition(".")[0]
    for name in _os.listdir(_os.path.dirname(__file__))
    if not name.startswith("__")
)


def __getattr__(name: str):
    if name in _OWN or name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    imported = _sys.modules.get(f"numpy.core.{name}")
    if imported is not None:  # NumPy's module of that name, which warns as it is used
        return imported
    import numpy._core as _core

    value = getattr(_core, name)  # NumPy's AttributeError for a name it lacks too
    _warnings.warn(  # numpy/core/_utils.py's words: the program wrote numpy.core
        "numpy.core is deprecated and has been renamed to numpy._core. The numpy._core "
        "namespace contains private NumPy internals and its use is discouraged, as NumPy "
        "internals can change without warning in any release. In practice, most real-world "
        "usage of numpy.core is to access functionality in the public NumPy API. If that is "
        "the case, use the public NumPy API. If not, you are using NumPy internals. If you "
        f"would still like to access an internal attribute, use numpy._core.{name}.",
        DeprecationWarning,
        stacklevel=2,
    )
    return value
