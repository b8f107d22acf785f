"""The hazard walk's half of the walker: operations applied to the happens-before state,
and the buffers each call reads and writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

import libcst as cst

from streamlint.model.hazards import (
    AMBIENT,
    ANY,
    DEVICE,
    HOST,
    HOSTMEM,
    LEGACY,
    RAW,
    RELEASE,
    WAR,
    Access,
    Ev,
    Hazard,
    stream_key,
    unsure,
)
from streamlint.model.ops import (
    DEVICE_WORK,
    GpuOp,
    OpKind,
)
from streamlint.model.values import (
    UNKNOWN,
    Buffer,
    Event,
    Mem,
    Seq,
    Stream,
    Value,
)
from streamlint.model.walk_common import (
    _POINTER_ATTRS,
    _Batch,
)

if TYPE_CHECKING:
    pass

# Frameworks that keep a per-thread current stream.


class OrderingMixin:
    """Methods of Walker that drive the ordering state (see hazards.py)."""

    def order(self, op: GpuOp) -> None:
        """Apply one operation to the ordering state and check its buffer accesses."""
        hb = self.state.hb
        kind = op.kind
        if self.capturing and kind in DEVICE_WORK | {OpKind.EVENT_RECORD, OpKind.STREAM_WAIT_EVENT, OpKind.WAIT_STREAM}:
            self.captured.append(op)  # captured into a graph: it runs when the graph is launched
            return
        event_site = op.event.site if isinstance(op.event, Event) and op.event.site else None
        if kind is OpKind.DEVICE_SYNC:
            hb.host_sync(None)
        elif kind is OpKind.STREAM_SYNC:
            hb.host_sync(stream_key(op.target) if op.target is not None else None)
            if op.target is not None and op.target.explicit and (
                    op.target.uncertain or op.target.label.split(".", 1)[0] in self.params - {"self"}):
                hb.maybe_sync()
        elif kind is OpKind.OUTSIDE_STREAMS:
            for acc in op.accesses:
                if acc.write:
                    hb.host_write(acc, op.node, op.framework, check=False)
                    continue
                for hazard in hb.outside_read(acc, op.node, op.framework):
                    self.hazards.setdefault(hazard.identity, hazard)
        elif kind is OpKind.EVENT_SYNC:
            hb.host_sync_event(event_site)
        elif kind is OpKind.EVENT_CREATE:
            if event_site is not None:
                hb.event_created(event_site)
        elif kind is OpKind.EVENT_RECORD:
            if op.stream is not None and event_site is not None:  # an unknown event: nothing to record
                hb.record_event(event_site, stream_key(op.stream))
                self.event_streams[event_site] = (stream_key(op.stream), op.stream.label)
        elif kind is OpKind.STREAM_WAIT_EVENT:
            if op.stream is not None:
                self.note_join(op, self.event_streams.get(event_site) if event_site is not None else None)
                hb.wait_event(stream_key(op.stream), event_site)
        elif kind is OpKind.WAIT_STREAM:
            if op.stream is not None:
                target = (stream_key(op.target), op.target.label) if op.target is not None else None
                self.note_join(op, target)
                if target is not None and target[0] == self.entry_key and op.stream.explicit:
                    self.forks[stream_key(op.stream)] = (op.node, op.helper)  # a side stream follows the caller's
                hb.wait_stream(stream_key(op.stream), stream_key(op.target) if op.target is not None else None, op.node)
                self.check_join_into_default(op)
        elif kind is OpKind.RECORD_STREAM:
            target = stream_key(op.target) if op.target is not None else None
            for acc in op.accesses:
                if target is None:
                    hb.allocs.pop(acc.key, None)  # recorded on a stream we cannot name: protected
                else:
                    hb.record_stream(acc.key, target)
        elif kind is OpKind.RAW_ALLOC:
            hb.host_sync(None)  # cudaMalloc/cudaFree synchronize the device
        elif (kind in DEVICE_WORK or kind is OpKind.IMPLICIT_SYNC) and op.stream is not None:
            key = stream_key(op.stream)
            clock = hb.tick(key, op.stream.blocking)
            label = op.stream.label or "a stream"
            found: list[Hazard] = []
            for acc in op.accesses:
                self.state_before_entry(acc, op, key)
                ev = Ev(op.node, key, clock, label=label, api=op.api, space=acc.space, via=op.helper)
                found.extend(hb.device_access(acc, ev, op.framework))
                hb.used(acc.key, ev)
            # A read-modify-write racing another writer is one problem, not two: SL402
            # when the body is seen to write, SL401 when the write is only assumed (a
            # kernel body we cannot read).
            assumed = {a.key for a in op.accesses if a.write and a.assumed}
            written = {h.key for h in found if h.kind is WAR}
            read = {h.key for h in found if h.kind is RAW}
            # A wait on the default stream instead of the current one is the problem itself.
            misdirected = {h.key for h in found if h.waits_on_default}
            for hazard in found:
                if hazard.kind is RAW and hazard.key in written and hazard.key not in assumed | misdirected:
                    continue
                if hazard.kind is WAR and hazard.key in read and hazard.key in assumed | misdirected:
                    continue
                self.hazards.setdefault(hazard.identity, hazard)
            if op.host_blocking is True or self.drains_host(op):
                hb.host_sync(key)
            self.allocations(op, key, label)
        elif kind is OpKind.ALLOC and op.stream is not None and op.framework == "torch":
            self.allocations(op, stream_key(op.stream), op.stream.label or "a stream")

    def state_before_entry(self, acc, op: GpuOp, key: str) -> None:
        """`self.x`, which the body shows to be a CUDA tensor, first touched on a PyTorch side
        stream: like a parameter, it was made before this call, on the caller's current
        stream, which a side stream does not follow unless it waits for it."""
        hb = self.state.hb
        if self.entry_key != AMBIENT or op.framework != "torch" or acc.key[0] != "n" or key in (AMBIENT, LEGACY):
            return
        name = acc.key[1]
        if not name.startswith("self.") or name.count(".") != 1 or unsure(key) or hb.has_history(acc.key):
            return
        if name not in self.evident_tensors:
            return  # only state the body shows to be a CUDA tensor (handed to a collective)
        node = op.node
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                self.code(node.func.value).startswith(name):
            return  # the receiver of a method we cannot see (a config, a manager): not known to be data
        if op.stream is not None and op.stream.label == name:
            return  # the stream itself, handed to a call
        if self.an.class_attr(self.record.class_name, name[5:]) is not UNKNOWN:
            return  # made where the class shows it (`__init__`): the class composition orders it
        hb.produced_before_entry(("n", name, ""), self.record.node, self.entry_clock, self.entry_key)

    def note_join(self, op: GpuOp, target: Optional[tuple[str, str]]) -> None:
        """The current stream waits for `target`: remember the side-stream writes it does
        not order, in case the body never orders them (it may have meant their stream)."""
        current = self.state.current.get(op.framework)
        if target is None or current is None or unsure(target[0]) or stream_key(op.stream) != stream_key(current):
            return
        pending = self.state.hb.unordered_side_writes(stream_key(current), besides=target[0])
        if pending:
            self.joins.append((op, target[1], stream_key(current), pending))

    def check_joins_at_exit(self) -> None:
        """A body whose current stream waits for one side stream while the writes it queued
        on another are still unordered at its end: the wait names the wrong stream."""
        hb = self.state.hb
        for op, waited, current, pending in self.joins:
            still = [(key, ev) for key, ev in pending if not hb.ordered(current, ev)]
            if not still:
                continue
            key, ev = still[0]
            hazard = Hazard(RAW, op.node, ev.node, key[1] if isinstance(key[1], str) else "", ev.label, waited,
                            op.framework, ev.api, key=("join", id(op.node)), wrong_wait=True)
            self.hazards.setdefault(hazard.identity, hazard)

    def check_join_into_default(self, op: GpuOp) -> None:
        """`torch.cuda.default_stream().wait_stream(side)` in a function whose current stream
        is the caller's: the work after it, on the current stream, is not ordered after
        `side` (under a caller's side stream or a CUDA graph the two differ)."""
        target, current = op.target, self.state.current.get("torch")
        if self.entry_key != AMBIENT or self.record.kind == "module" or op.framework != "torch" or op.helper is not None:
            return  # (inside a helper: reported there)
        receiver = op.node.func.value if isinstance(op.node, cst.Call) and isinstance(op.node.func, cst.Attribute) else None
        if not isinstance(receiver, cst.Call):
            return  # `compute_stream.wait_stream(...)`: a stream the code chose to compute on, by name
        if target is None or not target.explicit or target.uncertain or current is None:
            return
        if stream_key(op.stream) != LEGACY or stream_key(current) != AMBIENT:
            return
        hazard = Hazard(RAW, op.node, op.node, "", target.label or "a stream", "the current stream", "torch",
                        key=("join", id(op.node)), joins_default=True)
        self.hazards.setdefault(hazard.identity, hazard)

    def allocations(self, op: GpuOp, key: str, label: str) -> None:
        """A torch op that makes a new CUDA tensor allocates it on the current stream."""
        result = op.result
        if not (isinstance(result, Buffer) and result.framework == "torch" and result.mem is Mem.DEVICE and result.site):
            return
        if op.kind is not OpKind.ALLOC and not any(a.fresh and a.key[1] == result.site for a in op.accesses):
            return  # in place, or a copy whose source may already be on the device
        hb = self.state.hb
        after_entry = key != self.entry_key and hb.stream_vc(key).get(self.entry_key, 0) >= self.entry_clock > 0
        hb.allocated(("b", result.site, ""), key, label, op.node, after_entry=after_entry)

    @staticmethod
    def drains_host(op: GpuOp) -> bool:
        """A D2H copy into memory not known to be pinned waits for its stream in practice."""
        return op.kind is OpKind.COPY_D2H and op.host_blocking is not True and not op.pinned_out and not (
            isinstance(op.host_buffer, Buffer) and op.host_buffer.mem is Mem.PINNED
        )

    def access(self, expr: Optional[cst.BaseExpression], value: Value, write: bool, space: str = ANY) -> Optional[Access]:
        """The buffer an argument names, for the ordering check (None: we cannot tell)."""
        if expr is None:
            return None
        region = ""
        base = expr
        while True:
            if isinstance(base, cst.Subscript):
                region = region or self.slice_region(base)
                base = base.value
            elif isinstance(base, cst.BinaryOperation) and isinstance(value, Buffer) and value.framework == "raw":
                region = region or self.code(base.right)
                base = base.left
            elif isinstance(base, cst.Attribute) and base.attr.value in _POINTER_ATTRS and not self.code(base).startswith("self."):
                base = base.value
            else:
                break
        label = self.code(base)
        if isinstance(base, cst.Call) and isinstance(value, Buffer) and value.param and value.region.startswith("."):
            label = value.label  # `mem.buffer(n)`: what `mem` keeps (`mem.memory`)
        if isinstance(base, cst.Name) and base.value in self.scalar_names:
            return None  # a parameter the code types as a scalar or a group: never a buffer
        if not region and isinstance(value, Buffer) and value.region:
            region = value.region  # a name bound to a view: `halo = buf[:, h:h + 1]`
        if isinstance(value, Buffer) and value.site:
            return Access(("b", value.site, region), label, write, space)
        if isinstance(value, Buffer) and value.param:
            # A parameter typed by evidence: keyed by its name, as call sites map it.
            return Access(("n", value.param, region), label, write, space)
        joined = isinstance(value, Buffer) and not value.site  # made differently on two paths: known by its name
        if value is UNKNOWN or isinstance(value, _Batch) or joined:
            if isinstance(base, cst.Name):
                return Access(("n", base.value, region), label, write, space)
            if isinstance(base, cst.Attribute) and label.startswith("self.") and label.count(".") == 1:
                return Access(("n", label, region), label, write, space)
            root, _, path = label.partition(".")
            if isinstance(base, cst.Attribute) and root in self.params and path.isidentifier():
                # `param.grad`, `p.data`: part of what the caller passed (made before entry).
                return Access(("n", root, region or f".{path}"), label, write, space)
        return None

    def slice_region(self, sub: cst.Subscript) -> str:
        """Which part of a buffer one subscript names, as far as the text shows: a slice
        along one axis (`x[a:b]`, `x[:, :, a:b, :]`, axis-tagged past the first), a
        constant element, a loop slot; "" for the whole buffer or what the text cannot tell."""
        elements = sub.slice
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Slice):
            text = self.code(elements[0].slice)
            return "" if text.strip() in (":", "::") else text + self.versions_in(elements[0].slice)
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            value = elements[0].slice.value
            if isinstance(value, (cst.Integer, cst.SimpleString)):
                return f"[{self.code(value)}]"
            return self.slot(value)
        bounded = [i for i, el in enumerate(elements)
                   if not (isinstance(el.slice, cst.Slice) and self.code(el.slice).strip() in (":", "::"))]
        if len(bounded) == 1 and isinstance(elements[bounded[0]].slice, cst.Slice):
            axis, part = bounded[0], elements[bounded[0]].slice
            text = self.code(part) + self.versions_in(part)
            return text if axis == 0 else f"@{axis}:{text}"
        return ""

    def slot(self, index: cst.BaseExpression) -> str:
        """Which element an index names, as far as the text shows: `buf[k]`, `buf[k - 1]`
        and `buf[(k + 1) % 2]` in terms of the binding of `k` they read (each pass of a
        loop binds its variable anew, so `buf[(k - 1) % 2]` in one step is the slot
        `buf[k % 2]` of the step before). Anything else: the whole buffer."""
        affine = _affine(index)
        if affine is not None:
            name, offset, modulus = affine
            alias = self.index_aliases.get((name, self.versions.get(name, 0)))
            if alias is not None and not (modulus and alias[3]):
                # `buf = frame % 2` ... `h[buf]`: the slot of `frame` it was computed from.
                base, base_version, base_offset, base_modulus = alias
                position = base_version + base_offset + offset
                modulus = modulus or base_modulus
                return f"[{base}%{modulus}={position % modulus}]" if modulus else f"[{base}={position}]"
            if name in self.versions:
                position = self.versions[name] + offset
                return f"[{name}%{modulus}={position % modulus}]" if modulus else f"[{name}={position}]"
        return ""

    def versions_in(self, node: cst.CSTNode) -> str:
        """`#k3`: the bindings of loop-varying names a slice reads (one step's slice is not the next's)."""
        names = sorted({n.value for n in _names(node) if n.value in self.versions})
        return "".join(f"#{name}{self.versions[name]}" for name in names)

    def accesses(self, pairs: Iterable[tuple], write: bool = False, space: str = ANY) -> tuple[Access, ...]:
        out = []
        for expr, value in pairs:
            acc = self.access(expr, value, write, space)
            if acc is not None:
                out.append(acc)
        return tuple(out)

    def result_access(self, value: Value, node: cst.CSTNode, space: str = DEVICE) -> tuple[Access, ...]:
        if isinstance(value, Buffer) and value.site:
            return (Access(("b", value.site, ""), self.code(node)[:40], True, space, fresh=True),)
        return ()

    def host_touch(self, expr: cst.BaseExpression, value: Value, write: bool, framework: str = "") -> None:
        """The host reads or writes a host buffer (SL403 / SL402 against pending async copies)."""
        hb = self.state.hb
        if hb is None or not (isinstance(value, Buffer) and value.mem in (Mem.PINNED, Mem.PAGEABLE)):
            return
        acc = self.access(expr, value, write, HOSTMEM)
        if acc is None:
            return
        if write:
            # Refilling pageable memory is safe: an async copy from it was staged (copied
            # away) before the call returned. Only pinned memory is read later by the DMA.
            found = hb.host_write(acc, expr, framework or value.framework, check=value.mem is Mem.PINNED)
        else:
            found = hb.host_read(acc, expr, framework or value.framework)
            # A helper's copy whose result this caller reads after a wait: the helper's
            # callers order its copy themselves (analysis.place_returned_copies).
            self.synced_copies.update(id(w.via.node) for w in hb.pending_writes(acc.key)
                                      if w.via is not None and w.space == HOSTMEM and hb.ordered(HOST, w))
        for hazard in found:
            self.hazards.setdefault(hazard.identity, hazard)

    def finish(self) -> None:
        """End of a function body: tensors it made and did not hand out are released."""
        hb = self.state.hb
        if hb is None or self.record.kind == "module":
            return
        self.check_joins_at_exit()
        self.peer_releases()
        held = {v.site for k, v in self.state.vars.items() if k.startswith("self.") and isinstance(v, Buffer)}
        for key in list(hb.allocs):
            if key[0] == "b" and key[1] not in self.escaped and key[1] not in held:
                name = next((k for k, v in self.state.vars.items() if isinstance(v, Buffer) and v.site == key[1]), "")
                if not name:  # an unnamed temporary: name it by the call that made it
                    made = hb.allocs[key].node
                    name = f"{self.code(made.func)}(...)" if isinstance(made, cst.Call) else self.code(made)[:40]
                for hazard in hb.released(key, self.record.node, name):
                    self.hazards.setdefault(hazard.identity, hazard)

    def peer_releases(self) -> None:
        """Holder attributes another function made together (peers.py): where this body
        records one of them on a stream, it takes them as made elsewhere; each other one
        it uses on that stream without recording it there is reported at its first use.
        The holder keeps it until the producer rebinds it, and that frees the block for new
        work on the producer's stream while this stream's work may still use it."""
        hb = self.state.hb
        for path, value in self.peer_values.items():
            peer = self.peers[path]
            anchor = self.peer_values.get(peer.anchor)
            if path == peer.anchor or anchor is None:
                continue
            recorded = hb.allocs.get(("b", anchor.site, ""))
            alloc = hb.allocs.get(("b", value.site, ""))
            if recorded is None or alloc is None:
                continue
            for use in alloc.uses:
                if use.stream not in recorded.recorded or use.stream in alloc.recorded or unsure(use.stream):
                    continue
                name = next((k for k, v in self.state.vars.items() if v == value and "." not in k), path)
                hazard = Hazard(RELEASE, use.node, peer.made, name, alloc.stream_label, use.label, "torch",
                                release=peer.made, key=("b", value.site, ""), peer=peer.record)
                self.hazards.setdefault(hazard.identity, hazard)
                break

    def handed_out(self, value: Value, node: cst.CSTNode) -> None:
        """`return y`: the caller uses `y` on its current stream. A result still being
        written on a stream the caller cannot name (made here, or kept on `self`) with
        no wait by the current stream races with whatever the caller does with it."""
        hb = self.state.hb
        if hb is None or self.record.kind == "module":
            return
        items = (value.items or ()) if isinstance(value, Seq) else (value,)
        # Handing out the stream, or an event recorded on it, lets the caller wait.
        handles = {stream_key(v) for v in items if isinstance(v, Stream)}
        handles |= {stream_key(v.recorded_on) for v in items if isinstance(v, Event) and v.recorded_on is not None}
        if any(isinstance(v, Event) and v.recorded_on is None for v in items):
            return  # an event we cannot follow: assume it is the caller's means to wait
        for item in items:
            if not (isinstance(item, Buffer) and item.site and item.mem is Mem.DEVICE):
                continue
            for ev in hb.pending_writes(("b", item.site, "")):
                if ev.stream in (HOST, self.entry_key) or ev.stream in handles or ev.param or unsure(ev.stream) \
                        or ev.label.split(".")[0] in self.params or ("[" in ev.label and not self.private_list_stream(ev.label)):
                    # (a stream drawn from a list: the caller typically waits on the whole list,
                    # unless the list is private to this object and the caller cannot name it)
                    continue  # a stream the caller passed in: the caller can wait on it
                if hb.ordered(self.entry_key, ev) or hb.ordered(HOST, ev) or hb.blocking.get(ev.stream) is not False:
                    continue  # (the caller's legacy-stream work waits for a blocking stream)
                at = self.first_reads.get(item.label, node)
                hazard = Hazard(RAW, at, ev.node, item.label or "the returned value", ev.label,
                                "the caller's current stream", item.framework, ev.api,
                                key=("b", item.site, ""), other_via=ev.via)
                self.hazards.setdefault(hazard.identity, hazard)
                break
            self.handed_out_allocation(item, node, handles)

    def private_list_stream(self, label: str) -> bool:
        """`self._streams[i]` seen from a public method: its caller, outside the class, cannot
        name the stream to wait on it."""
        name = self.record.name.rsplit(".", 1)[-1]
        public = self.record.kind == "method" and (not name.startswith("_") or name.startswith("__"))
        return public and label.startswith("self._")

    def handed_out_allocation(self, item: Buffer, node: cst.CSTNode, handles: set) -> None:
        """A tensor kept on `self`, allocated on a side stream, handed to the caller, who
        uses it on its current stream (the prefetcher): without `record_stream`, when the
        caller drops it the allocator may give its block to the side stream's next
        prefetch while the caller's kernels still read it."""
        if not item.label.startswith("self."):
            return  # a result made for this call: the stream's next work is the caller's to order
        made = self.state.hb.allocs.get(("b", item.site, ""))
        if made is None or unsure(made.stream) or made.stream in (HOST, self.entry_key) or self.entry_key in made.recorded or made.stream in handles:
            return
        if made.after_entry:
            return  # the side stream waits for the caller's stream before each new allocation: no early reuse
        if made.stream_label.split(".")[0] in self.params or item.framework != "torch":
            return
        at = self.first_reads.get(item.label, node)
        hazard = Hazard(RELEASE, at, made.node, item.label or "the returned value", made.stream_label,
                        "the caller's current stream", "torch", release=node, key=("b", item.site, ""),
                        handed_out=True)
        self.hazards.setdefault(hazard.identity, hazard)

    def kept_for_caller(self, target: cst.Subscript, value: Value) -> None:
        """`self.store[k] = t`, `t` allocated here on a side stream, where a public method of
        the class hands the store's entries to its caller (`return self.store.pop(k)`,
        handouts.py): the caller uses it on its current stream and drops it, and without
        `record_stream` the allocator may give its block to the side stream's next work
        while the caller's kernels still read it. Reported at the allocation."""
        hb = self.state.hb
        if hb is None or self.record.kind != "method" or not self.record.class_name:
            return
        if not (isinstance(value, Buffer) and value.site and value.framework == "torch" and value.mem is Mem.DEVICE):
            return
        base = target.value
        if not (isinstance(base, cst.Attribute) and isinstance(base.value, cst.Name) and base.value.value == "self"):
            return
        made = hb.allocs.get(("b", value.site, ""))
        if made is None or unsure(made.stream) or made.stream in (HOST, self.entry_key) or made.after_entry \
                or self.entry_key in made.recorded or made.stream_label.split(".")[0] in self.params:
            return
        if any(use.stream != made.stream for use in made.uses):
            return  # (used on another stream here: the release check reports that use)
        out = self.an.handed_out_entries(self.record.class_name).get(base.attr.value)
        if out is None or out.method == self.record.name.rsplit(".", 1)[-1]:
            return
        label = next((k for k, v in self.state.vars.items() if v == value and "." not in k), "") or value.label
        hazard = Hazard(RELEASE, made.node, out.node, label or self.code(base), made.stream_label,
                        "the caller's current stream", "torch", release=out.node, key=("b", value.site, ""),
                        handed_out=True, kept_in=self.code(base), handed_by=out.method)
        self.hazards.setdefault(hazard.identity, hazard)

    def escape(self, value: Value) -> None:
        if isinstance(value, Buffer):
            self.escaped.add(value.site)
        elif isinstance(value, Seq):
            for item in value.items or (value.element,):
                self.escape(item)

    def release(self, value: Value, node: cst.CSTNode, label: str) -> None:
        """A torch tensor's last name goes away: the caching allocator may reuse its memory."""
        hb = self.state.hb
        if hb is None or not (isinstance(value, Buffer) and value.site) or value.site in self.escaped:
            return
        if ("b", value.site, "") not in hb.allocs:
            return  # not tracked (e.g. the first walk's value): nothing to release, and
            # the scan below would make long bodies quadratic
        if any(v == value for v in self.state.vars.values()):
            return  # still held by another name
        for hazard in hb.released(("b", value.site, ""), node, label):
            self.hazards.setdefault(hazard.identity, hazard)



def _affine(index: cst.BaseExpression) -> Optional[tuple[str, int, int]]:
    """`k`, `k + 1`, `k - 1`, `(k + c) % n`, `(c + k) % n` as (name, offset, modulus or 0)."""
    modulus = 0
    if isinstance(index, cst.BinaryOperation) and isinstance(index.operator, cst.Modulo):
        if not isinstance(index.right, cst.Integer):
            return None
        modulus = int(index.right.value, 0)
        if modulus <= 0:
            return None
        index = index.left
    if isinstance(index, cst.Name):
        return index.value, 0, modulus
    if isinstance(index, cst.BinaryOperation) and isinstance(index.operator, (cst.Add, cst.Subtract)):
        left, right = index.left, index.right
        sign = 1 if isinstance(index.operator, cst.Add) else -1
        if isinstance(left, cst.Name) and isinstance(right, cst.Integer):
            return left.value, sign * int(right.value, 0), modulus
        if sign == 1 and isinstance(right, cst.Name) and isinstance(left, cst.Integer):
            return right.value, int(left.value, 0), modulus
    return None


def _names(node: cst.CSTNode) -> Iterable[cst.Name]:
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

    node.visit(Names())
    return found
