"""Element writes into a device array's host mirror reach the device buffer before anything
reads it, as one copy of the range written (realize.write_through, ``_Uploading``), here with a
stand-in device backend that records its copies."""

from __future__ import annotations

import gc
import threading

import numpy

from numloom.core import realize
from numloom.core.dag import Op, node


class _FakeDeviceArray:
    def __init__(self, nbytes):
        self.memory = bytearray(nbytes)
        self.device = "fake"
        self.ptr = 0


class _FakeBackend:
    def __init__(self):
        self.copies = []

    def write_bytes(self, data, offset, address, nbytes):
        self.copies.append((offset, nbytes))
        source = (numpy.ctypeslib.as_array((numpy.ctypeslib.ctypes.c_uint8 * nbytes)
                                           .from_address(address)))  # fmt: skip
        data.memory[offset : offset + nbytes] = source.tobytes()


def _storage(n=16):
    data = _FakeDeviceArray(8 * n)
    buffer = realize.Buffer(data, "fake")
    storage = realize.Storage(node(Op.BUFFER, (), buffer, (n,), numpy.dtype(float)), "fake")
    mirror = numpy.zeros(n)
    mirror.flags.writeable = False
    storage.mirror = (lambda: storage.version, mirror)
    return storage, buffer, data, mirror


def _write(storage, mirror, i, value):
    mirror.flags.writeable = True
    mirror[i] = value
    mirror.flags.writeable = False
    realize.write_through(storage, 8 * i, 8)


def test_a_loop_of_writes_is_one_copy_when_the_data_is_next_taken(monkeypatch):
    backend = _FakeBackend()
    monkeypatch.setitem(realize._backends, "fake", backend)
    storage, buffer, data, mirror = _storage()
    for i, v in ((3, 1.5), (5, 2.5), (4, -1.0)):
        _write(storage, mirror, i, v)
    assert backend.copies == [] and type(buffer) is not realize.Buffer
    assert buffer.data is data  # (what a kernel, a copy to the host or an export takes)
    assert backend.copies == [(24, 24)] and type(buffer) is realize.Buffer
    assert numpy.frombuffer(bytes(data.memory), float).tolist() == mirror.tolist()
    assert buffer.data is data
    assert backend.copies == [(24, 24)]  # nothing new: nothing copied again
    _write(storage, mirror, 0, 9.0)
    assert buffer.data is data and backend.copies[-1] == (0, 8)
    assert numpy.frombuffer(bytes(data.memory), float)[0] == 9.0


def test_threads_taking_the_data_wait_for_the_copy(monkeypatch):
    backend = _FakeBackend()
    monkeypatch.setitem(realize._backends, "fake", backend)
    storage, buffer, data, mirror = _storage(1024)
    for i in range(0, 1024, 7):
        _write(storage, mirror, i, float(i))
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(bytes(buffer.data.memory)))
               for _ in range(8)]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(backend.copies) == 1
    assert all(numpy.frombuffer(s, float).tolist() == mirror.tolist() for s in seen)


def test_a_buffer_that_dies_with_writes_pending_is_forgotten(monkeypatch):
    backend = _FakeBackend()
    monkeypatch.setitem(realize._backends, "fake", backend)
    storage, buffer, data, mirror = _storage()
    _write(storage, mirror, 1, 1.0)
    assert len(realize._UPLOADS) >= 1
    before = len(realize._UPLOADS)
    del storage, buffer
    gc.collect()  # (the stand-in mirror's weak reference here is a closure: a cycle)
    assert len(realize._UPLOADS) == before - 1 and backend.copies == []
