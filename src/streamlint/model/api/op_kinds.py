"""The kinds of operation a framework call performs on streams, copies and the host (the
fact tables' enumerated kinds, shared by the analysis and the rules)."""

from __future__ import annotations

from enum import Enum


class OpKind(Enum):
    COPY_H2D = "H2D copy"
    COPY_D2H = "D2H copy"
    COPY_D2D = "D2D copy"
    COPY = "copy"  # direction not known from the text
    KERNEL = "kernel"
    MEMSET = "memset"
    RAW_ALLOC = "raw allocation"  # cudaMalloc / cudaFree: synchronizes the device
    ALLOC = "allocation"  # framework pools: no device work
    PINNED_ALLOC = "pinned allocation"
    STREAM_CREATE = "stream creation"
    EVENT_CREATE = "event creation"
    EVENT_RECORD = "event record"
    STREAM_WAIT_EVENT = "stream wait event"
    WAIT_STREAM = "wait stream"
    STREAM_SYNC = "stream synchronize"
    EVENT_SYNC = "event synchronize"
    DEVICE_SYNC = "device synchronize"
    IMPLICIT_SYNC = "implicit synchronization"
    HOST_TIMER = "host timer"  # reads a host timer or an elapsed time: a measurement (v3 only)
    SET_STREAM = "set current stream"
    PIN = "pin memory"
    RECORD_STREAM = "record stream"
    HOST_REGISTER = "host register"
