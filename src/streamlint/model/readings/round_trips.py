"""Host reads of device values that the device computed only from numbers the host already
had (`int(cp.ceil(n / 32))`): a kernel and a wait the host could have skipped."""

from __future__ import annotations

from dataclasses import dataclass

from streamlint.model.file_model import FileModel
from streamlint.model.api.op_kinds import OpKind
from streamlint.model.summary.effects import EffectKind, Operation


@dataclass(frozen=True)
class RoundTrip:
    read_site: str  # the host read (`int(...)`, `.item()`)
    read: Operation
    kernel_site: str  # the call that computed the value on the device
    kernel: Operation


def round_trips(model: FileModel) -> list[RoundTrip]:
    """Every round trip in the file's functions (their own operations, under any context), once
    per read, in the order of the walks."""
    found: dict[str, RoundTrip] = {}
    prefix = model.module + "."
    for (qualname, _), walked in model.solved.walks.items():
        if not qualname.startswith(prefix):
            continue
        own = [e for e in walked.summary.effects
               if e.kind is EffectKind.OPERATION and e.operation is not None and not e.chain]
        kernels = {e.site: e.operation for e in own if e.operation.host_inputs}
        for effect in own:
            read = effect.operation
            if read.op != OpKind.IMPLICIT_SYNC.value or read.value_site not in kernels:
                continue
            if effect.site not in found:
                found[effect.site] = RoundTrip(effect.site, read, read.value_site, kernels[read.value_site])
    return list(found.values())
