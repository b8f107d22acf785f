"""The recorders' framework-free logic, with stand-ins for tensors, schemas and arrays
(the recorders themselves ran on an H200: test_sanitize_logs.py replays what they wrote)."""

from __future__ import annotations

from types import SimpleNamespace as NS

from streamlint.runtime.sanitize.record.log_writer import Recorder, is_pinned_numpy
from streamlint.runtime.sanitize.record.numba_recorder import NumbaRecorder
from streamlint.runtime.sanitize.record.torch_recorder import _is_view, tensor_range
from streamlint.runtime.sanitize.run import frameworks_named


def test_tensor_range_spans_a_strided_view():
    column = NS(numel=lambda: 4, data_ptr=lambda: 1000, shape=(4,), stride=lambda: (8,), element_size=lambda: 4)
    assert tensor_range(column) == (1000, (3 * 8 + 1) * 4)
    empty = NS(numel=lambda: 0, data_ptr=lambda: 1000)
    assert tensor_range(empty) is None


def test_views_are_ops_that_only_alias():
    alias, write = NS(is_write=False), NS(is_write=True)
    select = NS(returns=[NS(alias_info=alias)], arguments=[NS(alias_info=alias)])
    add_ = NS(returns=[NS(alias_info=write)], arguments=[NS(alias_info=write)])
    add = NS(returns=[NS(alias_info=None)], arguments=[NS(alias_info=None)])
    assert _is_view(select) and not _is_view(add_) and not _is_view(add)


def produce(x, y, rounds):  # a kernel body as Numba would see it
    i = 0
    y[i] = x[i] * rounds


class DeviceArray:
    def __init__(self, ptr):
        self.device_ctypes_pointer = NS(value=ptr)
        self.shape, self.strides, self.dtype = (16,), (4,), NS(itemsize=4)


def test_numba_launch_reads_and_writes_by_the_kernel_body():
    rec = Recorder()
    stream = NS(handle=NS(value=0x51))
    config = NS(stream=stream, dispatcher=NS(py_func=produce))
    NumbaRecorder(rec).on_launch(config, (DeviceArray(0x1000), DeviceArray(0x2000), 3))
    stream_event, launch = rec.events
    assert (stream_event.kind, stream_event.stream, stream_event.blocking) == ("stream", 0x51, True)
    assert (launch.name, launch.reads, launch.writes) == ("produce", [(0x1000, 64)], [(0x2000, 64)])


def test_numba_blocking_copy_is_a_sync():
    rec = Recorder()
    NumbaRecorder(rec).on_copy(0, reads=(0x1000, 64), writes=None, host=None)
    assert [e.kind for e in rec.events] == ["copy", "sync"]


def test_pinned_numpy_is_recognised_by_its_owner():
    class PinnedMemory:
        pass

    assert is_pinned_numpy(NS(base=PinnedMemory()))
    assert is_pinned_numpy(NS(base=NS(base=PinnedMemory())))  # a slice of a pinned array
    assert not is_pinned_numpy(NS(base=None))


def test_frameworks_named_by_the_program():
    assert frameworks_named("import torch\nfrom numba import cuda") == ["torch", "numba"]
    assert frameworks_named("from cuda.bindings import driver") == ["cuda-python"]
