"""The CPU backend's memory: a pool of blocks that held dead arrays, for new outputs."""

from __future__ import annotations

import math

import numpy as np


class Pool:
    """Blocks of memory that held dead arrays, reused for new outputs of about the same size.

    A fresh allocation of a large output costs page faults on every first touch (more than
    the work of a simple kernel); reusing freed blocks avoids them, as CuPy's pool does. Sizes
    round up to a class (eight per power of two, at most 12.5% more), so a loop whose sizes
    drift reuses its blocks; the pool holds at most ``limit`` bytes, the least recently given
    blocks leaving first.
    """

    def __init__(self, limit: int = 1 << 30, per_size: int = 8):
        self.free: dict = {}  # class size -> blocks, most recently given last
        self.order: dict = {}  # id(block) -> (class size, block), least recently given first
        self.held = 0
        self.limit, self.per_size = limit, per_size

    @staticmethod
    def size_class(nbytes: int) -> int:
        if nbytes <= 4096:
            return -(-nbytes // 64) * 64
        grain = 1 << (nbytes.bit_length() - 4)
        return -(-nbytes // grain) * grain

    def array(self, shape: tuple, dtype) -> tuple:
        """A new array and the block behind it (a free block of its size class, or a new one)."""
        spec = _specs.get((shape, dtype))
        if spec is None:
            itemsize = np.dtype(dtype).itemsize
            count = math.prod(shape)
            nbytes = self.size_class(max(count * itemsize, itemsize))  # empty: one item
            if len(_specs) >= 4096:
                _specs.clear()
            spec = _specs[(shape, dtype)] = (nbytes, count * itemsize, len(shape) != 1)
        nbytes, used, reshape = spec
        blocks = self.free.get(nbytes)
        block = None
        if blocks:
            try:
                block = blocks.pop()
            except IndexError:  # (another thread took it)
                block = None
        if block is not None:
            self.order.pop(id(block), None)
            self.held -= nbytes
        else:
            block = np.empty(nbytes, np.uint8)
        data = block[:used].view(dtype)
        return (data.reshape(shape) if reshape else data), block

    def clear(self) -> None:
        """Give every kept block back to the allocator."""
        self.free.clear()
        self.order.clear()
        self.held = 0

    def give(self, block: np.ndarray) -> None:
        nbytes = block.nbytes
        if nbytes > self.limit:
            return
        blocks = self.free.setdefault(nbytes, [])
        if len(blocks) >= self.per_size:
            return
        while self.held + nbytes > self.limit and self.order:
            old_size, old = self.order.pop(next(iter(self.order)))
            kept = self.free.get(old_size, [])
            for k, b in enumerate(kept):
                if b is old:
                    del kept[k]
                    self.held -= old_size
                    break
        blocks.append(block)
        self.order[id(block)] = (nbytes, block)
        self.held += nbytes


# (shape, dtype) -> (size class, bytes used, whether the flat view needs a reshape): every
# output of every evaluation asks
_specs: dict = {}
POOL = Pool()
