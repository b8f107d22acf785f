"""The words of the cross-stream hazard rules (SL401-SL404), read off the v3 model's hazard
readings: the buffer's and streams' labels (from syntax: the names at the sites), the lines,
and the call a side came through. Spelling is message data; no finding is decided here
except which conflict kinds each code reports."""

from __future__ import annotations

import re
from typing import Iterator, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from streamlint.fixes.edits import FixBuilder
from streamlint.model.api import torch_api
from streamlint.model.domain.order import HOST, ConflictKind
from streamlint.model.domain.paths import Index, IndexKind, Path, RootKind
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.file_model import FileModel
from streamlint.model.findings import Placement
from streamlint.model.readings.hazards import HazardReading, Side, readings
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.names import returned_names
from streamlint.rules._shared import DESCRIBED_STREAM, api_named

# The conflict kinds each code reports (the model knows kinds, not codes).
KIND_CODES = {
    ConflictKind.READ_AFTER_WRITE: "SL401",
    ConflictKind.WRITE_AFTER_READ: "SL402",
    ConflictKind.WRITE_AFTER_WRITE: "SL402",
    ConflictKind.HOST_WRITE_BEFORE_SYNC: "SL402",
    ConflictKind.HOST_READ_BEFORE_SYNC: "SL403",
    ConflictKind.RELEASE_WITHOUT_RECORD: "SL404",
}

HOST_WORDS = "the host"


class Words:
    """Labels and lines for one checked file's hazard readings."""

    def __init__(self, analysis) -> None:
        self.analysis = analysis
        self.model = analysis.v3
        self.builder = FixBuilder(analysis)
        self._positions: dict[int, dict] = {}
        self._parents: dict[int, dict] = {}

    # -- the readings a code reports ---------------------------------------------------
    def hazards(self, code: str) -> Iterator[HazardReading]:
        for reading in readings(self.model):
            if KIND_CODES.get(reading.kind) == code:
                yield reading

    def unjoined_side_streams(self) -> set[tuple[str, StreamRef]]:
        """(class or function, side stream) where the side stream reads what the current stream made (before the call or in
        it) with no wait for it: that one missing wait also leaves unordered whatever else the function's side-stream work meets of
        the callers' (the next call's allocations there against their use of what it returns)."""
        return {(wait_scope(h), h.later.stream) for h in readings(self.model)
                if h.kind is ConflictKind.READ_AFTER_WRITE and h.earlier.stream.kind is StreamRefKind.AMBIENT
                and h.later.stream.kind is StreamRefKind.PATH}

    def made_here_handed_out(self) -> dict[tuple[str, StreamRef], HazardReading]:
        """(class or function, stream) -> a release at the boundary of memory the function made on a stream the object keeps
        (its callers drop it; the next call's allocation there may take it)."""
        return {(wait_scope(h), h.later.stream): h for h in readings(self.model)
                if h.kind is ConflictKind.RELEASE_WITHOUT_RECORD and h.hazard.placement is Placement.AT_BOUNDARY
                and h.later.access.path.root.kind is RootKind.FRESH and h.later.stream.kind is StreamRefKind.PATH}

    # -- lines ---------------------------------------------------------------------------
    def line(self, node: Optional[cst.CSTNode], function=None) -> int:
        """The line of a node of the checked module, or of another module's (`function`: a
        FunctionRef of that module)."""
        if node is None:
            return 0
        if function is None or function.module == self.model.module:
            return self.analysis.line_of(node)
        unit = self.model.solver.program.unit(function.module)
        if unit is None:
            return 0
        positions = self._positions.get(id(unit.tree))
        if positions is None:
            positions = self._positions[id(unit.tree)] = MetadataWrapper(unit.tree, unsafe_skip_copy=True).resolve(
                PositionProvider)
        rng = positions.get(node)
        return rng.start.line if rng is not None else 0

    def foreign(self, function) -> str:
        """" of other.py" for a function of another module than the checked one (its file's name)."""
        if function is None or function.module == self.model.module:
            return ""
        return f" of {function.module.rsplit('.', 1)[-1]}.py"

    # -- the call a side came through ---------------------------------------------------
    def inside(self, side: Side) -> str:
        """' inside `helper()` (`api` at line N[ of other.py])' for an access a called function made."""
        if not side.through_call or side.node is None:
            return ""
        chain = side.access.chain
        called = (chain[1] if len(chain) > 1 else side.access.site).partition("#")[0]
        name = called.rsplit(".", 1)[-1]
        if name == "<module>":
            return ""
        where = f"line {self.line(side.node, side.callee)}{self.foreign(side.callee)}"
        return f" inside `{name}()` ({api_named(self._code(side.node))} at {where})"

    def _code(self, node: cst.CSTNode) -> str:
        if isinstance(node, cst.Call):
            func = node.func
            while isinstance(func, cst.Subscript):  # a kernel launch `k[grid, block, s](...)`
                func = func.value
            return _callee_spelled(func)
        if isinstance(node, cst.Assign):
            return _spelled(node.targets[0].target)
        if isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            return _spelled(node.target)
        return _spelled(node)

    def in_maker(self, side: Side) -> str:
        """' in `f()` before line N[ of other.py]' where a callee that made the stream it reads on can make
        it wait (the caller cannot name that stream): before the outermost `with` of `f` around the read
        (inside it the stream is current), else before the read's statement; "" when not such a side."""
        ref, callee = side.stream, side.callee
        if not side.through_call or side.node is None or callee is None or ref.kind is not StreamRefKind.CREATED:
            return ""
        if _site_steps(ref.site)[-1].partition("#")[0] != callee.qualname:
            return ""
        place, current = side.node, self._parent(side.node)
        while current is not None and current is not callee.node:
            if isinstance(current, (cst.SimpleStatementLine, cst.With)) and (place is side.node or isinstance(current, cst.With)):
                place = current
            current = self._parent(current)
        name = callee.qualname.rsplit(".", 1)[-1]
        return f" in `{name}()` before line {self.line(place, callee)}{self.foreign(callee)}"

    # -- labels --------------------------------------------------------------------------
    def stream(self, ref: StreamRef, reading: HazardReading, near: Optional[Side] = None) -> str:
        """A stream as a message names it: its name in code, or in words."""
        if ref == HOST:
            return HOST_WORDS
        if ref.kind is StreamRefKind.AMBIENT:
            if isinstance(reading.function.node, cst.Module) and reading.framework == "torch":
                return "the legacy default stream"  # a script's current stream, no caller to set it
            return "the current stream"
        if ref.kind is StreamRefKind.LEGACY:
            # CuPy's, Numba's and cuda-python's current stream is the legacy one unless set
            return "the legacy default stream" if reading.framework == "torch" else "the current stream"
        if ref.kind is StreamRefKind.PER_THREAD:
            return "the per-thread default stream"
        if ref.kind is StreamRefKind.PATH and ref.path is not None and ref.path.root.kind is RootKind.FRESH:
            # one of the streams a list the function made holds (`streams[k % 2]`): "streams[...]"
            site = ref.path.root.site
            made = self.site_label(site, (near.node,) if near is not None else ())
            if not made and len(_site_steps(site)) > 1:
                # made in a callee (an object's list kept on `self`): the name the callee binds it to
                made = self.bound_to(self.model.node_of(_site_steps(site)[-1]))
            made = made.removesuffix("[...]")
            index = next((step for step in ref.path.steps if isinstance(step, Index)), None)
            if not made or index is None:
                return made or "an unknown stream"
            return f"{made}[{index.const!r}]" if index.kind is IndexKind.CONST else f"{made}[...]"
        if ref.kind is StreamRefKind.PATH and ref.path is not None:
            return self.stream_path(ref.path)
        if ref.kind is StreamRefKind.CREATED:
            steps = _site_steps(ref.site)
            # made in a callee for its own work: the local name it binds it to (a call's target names
            # what the call returns); kept on `self`, the caller's name of the object's attribute
            inner = self.bound_to(self.model.node_of(steps[-1])) if len(steps) > 1 else ""
            if inner.startswith("self.") and len(steps) == 2 and self._on_own_receiver(steps[0]) \
                    and self._owner_class(steps[-1]) == reading.function.class_name:
                return inner  # kept on this very object by its own method: the caller names it so too
            local = inner if not inner.startswith("self.") else ""
            if local and len(steps) == 2 and self._returns(steps[-1], local):
                # a getter that returns the stream it made (or cached): the caller's name of what the call returns
                local = self.bound_to(self.model.node_of(steps[0])) or local
            bound = local or self.site_label(ref.site, (near.node,) if near is not None else ())
            if len(steps) == 1 and bound.startswith("self.") and ref.site.rpartition("#")[0] != reading.function.qualname:
                # made by another function of another class (an object's constructor): `self` there is not this
                # function's; the object has no name here
                made_by = self._owner_class(ref.site)
                if made_by and made_by != reading.function.class_name:
                    return f"{DESCRIBED_STREAM}`{made_by}` keeps at `{_any_index(bound)}`"
            owner = self._owner_class(steps[-1]) if not bound and inner.startswith("self.") else ""
            if owner and owner != reading.function.class_name:
                return f"{DESCRIBED_STREAM}`{owner}` keeps at `{inner}`"  # (the object has no name here: in words)
            bound = bound or inner
            if bound or len(steps) > 1:
                return bound or "the stream a callee made"
            made = self.model.node_of(outer_site(ref.site))
            if made is None:
                return "the stream a callee made"
            return self._element_of_bound(made) or _spelled(made)
        if ref.kind is StreamRefKind.EITHER:
            # one of two streams by the path taken (D-14): the side stream the code names, the
            # one a problem on that path is about
            sides = [m for m in ref.members if m.kind in (StreamRefKind.PATH, StreamRefKind.CREATED)]
            return " or ".join(self.stream(m, reading, near) for m in (sides if len(sides) == 1 else ref.members))
        return "an unknown stream"

    def _element_of_bound(self, made: cst.CSTNode) -> str:
        """A stream made as the element of a list bound to a name (`self.streams = [Stream() for _
        in range(n)]`): "self.streams[...]", one of them."""
        parent = self._parent(made)
        if isinstance(parent, cst.Element):
            parent = self._parent(parent)
        if not isinstance(parent, (cst.ListComp, cst.List, cst.Tuple)):
            return ""
        bound = self.bound_to(parent)
        return f"{bound}[...]" if bound else ""

    def stream_for_code(self, ref: StreamRef, reading: HazardReading, near: Optional[Side] = None) -> str:
        """The label a fix spells a stream from: the current stream where the work runs on
        whatever is current (a script's included: `current_stream()` names it wherever the
        fix goes, and is the stream the model sees), else the stream's label."""
        if ref.kind is StreamRefKind.AMBIENT:
            return "the current stream"
        return self.stream(ref, reading, near)

    def bound_to(self, node: Optional[cst.CSTNode], near: tuple = (), items: bool = False) -> str:
        """The name a call's value is bound to (`s = torch.cuda.Stream()` -> "s"); of a tuple
        target (`err, s = cudaStreamCreate()`), the one element the `near` nodes use; `items`: memory the call
        made inside it, which a loop over its value binds to its target."""
        if node is None:
            return ""
        parent = self._parent(node)
        while isinstance(parent, (cst.Attribute, cst.Call)) and (getattr(parent, "value", None) is node
                                                                   or getattr(parent, "func", None) is node):
            # `torch.randn(n).mul_(s)`: the name binds what the chain on the new memory returns
            node, parent = parent, self._parent(parent)
        element = ""
        if isinstance(parent, cst.ListComp) and parent.elt is node:
            # `[cuda.stream() for _ in range(2)]`: one of the list's items, `streams[...]`
            node, parent, element = parent, self._parent(parent), "[...]"
        target = None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
        elif isinstance(parent, cst.AnnAssign):
            target = parent.target
        elif isinstance(parent, cst.WithItem) and parent.asname is not None:
            target = parent.asname.name
        elif isinstance(parent, cst.For) and parent.iter is node and items:
            target = parent.target  # (a generator's items: `for batch in prefetched(loader)`)
        elif isinstance(node, cst.For) and items:
            target = node.target  # (what the loop's `__iter__` call made: `for batch in Prefetcher(loader)`)
        if isinstance(target, (cst.Tuple, cst.List)):
            names = [_spelled(e.value) for e in target.elements]
            used = {_spelled(n) for place in near for n in _walk(place) if isinstance(n, (cst.Name, cst.Attribute))}
            chosen = [n for n in names if n in used]
            return chosen[0] if len(chosen) == 1 else ""
        return _spelled(target) + element if target is not None else ""

    def _parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        found = self.builder.parent(node)
        if found is not None:
            return found
        for unit_tree in self._trees():
            parents = self._parents.get(id(unit_tree))
            if parents is None:
                parents = self._parents[id(unit_tree)] = {id(c): n for n in _walk(unit_tree) for c in n.children}
            if id(node) in parents:
                return parents[id(node)]
        return None

    def _trees(self) -> list:
        units = getattr(self.model.solver.program, "_units", {})
        return [u.tree for name, u in units.items() if u is not None and name != self.model.module]

    def site_label(self, site: str, near: tuple = ()) -> str:
        """The name of what a site made, in the walked function's terms: the name its call's
        value is bound to, and for memory a callee made and kept on `self` (`stager =
        FrameStager()`; `self.frame = cp.empty(...)` in `__init__`) that name's attribute
        (`stager.frame`)."""
        steps = _site_steps(site)
        # (memory a call made inside it is what a loop over its value binds; a constructor's is the object's state)
        items = len(steps) > 1 and not self._constructor(steps[1])
        label = self.bound_to(self.model.node_of(steps[0]), near, items=items)
        if not label:
            return ""
        for inner in steps[1:]:
            kept = self.bound_to(self.model.node_of(inner))
            if kept.startswith("self."):
                label += kept[len("self"):]
        return label

    def _handed_names(self, site: str) -> set:
        """The plain names a call at the outermost step of `site` hands over (its arguments, and the items of a
        tuple it is given: `Thread(target=f, args=(q, s))`)."""
        call = self.model.node_of(_site_steps(site)[0])
        if not isinstance(call, cst.Call) or len(_site_steps(site)) < 2:
            return set()
        # (only a call whose value is not the memory: a bare statement, or one handing `args=` to a thread)
        bare = isinstance(self._parent(call), cst.Expr)
        if not bare and not any(a.keyword is not None and a.keyword.value == "args" for a in call.args):
            return set()
        values = [a.value for a in call.args]
        values += [e.value for v in values if isinstance(v, cst.Tuple) for e in v.elements]
        return {v.value for v in values if isinstance(v, cst.Name)}

    def _on_own_receiver(self, site: str) -> bool:
        """Is the call at `site` a method call on the caller's own `self` (`self.helper()`)?"""
        call = self.model.node_of(site)
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
            and isinstance(call.func.value, cst.Name) and call.func.value.value == "self"

    def _returns(self, site: str, name: str) -> bool:
        """Does the function the site is in return the name as it is (`return stream`)?"""
        function = self.model.solver.program.function(site.rpartition("#")[0])
        return function is not None and name in returned_names(function.node)

    def _owner_class(self, site: str) -> str:
        """The class whose method the site is in ("" for a function)."""
        function = self.model.solver.program.function(site.rpartition("#")[0])
        return function.class_name if function is not None else ""

    def _constructor(self, site: str) -> bool:
        """Is the site's function a constructor (`C.__init__#3`)?"""
        function = self.model.solver.program.function(site.rpartition("#")[0])
        return function is not None and getattr(function.node, "name", None) is not None \
            and function.node.name.value == "__init__"

    def buffer(self, reading: HazardReading) -> str:
        """The memory both sides touch (the larger of the two paths), named as the code names it."""
        if reading.earlier.access.assumed:
            # the entry assumption spans what the caller made; the operation names the element it uses
            named_element = self._element_alias(reading.later.access.path, reading)
            if named_element:
                return named_element
        path = min((reading.later.access.path, reading.earlier.access.path), key=lambda p: len(p.steps))
        if reading.earlier.access.assumed:
            path = reading.later.access.path  # (the entry assumption spans the whole parameter)
        if path.root.kind is RootKind.FRESH:
            names = [self.site_label(site, (reading.later.node, reading.earlier.node))
                     for site in path.root.site.split("|")]
            # the buffer a list of allocations holds is named by the list (`h_in` for `h_in[k]`)
            names = [n.removesuffix("[...]") for n in names]
            name = names[0] if len(set(names)) == 1 else ""
            if name and "." not in name and self._made_elsewhere(path.root.site, reading):
                # a local name of another method (`tensor` where `allocate()` made it): not one the user can write here;
                # the item as this function's own operation reaches it (`self.tensors[name]`), if one does
                name = _receiver_in(reading)
            alias = self._alias_at(name, reading) if name else self._read_through(set(names) - {""}, reading)
            if alias and alias != name:
                return alias  # the name the code reads the memory through here: it names the part too
            # (memory a call put in a container it was handed, `fill(loader, q, s)`: the name read from that container,
            # else the item as what the callee put there; never the call's own value, which is not that memory)
            handed = self._handed_names(path.root.site)
            through = self._read_through(handed, reading, deep=True)
            if through:
                return through
            container = next((n for n in sorted(handed) if self._reaches({n}, reading)), "")
            if container:
                callee = _site_steps(path.root.site)[1].rpartition("#")[0].rsplit(".", 1)[-1]
                return f"an item `{callee}()` put in `{container}`"
            if not name:
                return self._named_in(reading) or "the memory"
            return self._as_read(self._with_steps(self._alias_at(name, reading), path.steps, reading), reading)
        element = self._element_alias(path, reading)
        if element:
            return element
        label = self.path(path, reading)
        if path.root.kind in (RootKind.SELF, RootKind.GLOBAL, RootKind.PARAM):
            return self._read_through({label}, reading) or self._given_through(label, reading) or label
        return label

    def _as_read(self, name: str, reading: HazardReading) -> str:
        """An item named where it was stored (`cpu_state[idx]`) as the reported operation reads it (`cpu_state[0]`):
        the store's index may not exist, or mean another item, where the user reads it."""
        base, bracket, _ = name.partition("[")
        if not bracket or reading.later.through_call:
            return name
        nodes = list(_walk(reading.node))
        read = [n for n in nodes if isinstance(n, cst.Subscript) and _spelled(n.value) == base]
        if not read and any(isinstance(n, (cst.Name, cst.Attribute)) and _spelled(n) == base for n in nodes):
            return base  # (the whole container handed on: `return host_norms`)
        return (_spelled(read[0]) or name) if len(read) == 1 else name

    def _element_alias(self, path: Path, reading: HazardReading) -> str:
        """An element the operations name by the local name the function binds it to
        (`gpu_param = self.gpu_param_of[param]`, `for bucket in self.buckets`): that name, with
        the attributes after the element (`bucket.grad_data`; `.data` is the tensor itself)."""
        at = next((i for i, step in enumerate(path.steps) if isinstance(step, Index)), None)
        if at is None:
            return ""
        base = self.path(path, reading)
        used = {_spelled(n) for side in (reading.later, reading.earlier) for n in _walk(side.node)
                if isinstance(n, cst.Name)}
        bound = set()
        for node in _walk(reading.function.node):
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Subscript) and _spelled(node.value.value) == base:
                bound |= {_spelled(t.target) for t in node.targets if isinstance(t.target, cst.Name)}
            elif isinstance(node, cst.For) and isinstance(node.target, cst.Name) and _spelled(node.iter) == base:
                bound.add(node.target.value)
        chosen = bound & used
        if len(chosen) != 1:
            return ""
        rest = []
        for step in path.steps[at + 1:]:
            if isinstance(step, Index):
                break
            rest.append(step)
        while rest and rest[-1] in torch_api.SAME_MEMORY_ATTRIBUTES:
            rest.pop()
        return ".".join([chosen.pop(), *rest])

    def path(self, path: Path, reading: Optional[HazardReading]) -> str:
        if path.root.kind is RootKind.RETURN:
            return f"the result of `{path.root.name.rsplit('.', 1)[-1]}()`"
        return self._with_steps(path.root.name.rsplit(".", 1)[-1] if path.root.kind is RootKind.GLOBAL
                                else path.root.spell() if path.root.kind is RootKind.PARAM else path.root.name,
                                path.steps, reading)

    def stream_path(self, path: Path) -> str:
        """A stream kept at a path, with every step (`self._stages[...].stream`: unlike a
        buffer's name, the stream is the last step, not the collection holding it)."""
        text = self.path(Path(path.root), None)
        for step in path.steps:
            if isinstance(step, Index):
                text += f"[{step.const!r}]" if step.kind is IndexKind.CONST else "[...]"
            else:
                text += f".{step}"
        return text

    @staticmethod
    def _with_steps(base: str, steps: tuple, reading: Optional[HazardReading]) -> str:
        """The buffer a path is part of: its attributes, up to the first element (`h_in`
        for `h_in[k % 2]`: the text names the buffer, the line shows the element)."""
        text = base
        for step in steps:
            if isinstance(step, Index):
                break
            text += f".{step}"
        return text

    def pointed(self, reading: HazardReading, label: str) -> cst.CSTNode:
        """The buffer's expression in the reported operation (the written target, the receiver,
        the argument), or the operation itself."""
        node = reading.node
        if reading.later.through_call:
            return node
        targets: list = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if _spelled(target) == label or (isinstance(target, cst.Subscript) and _spelled(target.value) == label):
                return target
        for inner in _walk(node):
            if isinstance(inner, (cst.Name, cst.Attribute)) and _spelled(inner) == label:
                outer = self._parent(inner)
                while isinstance(outer, cst.Subscript) and outer.value is inner:  # `h_in[k][:]`
                    inner, outer = outer, self._parent(outer)
                return inner
        return node

    def first_read(self, reading: HazardReading, label: str) -> cst.CSTNode:
        """Where the reporting function first reads the memory `label` names (`batch =
        self.next_input`): the object's state handed out is read there; else the reported node."""
        targets = set()
        for node in _walk(reading.function.node):
            if isinstance(node, cst.Assign):
                targets |= {id(t.target) for t in node.targets}
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                targets.add(id(node.target))
        for node in _walk(reading.function.node):
            if isinstance(node, (cst.Name, cst.Attribute)) and id(node) not in targets and _spelled(node) == label:
                return node
        return reading.node

    def written_through(self, side: Side) -> str:
        """The expression an in-place method writes through, as the code spells it at the write
        (`self.bucket.narrow(...)` for `self.bucket.narrow(0, k, n).copy_(g)`, `self.bucket` for
        `self.bucket[a:b].copy_(g)`), when the side is a method call the function itself makes."""
        node = side.node
        if side.through_call or not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return ""
        target = node.func.value
        while isinstance(target, cst.Subscript):
            target = target.value
        if isinstance(target, cst.Call):
            called = _spelled(target.func)
            return f"{called}(...)" if called else ""
        return _spelled(target) if isinstance(target, (cst.Name, cst.Attribute)) else ""

    def stored_into(self, side: Side) -> str:
        """The name a host store writes through (`self.lengths` for `self.lengths[:n] = x`), when
        the side is a store the function itself makes."""
        node = side.node
        if side.through_call or not isinstance(node, (cst.Assign, cst.AugAssign)):
            return ""
        target = node.targets[0].target if isinstance(node, cst.Assign) else node.target
        while isinstance(target, cst.Subscript):
            target = target.value
        return _spelled(target) if isinstance(target, (cst.Name, cst.Attribute)) else ""

    def _alias_at(self, name: str, reading: HazardReading) -> str:
        """The name the reported operation uses for the memory bound to `name`: `name`, or a
        name the function binds to an expression of it (`x = next_x`, `t = torch.from_dlpack(a)`,
        `half = buf[:n]`) when only that name is used there."""
        return self._read_through({name}, reading) or name

    def _read_through(self, names: set, reading: HazardReading, deep: bool = False) -> str:
        """Of the names the reported operation uses, the one the function binds to an
        expression of one of `names` (none when the operation uses one of `names` itself, or
        several such bindings fit): the name the code reads the memory through at that place."""
        if not names or reading.later.through_call:
            return ""
        used = {_spelled(n) for n in _walk(reading.node) if isinstance(n, (cst.Name, cst.Attribute))}
        if names & used:
            return ""
        aliases = set()
        for bound, mentioned in self._bindings(reading, deep):
            if bound & used and mentioned & names:
                aliases |= bound & used
        if deep:  # (through each name in turn: `batch = ready.get()`, then `inputs, targets = batch`)
            aliases = (_reached_from(names, self._bindings(reading, deep)) - set(names)) & used
        return aliases.pop() if len(aliases) == 1 else ""

    def _reaches(self, names: set, reading: HazardReading) -> bool:
        """Does the reported operation use a name bound, step by step, from one of `names`?"""
        used = {_spelled(n) for n in _walk(reading.node) if isinstance(n, (cst.Name, cst.Attribute))}
        return bool(_reached_from(names, self._bindings(reading, True)) & used)

    def _bindings(self, reading: HazardReading, deep: bool) -> list:
        """The function's bindings of names to values: (names bound, names the value mentions); `deep`: loop targets
        and unpacked tuples too."""
        bindings = []
        for node in _walk(reading.function.node):
            if isinstance(node, cst.Assign) and len(node.targets) == 1:
                target, value = node.targets[0].target, node.value
            elif deep and isinstance(node, (cst.For, cst.CompFor)):  # (`for chunk in staged`: an item of it)
                target, value = node.target, node.iter
            elif deep and isinstance(node, cst.NamedExpr):  # (`while (batch := ready.get()) is not None:`)
                target, value = node.target, node.value
            else:
                continue
            if not deep and not isinstance(target, cst.Name):
                continue
            # (`inputs, targets = batch`: each name an item of it)
            bound = [target] if isinstance(target, cst.Name) else \
                [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else []
            mentioned = {_spelled(n) for n in _walk(value) if isinstance(n, (cst.Name, cst.Attribute))}
            mentioned |= {_getattr_spelled(n) for n in _walk(value)}
            bindings.append(({b.value for b in bound if isinstance(b, cst.Name)}, mentioned))
        return bindings

    def _given_through(self, label: str, reading: HazardReading) -> str:
        """`helper(...)` where the reported call is given the memory through a call of a function
        of the module (`comm.Send(as_buffer(x))`): the value the operation is given is the helper's."""
        node = reading.node
        if reading.later.through_call or not isinstance(node, cst.Call):
            return ""
        module = self.model.solver.program.unit(reading.function.module)
        tree = module.tree if module is not None else None
        helpers = {n.name.value for n in getattr(tree, "body", ()) if isinstance(n, cst.FunctionDef)}
        for arg in node.args:
            given = arg.value
            if (isinstance(given, cst.Call) and isinstance(given.func, cst.Name) and given.func.value in helpers
                    and any(_spelled(a.value) == label for a in given.args)):
                return f"{given.func.value}(...)"
        return ""

    def _made_elsewhere(self, site: str, reading: HazardReading) -> bool:
        """Was the allocation made by another function than the one the reported node is in (not by a call it makes)?"""
        steps = _site_steps(site)
        made = self.model.node_of(steps[0]) if len(steps) == 1 else None
        return made is not None and self._function_around(made) is not self._function_around(reading.node)

    def _function_around(self, node: Optional[cst.CSTNode]) -> Optional[cst.CSTNode]:
        while node is not None and not isinstance(node, cst.FunctionDef):
            node = self._parent(node)
        return node

    def _named_in(self, reading: HazardReading) -> str:
        """Memory made where no name binds it: the code of the call that made it."""
        made = allocation_node(self.model, reading)
        if not isinstance(made, cst.Call):
            return ""
        parent = self._parent(made)
        while isinstance(parent, (cst.Attribute, cst.Call)):
            parent = self._parent(parent)
        return "the returned value" if isinstance(parent, cst.Return) else _spelled(made)


def _reached_from(names: set, bindings: list) -> set:
    """`names` and the names bound from them, step by step (`batch = ready.get()`, then `inputs, targets = batch`)."""
    reached, grown = set(names), True
    while grown:
        grown = False
        for bound, mentioned in bindings:
            if mentioned & reached and not bound <= reached:
                reached |= bound
                grown = True
    return reached


def _callee_spelled(node: cst.CSTNode) -> str:
    """A called expression as a message names it, the arguments of calls along its chain
    elided (`images.sub_(...).div_`)."""
    if isinstance(node, cst.Attribute):
        return f"{_callee_spelled(node.value)}.{node.attr.value}"
    if isinstance(node, cst.Call):
        return f"{_callee_spelled(node.func)}({'...' if node.args else ''})"
    if isinstance(node, cst.Subscript):
        whole = _spelled(node)  # (a slice written over lines, or long, is elided: a message is one line)
        return whole if "\n" not in cst.Module(body=[]).code_for_node(node) and len(whole) <= 40 \
            else f"{_callee_spelled(node.value)}[...]"
    return _spelled(node)


def _spelled(node: cst.CSTNode) -> str:
    """The node's code on one line (code written over several lines joined with single spaces)."""
    text = cst.Module(body=[]).code_for_node(node).strip()
    return " ".join(text.split()) if "\n" in text else text


def _getattr_spelled(node: cst.CSTNode) -> str:
    """`getattr(holder, "x", None)` as `holder.x` (the attribute it reads); "" for anything else."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr"
            and len(node.args) >= 2 and isinstance(node.args[1].value, cst.SimpleString)):
        return ""
    name = node.args[1].value.evaluated_value
    return f"{_spelled(node.args[0].value)}.{name}" if isinstance(name, str) and name.isidentifier() else ""


def _walk(node: Optional[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    if node is None:
        return
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _receiver_in(reading: HazardReading) -> str:
    """The item or attribute a method of this function's own side is called on (`self.tensors[name].copy_(buf)`)."""
    for side in (reading.earlier, reading.later):
        node = side.node
        if side.callee is None and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, (cst.Subscript, cst.Attribute)):
            return _spelled(node.func.value)
    return ""


def _site_steps(site: str) -> list[str]:
    """"f#1>C.__init__#3" -> ["f#1", "C.__init__#3"] (a qualified name may hold ">": `<module>`)."""
    steps: list[str] = []
    for piece in site.split(">"):
        if steps and piece.startswith("#"):
            steps[-1] += ">" + piece
        else:
            steps.append(piece)
    return steps


# Where the memory of a hazard was made, and where the function is: the message's words and lines
# (moved from model/readings/hazards.py: they decide no finding).
def allocation_node(model: FileModel, reading: HazardReading) -> Optional[cst.CSTNode]:
    """The call that allocated the memory of a hazard's path, when the path is an allocation."""
    root = reading.later.access.path.root
    if root.kind is not RootKind.FRESH or not root.site:
        return None
    return model.node_of(outer_site(root.site))


def stored_allocation_node(model: FileModel, reading: HazardReading) -> Optional[cst.CSTNode]:
    """The call that allocated what the object keeps at a hazard's `self.<attr>` path: the first
    method of the class (in the solved order) whose `self_stores` leave new memory there."""
    path = reading.later.access.path
    if path.root.kind is not RootKind.SELF or len(path.steps) != 1 or not reading.function.class_name:
        return None
    owner = reading.function.qualname.rsplit(".", 1)[0]
    for (qualname, _), walked in model.solved.walks.items():
        if qualname.rsplit(".", 1)[0] != owner:
            continue
        for attr, value in walked.summary.self_stores:
            made = value.identity.root if attr == path.steps[0] and value.identity is not None else None
            if made is not None and made.kind is RootKind.FRESH and made.site and value.on_device:
                return model.node_of(outer_site(made.site))
    return None


def outer_site(site: str) -> str:
    """The site in the walked function of a site key a call mapped ("f#3>g#1" -> "f#3"); the
    qualified name before "#" may itself hold ">" (`mod.<module>#2`)."""
    qualname, _, rest = site.partition("#")
    return f"{qualname}#{rest.split('>', 1)[0]}" if rest else site


def is_module_level(reading: HazardReading) -> bool:
    return isinstance(reading.function.node, cst.Module)


def made_in_block(words: Words, made) -> tuple[str, Optional[cst.With]]:
    """The name an allocation is bound to, and the one `with` block of its function around it (None: none or
    several)."""
    ancestry = Ancestry(words.analysis.module)
    withs = []
    for around in ancestry.ancestors(made):
        if isinstance(around, cst.FunctionDef):
            break
        if isinstance(around, cst.With):
            withs.append(around)
    statement, child = None, made
    for around in ancestry.ancestors(made):  # (through a method chain only: `x.float().sub_(m)`, not an item)
        if isinstance(around, cst.Assign) or not (
                (isinstance(around, cst.Attribute) and around.value is child)
                or (isinstance(around, cst.Call) and around.func is child)):
            statement = around
            break
        child = around
    target = statement.targets[0].target if isinstance(statement, cst.Assign) and len(statement.targets) == 1 else None
    name = target.value if isinstance(target, cst.Name) else ""
    return name, withs[0] if len(withs) == 1 else None


def allocation_name(words: Words, h, made) -> str:
    """A fresh allocation handed out as an item of what the function returns, named by the name it was bound
    to where it was made (`static_embeddings`, not the dict `embeddings` it was spread into); "" otherwise."""
    if made is None or not isinstance(h.node, cst.Return) or h.later.access.path.root.kind is not RootKind.FRESH:
        return ""
    name, _ = made_in_block(words, made)
    returned = h.node.value
    return name if name and not (isinstance(returned, cst.Name) and returned.value == name) else ""


def wait_scope(reading: HazardReading) -> str:
    """The class of the reporting method (a wait any of its methods makes orders the object's stream for all of
    them), else the function."""
    function = reading.function
    return function.qualname.rsplit(".", 1)[0] if function.class_name else function.qualname


def _any_index(label: str) -> str:
    """`self.streams[rank]` as the object keeps it: one of its items (the index is its maker's name)."""
    return re.sub(r"\[[^\]]*\]", "[...]", label)
