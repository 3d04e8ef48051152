"""What a BLAS library can read in place: matrices with one unit stride.

A row-major matrix with unit column stride is, to a column-major BLAS, its own transpose with
the row stride as leading dimension; one with unit row stride (a transposed view, ``x.T``) is
a column-major matrix. Either goes to BLAS without a copy; anything else must be copied first.
"""

from __future__ import annotations

OP_N, OP_T = 0, 1  # BLAS's "no transpose" and "transpose"


def blas_matrix(rows: int, cols: int, row_stride: int, col_stride: int):
    """(op, leading dimension) that gives a column-major BLAS the transpose of this row-major
    matrix (strides in elements), or None when neither stride is 1."""
    if cols == 1:
        col_stride = 1
    if rows == 1:
        row_stride = max(cols, 1)
    if col_stride == 1 and row_stride >= max(cols, 1):
        return OP_N, row_stride
    if row_stride == 1 and col_stride >= max(rows, 1):
        return OP_T, col_stride
    return None


def blas_readable(shape: tuple, strides: tuple) -> bool:
    """Whether a view (element strides) can be a BLAS operand as it is."""
    return (
        len(shape) >= 2 and blas_matrix(shape[-2], shape[-1], strides[-2], strides[-1]) is not None
    )
