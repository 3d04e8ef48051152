"""Joining, splitting, tiling and rearranging arrays (temporary: through NumPy)."""

from __future__ import annotations

import numpy as _np

from .fallback import wrap

append = wrap("append", _np.append)
array_split = wrap("array_split", _np.array_split)
atleast_1d = wrap("atleast_1d", _np.atleast_1d)
atleast_2d = wrap("atleast_2d", _np.atleast_2d)
atleast_3d = wrap("atleast_3d", _np.atleast_3d)
column_stack = wrap("column_stack", _np.column_stack)
concatenate = wrap("concatenate", _np.concatenate)
diff = wrap("diff", _np.diff)
dsplit = wrap("dsplit", _np.dsplit)
dstack = wrap("dstack", _np.dstack)
flip = wrap("flip", _np.flip)
fliplr = wrap("fliplr", _np.fliplr)
flipud = wrap("flipud", _np.flipud)
hsplit = wrap("hsplit", _np.hsplit)
hstack = wrap("hstack", _np.hstack)
pad = wrap("pad", _np.pad)
roll = wrap("roll", _np.roll)
rot90 = wrap("rot90", _np.rot90)
split = wrap("split", _np.split)
stack = wrap("stack", _np.stack)
tile = wrap("tile", _np.tile)
repeat = wrap("repeat", _np.repeat)
vsplit = wrap("vsplit", _np.vsplit)
vstack = wrap("vstack", _np.vstack)
take = wrap("take", _np.take)
nonzero = wrap("nonzero", _np.nonzero)
flatnonzero = wrap("flatnonzero", _np.flatnonzero)
argwhere = wrap("argwhere", _np.argwhere)
tril = wrap("tril", _np.tril)
triu = wrap("triu", _np.triu)
