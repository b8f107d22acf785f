"""The functions the solver can see: the checked module's and those of the project modules
it imports, by qualified name ("pkg.mod.f", "pkg.mod.C.m")."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable, Optional

import libcst as cst

from streamlint.model.interproc.modules import Source
from streamlint.model.syntax.counters import ring_counters
from streamlint.model.syntax.constructions import Construction, constructions
from streamlint.model.syntax.in_place import written_in_place
from streamlint.model.syntax.latches import latches
from streamlint.model.syntax.tests import none_tested_names
from streamlint.model.syntax.hooks import registered_hooks, stored_attributes
from streamlint.model.syntax.gpu_words import module_vocabulary, spells
from streamlint.model.syntax.prefilter import may_call, may_register
from streamlint.model.syntax.arity import accepts
from streamlint.model.syntax.every_call import every_call
from streamlint.model.syntax.names import kept_under, names_only_called
from streamlint.model.interproc.training_steps import runs_backward_every_call
from streamlint.model.interproc.gpu_vocabulary import GPU_METHODS, GPU_WORDS
from streamlint.model.api import python_std, step_entries, torch_modules
from streamlint.model.transfer.names import star_imports_of, imports_of
from streamlint.model.transfer.nodes import own_nodes


# The qualified name of a module's top level, as a function of no parameters.
TOP_LEVEL = "<module>"


@dataclass(frozen=True)
class FunctionRef:
    qualname: str
    module: str
    class_name: str
    node: "cst.FunctionDef | cst.Module"
    # a function defined inside a method (a hook, a callback): the enclosing method's receiver
    # is a free name of its body (`self`), not its first parameter
    free_receiver: str = ""

    @cached_property
    def own_nodes(self) -> list[cst.CSTNode]:
        """Its nodes, not inside the functions, classes and lambdas it defines (read once)."""
        return own_nodes(self.node)

    @cached_property
    def stores(self) -> tuple[frozenset[str], frozenset[str]]:
        """The attributes it stores on its receiver (items kept by a keeping method included) and on
        objects its other parameters reach (syntax/hooks.stored_attributes), read once."""
        return stored_attributes(self.node, _receiver_of(self), python_std.KEEPING_METHODS)

    @cached_property
    def none_tested(self) -> frozenset[str]:
        """The names its body compares with None (a parameter whose None default a call decides), read once."""
        return none_tested_names(self.node)

    @cached_property
    def text_facts(self) -> dict:
        """What its text alone tells (Numbering.text_facts): kept with the function, for every
        walk of it in any solver of the process."""
        return {}


@dataclass
class ModuleUnit:
    name: str
    tree: cst.Module
    imports: dict[str, str]
    top_names: frozenset[str]  # module-level functions and classes
    classes: frozenset[str] = frozenset()  # module-level classes
    bases: dict[str, tuple[str, ...]] = field(default_factory=dict)  # class -> its bases, qualified
    functions: dict[str, FunctionRef] = field(default_factory=dict)
    path: str = ""  # the file it was read from (another module of the project)
    text: bytes = b""  # its bytes, read from a file or checked (b"": not known; the prefilters then say yes)
    hooks: Optional[frozenset] = None  # the functions it registers as PyTorch hooks ("f", "C.m", "C.m.hook"), once asked
    threads: Optional[frozenset] = None  # the functions it starts on threads of their own, named alike, once asked
    _calls: Optional[dict[str, frozenset[str]]] = None  # (called_names)
    _composing: Optional[dict[str, bool]] = None  # (composes_state)
    _holders: Optional[dict[str, frozenset[str]]] = None  # (holder_stores)
    _counters: Optional[dict[str, int]] = None  # (ring_counters)
    _latches: Optional[dict[str, frozenset[str]]] = None  # (latches)
    _kept: dict[str, frozenset[str]] = field(default_factory=dict)  # (kept_under, per class name)
    _constructions: dict[str, tuple] = field(default_factory=dict)  # (constructions, per class name)
    _in_place: dict[str, frozenset[str]] = field(default_factory=dict)  # (written_in_place, per class name)
    top_names_held: Optional[dict] = None  # what its names hold after its top level ran (Solver._module_names)
    stars: tuple[str, ...] = ()  # the modules it imports `*` from, named from the top of the package
    aliases: dict[str, str] = field(default_factory=dict)  # "C.attr" -> the name a class-body `attr = name` binds

    def lambda_function(self, node: cst.Lambda) -> Optional[str]:
        """The function a module-level `name = lambda ...` defines (`program.lambda_named`), by its lambda."""
        return next((q for q, f in self.functions.items() if isinstance(f.node, cst.FunctionDef)
                     and _returned_body(f.node) is node.body), None)

    def called_names(self) -> dict[str, frozenset[str]]:
        """Each function's calls by the name they call (`f(...)`, `x.m(...)`, `super().m(...)`:
        "f", "m"): the edges by name a caller search starts from (class-hierarchy style: a
        method's name calls every method of that name)."""
        if self._calls is None:
            self._calls = {q: _names_called(f.own_nodes) for q, f in self.functions.items()}
        return self._calls

    def composes_state(self, qualname: str) -> bool:
        """Can the method add to its class's receiver state: does its own text assign an attribute
        of its receiver, or spell the GPU (a use that shows what an attribute is)?"""
        if self._composing is None:
            self._composing = {}
        found = self._composing.get(qualname)
        if found is None:  # (asked of the methods of the classes composed: not of every function)
            f = self.functions[qualname]
            found = self._composing[qualname] = bool(f.stores[0]) or spells(f.node, self._gpu_names, GPU_WORDS)
        return found

    @cached_property
    def _gpu_names(self) -> frozenset[str]:
        """The names that spell the GPU in the module: its words, bound names, stream and event methods."""
        return module_vocabulary(self.tree, GPU_WORDS) | GPU_METHODS

    def holder_stores(self) -> dict[str, frozenset[str]]:
        """Each function's attributes stored on objects its parameters reach (`node.state.x =`)."""
        if self._holders is None:
            self._holders = {q: found for q, f in self.functions.items()
                             if (found := f.stores[1])}
        return self._holders


    def kept_under(self, cls: str) -> frozenset[str]:
        """The attributes and names the module keeps instances of the class named `cls` under (syntax/names), once."""
        found = self._kept.get(cls)
        if found is None:
            found = self._kept[cls] = kept_under(self.tree, cls)
        return found

    def constructions(self, cls: str) -> tuple[Construction, ...]:
        """The module's calls of the class named `cls` (syntax/constructions), with the callee qualified as the module
        binds it, once."""
        found = self._constructions.get(cls)
        if found is None:
            found = self._constructions[cls] = tuple(
                replace(site, called=_qualified(site.called, self)) for site in constructions(self.tree, cls))
        return found

    def written_in_place(self, cls: str) -> frozenset[str]:
        """The attributes the methods of the module-level class `cls` (but its constructor) write into in place
        (syntax/in_place), once."""
        found = self._in_place.get(cls)
        if found is None:
            node = next((s for s in self.tree.body if isinstance(s, cst.ClassDef) and s.name.value == cls), None)
            found = self._in_place[cls] = written_in_place(node) if node is not None else frozenset()
        return found

    def latches(self) -> dict[str, frozenset[str]]:
        """Each class's latches: attributes it starts False and only sets True (syntax/latches)."""
        if self._latches is None:
            self._latches = latches(self.tree)
        return self._latches

    def ring_counters(self) -> dict[str, int]:
        """The attributes the module advances around a ring (`x.i = 1 - x.i`), with its size."""
        if self._counters is None:
            self._counters = ring_counters(self.tree)
        return self._counters


def _receiver_of(function: FunctionRef) -> str:
    """The name `self` has in a method's body (its first parameter); "" elsewhere."""
    node = function.node
    if not function.class_name or function.free_receiver or not isinstance(node, cst.FunctionDef):
        return ""
    params = (*node.params.posonly_params, *node.params.params)
    return params[0].name.value if params else ""


def unit_of(name: str, tree: cst.Module, package: Optional[str] = None, data: bytes = b"") -> ModuleUnit:
    """`package`: where its relative imports start (a package's `__init__`: the package
    itself; by default the module's parent); `data`: its bytes, when known, for the prefilters."""
    classes = frozenset(s.name.value for s in tree.body if isinstance(s, cst.ClassDef))
    base = name.rpartition(".")[0] if package is None else package
    imports = {local: absolute(target, base) for local, target in imports_of(tree).items()}
    unit = ModuleUnit(name, tree, imports, frozenset(_top_names(tree)), classes, text=data)
    unit.stars = tuple(absolute(target, base) for target in star_imports_of(tree))
    unit.bases = {s.name.value: tuple(_qualified(b, unit) for b in _base_names(s))
                  for s in tree.body if isinstance(s, cst.ClassDef)}
    unit.functions[f"{name}.{TOP_LEVEL}"] = FunctionRef(f"{name}.{TOP_LEVEL}", name, "", tree)
    for statement in tree.body:
        if isinstance(statement, cst.FunctionDef):
            unit.functions[f"{name}.{statement.name.value}"] = FunctionRef(f"{name}.{statement.name.value}", name, "", statement)
            _nested(unit, unit.functions[f"{name}.{statement.name.value}"])
        elif isinstance(statement, cst.ClassDef):
            _methods(unit, statement)
        else:
            named = lambda_named(statement)
            if named is not None:  # `to_np = lambda x: x.detach().cpu().numpy()`: a function of the module
                unit.functions[f"{name}.{named.name.value}"] = FunctionRef(f"{name}.{named.name.value}", name, "", named)
    return unit


def _returned_body(function: cst.FunctionDef) -> Optional[cst.CSTNode]:
    """What a one-line function made from a lambda returns (None for any other)."""
    body = function.body
    if isinstance(body, cst.IndentedBlock) and len(body.body) == 1 and isinstance(body.body[0], cst.SimpleStatementLine):
        statement = body.body[0].body[0]
        return statement.value if isinstance(statement, cst.Return) else None
    return None


def lambda_named(statement: cst.CSTNode) -> Optional[cst.FunctionDef]:
    """`name = lambda params: body` at a module's top, as the function it defines (`def name(params): return body`,
    the body the same node); None for any other statement."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
            or not isinstance(assign.value, cst.Lambda):
        return None
    lam = assign.value
    return cst.FunctionDef(name=assign.targets[0].target, params=lam.params,
                           body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(lam.body)])]))


def absolute(target: str, package: str) -> str:
    """A relative import's target named from the top of the package (`..m.f` imported into
    package "a.b" is "a.m.f"); an absolute one as it is."""
    rest = target.lstrip(".")
    level = len(target) - len(rest)
    if not level:
        return target
    parts = package.split(".") if package else []
    base = parts[: max(len(parts) - (level - 1), 0)]
    return ".".join([*base, rest]) if rest else ".".join(base)


def _methods(unit: ModuleUnit, cls: cst.ClassDef) -> None:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for member in body:
        alias = _class_attribute_alias(member)
        if alias is not None:  # `decode = decode_function`: a function bound as a method of the class
            unit.aliases[f"{cls.name.value}.{alias[0]}"] = alias[1]
        if isinstance(member, cst.FunctionDef):
            qualname = f"{unit.name}.{cls.name.value}.{member.name.value}"
            # a static method has no receiver: a function that lives in the class
            owner = "" if _is_static(member) else cls.name.value
            unit.functions[qualname] = FunctionRef(qualname, unit.name, owner, member)
            _nested(unit, unit.functions[qualname])


def _class_attribute_alias(member: cst.CSTNode) -> Optional[tuple[str, str]]:
    """(attribute, dotted name) of a class-body assignment of one name to a name (`transcribe = transcribe_function`,
    `__call__ = forward`); None for anything else."""
    if not isinstance(member, cst.SimpleStatementLine) or len(member.body) != 1:
        return None
    statement = member.body[0]
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0].target, cst.Name):
        return None
    parts, value = [], statement.value
    while isinstance(value, cst.Attribute):
        parts.append(value.attr.value)
        value = value.value
    if not isinstance(value, cst.Name):
        return None
    return statement.targets[0].target.value, ".".join([value.value, *reversed(parts)])


def _nested(unit: ModuleUnit, outer: FunctionRef) -> None:
    """The functions defined in `outer`'s body (closures: hooks, callbacks), each a function of
    its own ("mod.C.m.make_hook.hook"); in a method, the method's receiver is free in them."""
    receiver = outer.free_receiver
    if outer.class_name and not receiver:
        params = (*outer.node.params.posonly_params, *outer.node.params.params)
        receiver = params[0].name.value if params else ""
    for node in _defined_in(outer):
        qualname = f"{outer.qualname}.{node.name.value}"
        if qualname not in unit.functions:
            unit.functions[qualname] = FunctionRef(qualname, unit.name, outer.class_name if receiver else "", node,
                                                   receiver)
            _nested(unit, unit.functions[qualname])


def _defined_in(function: FunctionRef) -> list[cst.FunctionDef]:
    """The `def`s of a function's body, at any depth of its blocks, not inside other functions
    or classes."""
    return [n for n in function.own_nodes if type(n) is cst.FunctionDef and n is not function.node]


def _names_called(nodes: list[cst.CSTNode]) -> frozenset[str]:
    found = set()
    for n in nodes:
        if type(n) is not cst.Call:  # (no subclass: faster than an ABC's isinstance)
            continue
        if isinstance(n.func, cst.Name):
            found.add(n.func.value)
        elif isinstance(n.func, cst.Attribute):
            found.add(n.func.attr.value)
    return frozenset(found)


def _base_names(cls: cst.ClassDef) -> list[str]:
    """The dotted names a class's bases are written as (`base.ReducerBase`, `Base`)."""
    found = []
    for arg in cls.bases:
        parts, node = [], arg.value
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if isinstance(node, cst.Name) and arg.keyword is None:
            found.append(".".join([node.value, *reversed(parts)]))
    return found


def _qualified(dotted: str, unit: ModuleUnit) -> str:
    """A name as the module binds it: an import's target, a class of its own, else as written."""
    head, _, rest = dotted.partition(".")
    if head in unit.imports:
        return f"{unit.imports[head]}.{rest}" if rest else unit.imports[head]
    return f"{unit.name}.{dotted}" if head in unit.classes else dotted


def _is_static(function: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in function.decorators)


def _top_names(tree: cst.Module) -> list[str]:
    named = [lambda_named(s) for s in tree.body]
    return [s.name.value for s in tree.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))] \
        + [n.name.value for n in named if n is not None]


# Reads another module of the project by its dotted name.
ModuleLoader = Callable[[str], Optional[Source]]
# How far a name re-exported by a package's `__init__` (or any module) is followed.
_MAX_REEXPORTS = 4


class Program:
    def __init__(self, main: ModuleUnit, loader: Optional[ModuleLoader] = None) -> None:
        self.main = main
        self._units: dict[str, Optional[ModuleUnit]] = {main.name: main}
        self._loader = loader
        self._starred: set[str] = set()  # (units whose star imports are bound)
        self._bind_stars(main)
        self._step_methods: dict[str, bool] = {}
        self._class_entries: dict[str, dict[str, str]] = {}  # (_step_entries, per class)
        # (package_units: the modules that spell a checked module's name, with their name runs or bytes)
        self._package_read: list[tuple[str, bytes]] = []
        self._only_called: dict[str, frozenset[str]] = {}  # (private_callers, per module)
        self._cuda_default: Optional[bool] = None  # (makes_cuda_default, once)

    def function(self, qualname: str) -> Optional[FunctionRef]:
        found = self._defined(qualname)
        return found if isinstance(found, FunctionRef) else None

    def is_class(self, qualname: str) -> bool:
        return self._defined(qualname) == "class"

    def is_enumeration(self, qualname: str) -> bool:
        """A project class deriving from an enumeration base (`class Clipping(Enum)`), also through project bases."""
        owner = self._unit_of_class(qualname)
        return owner is not None and bool(set(self._bases_of(*owner)) & python_std.ENUMERATION_BASES)

    def _defined(self, qualname: str, hops: int = 0) -> "FunctionRef | str | None":
        """The function (or "class") a qualified name denotes: in the longest module prefix
        that is a module of the project, following names that module imports from another."""
        module = qualname
        while "." in module:
            module = module.rsplit(".", 1)[0]
            unit = self.unit(module)
            if unit is None:
                continue
            if qualname in unit.functions:
                return unit.functions[qualname]
            head, _, rest = qualname[len(module) + 1:].partition(".")
            if not rest and head in unit.classes:
                return "class"
            if head in unit.classes and "." not in rest:
                return self._inherited(unit, head, rest, hops)
            target = unit.imports.get(head)
            if target is None or hops >= _MAX_REEXPORTS:
                return None
            return self._defined(f"{target}.{rest}" if rest else target, hops + 1)
        return None

    def hot_entry(self, function: FunctionRef) -> str:
        """`C.forward` when the function is a method a framework runs on every step (an `nn.Module`'s `forward`, an
        optimizer's `step`, an environment's `step`: `api/step_entries`), one such a method calls on its receiver on
        every call, a hook its module registers, or a method that runs backward on every call; else ""."""
        unit = self.unit(function.module)
        name = getattr(function.node, "name", None)
        if unit is None or name is None:
            return ""
        if unit.hooks is None:  # (a module that spells no registration registers no hook: not walked)
            registers = not unit.text or may_register(unit.text, torch_modules.HOOK_REGISTRATIONS,
                                                      torch_modules.MODULE_HOT_METHODS)
            unit.hooks = registered_hooks(unit.tree, torch_modules.HOOK_REGISTRATIONS, torch_modules.MODULE_HOT_METHODS) \
                if registers else frozenset()
        within = function.qualname[len(function.module) + 1:]
        nested = within.count(".") > (1 if within.partition(".")[0] in unit.classes else 0)
        if within in unit.hooks:  # (a closure is named by its own name, a method as `C.m`)
            return name.value if nested else within
        head, _, rest = within.partition(".")
        cls = function.class_name or (head if head in unit.classes and rest else "")  # (a static method's class too)
        if not cls or nested:
            return ""
        entry = self._step_entries(unit, cls).get(name.value)
        return entry or (f"{cls}.{name.value}" if function.class_name and self._steps(function, unit) else "")

    def _step_entries(self, unit: ModuleUnit, cls: str) -> dict[str, str]:
        """A class's methods that run once per pass of a framework's loop (`api/step_entries`: its own or inherited
        `forward`, `step`, `training_step`, ...) and the methods those call on the receiver on every call (a template
        method's steps, which subclasses define), each by the entry that runs it ("C.step"). Read once per class."""
        key = f"{unit.name}.{cls}"
        found = self._class_entries.get(key)
        if found is not None:
            return found
        found = self._class_entries[key] = {}
        own = {q.rpartition(".")[2] for q in unit.functions if q.startswith(f"{key}.") and q.count(".") == key.count(".") + 1}
        if not own & step_entries.STEP_METHODS and not unit.bases.get(cls):
            return found  # (no entry of its own and no base to inherit one from: the bases are not read)
        bases = self._bases_of(unit, cls)
        for row in step_entries.STEP_ENTRIES:
            if any(map(row.derives, bases)) or (row.protocol and self._implements(key, row.protocol)):
                for method in sorted(row.methods):
                    self._add_entry(found, key, method, f"{cls}.{method}", row.handed)
        return found

    def _implements(self, cls: str, protocol: frozenset[str]) -> bool:
        """Does the class define every method of the protocol, its own or inherited?"""
        for method in protocol:
            defined = self._defined(f"{cls}.{method}")
            if not isinstance(defined, FunctionRef) or not isinstance(defined.node, cst.FunctionDef):
                return False
        return True

    def _add_entry(self, found: dict[str, str], cls: str, method: str, label: str, handed: bool,
                   hops: int = 0) -> None:
        defined = self._defined(f"{cls}.{method}")
        if not isinstance(defined, FunctionRef) or not isinstance(defined.node, cst.FunctionDef) or hops > _MAX_REEXPORTS:
            return
        if handed and hops == 0 and not _takes_an_argument(defined.node):
            return  # (an environment's step is handed the action)
        found.setdefault(method, label)
        calls = every_call(defined.node)
        for called in sorted(calls.receiver_calls):
            found.setdefault(called, label)
        if method in calls.super_calls and defined.class_name:  # (the base's step runs too: its template's steps)
            owner = f"{defined.module}.{defined.class_name}"
            for base in self._unit_bases(owner):
                before = dict(found)
                self._add_entry(found, base, method, label, handed, hops + 1)
                if found != before:
                    break

    def _unit_bases(self, cls: str) -> tuple[str, ...]:
        module, _, name = cls.rpartition(".")
        unit = self.unit(module)
        return unit.bases.get(name, ()) if unit is not None else ()

    def cold_entry(self, function: FunctionRef) -> str:
        """`C.state_dict` when the function is a method of a module or an optimizer that runs at checkpoint,
        restore or print time (`torch_modules.COLD_METHODS`), a module-level test function (`test_*`) or
        checkpoint-state function (`load_optimizer_state_dict`: `torch_modules.COLD_FUNCTION_WORDS`), a warm-up function
        or method (`warmup`: `torch_modules.WARM_UP_WORDS`), a teardown method of any class (`terminate`, `close`:
        `torch_modules.TEARDOWN_METHODS`), else ""."""
        name = getattr(function.node, "name", None)
        unit = self.unit(function.module)
        if name is not None and not function.class_name and _is_test_name(name.value) \
                and not self._called_in_its_module(function, name.value, unit):
            return name.value  # a test function (pytest's `test_*`, a `_test_*` helper): once per test session
        if name is not None and not function.class_name and any(w in name.value for w in torch_modules.COLD_FUNCTION_WORDS):
            return name.value  # a checkpoint's state built or loaded (`load_optimizer_state_dict`): once per checkpoint
        if name is not None and any(w in name.value.lower() for w in torch_modules.WARM_UP_WORDS):
            return name.value  # a warm-up (`def warmup(self, n=3)`): once, before the steady state
        if name is not None and function.class_name and name.value in torch_modules.TEARDOWN_METHODS:
            return f"{function.class_name}.{name.value}"  # a teardown (`def terminate(self)`): once, at the end
        if unit is None or name is None or not function.class_name or name.value not in torch_modules.COLD_METHODS:
            return ""
        bases = self._bases_of(unit, function.class_name)
        framework = torch_modules.optimizer_base(bases) or any(b.startswith(torch_modules.MODULE_NAMESPACE) for b in bases)
        return f"{function.class_name}.{name.value}" if framework else ""

    @staticmethod
    def _called_in_its_module(function: FunctionRef, name: str, unit: "ModuleUnit | None") -> bool:
        """Does its own module's code call it by name (a script's `for epoch in ...: train(epoch); test(epoch)`)? A
        test runner calls a test; a function the project calls is the project's own step, named `test` or not."""
        return unit is not None and any(name in names for q, names in unit.called_names().items()
                                        if q != function.qualname)

    def _steps(self, function: FunctionRef, unit: ModuleUnit) -> bool:
        """A method that runs the backward pass on a loss it is handed, on every call (a training
        engine's `backward(loss)`): once per micro-step (a syntax query, read once per method)."""
        found = self._step_methods.get(function.qualname)
        if found is None:
            params = [p.name.value for p in (*function.node.params.posonly_params, *function.node.params.params)]
            found = self._step_methods[function.qualname] = runs_backward_every_call(
                function.node, params, lambda n: n in unit.imports and n not in unit.top_names,
                lambda expr: qualified(expr, unit.imports) or "")
        return found

    def _bases_of(self, unit: ModuleUnit, cls_name: str, hops: int = 0) -> list[str]:
        """A class's bases, qualified, and those of its project bases in turn (a subclass of a
        project class that is an `nn.Module` is one too), within the hops of re-exports."""
        bases = list(unit.bases.get(cls_name, ()))  # (a base of the same module named by its module too)
        found = list(bases)
        for base in bases if hops < _MAX_REEXPORTS else ():
            owner = self._unit_of_class(base)
            if owner is not None:
                found += self._bases_of(owner[0], owner[1], hops + 1)
        return found

    def _unit_of_class(self, qualname: str) -> Optional[tuple[ModuleUnit, str]]:
        """The module that defines the project class `qualname` names, and its name there."""
        where = self.class_defined_at(qualname)
        if where is None:
            return None
        module, _, name = where.rpartition(".")
        unit = self.unit(module)
        return (unit, name) if unit is not None else None

    def class_defined_at(self, qualname: str, hops: int = 0) -> Optional[str]:
        """Where the project class a qualified name denotes is defined ("pkg.mod.C"), following
        the names modules import from others (a package's re-export); None when it is no class."""
        module = qualname
        while "." in module:
            module = module.rsplit(".", 1)[0]
            unit = self.unit(module)
            if unit is None:
                continue
            head, _, rest = qualname[len(module) + 1:].partition(".")
            if not rest and head in unit.classes:
                return qualname
            target = unit.imports.get(head)
            if target is None or hops >= _MAX_REEXPORTS:
                return None
            return self.class_defined_at(f"{target}.{rest}" if rest else target, hops + 1)
        return None

    def thread_entry(self, function: FunctionRef) -> bool:
        """Is the function started on a thread of its own (`threading.Thread(target=self._worker)`, an executor's
        `submit`) by its module? It then begins on its frameworks' default streams."""
        unit = self.unit(function.module)
        if unit is None or getattr(function.node, "name", None) is None:
            return False
        if unit.threads is None:  # (a module that spells no thread start starts none: not walked)
            starts = not unit.text or may_call(unit.text, frozenset(python_std.THREAD_STARTS))
            unit.threads = registered_hooks(unit.tree, python_std.THREAD_STARTS) if starts else frozenset()
        return function.qualname[len(function.module) + 1:] in unit.threads

    def method_alias(self, qualname: str) -> Optional[FunctionRef]:
        """The function a class attribute names (`class Whisper: decode = decode_function`, `__call__ = forward`): called
        through an instance, it is that function with the instance as its first argument (a method's: its receiver)."""
        cls, _, name = qualname.rpartition(".")
        where = self.class_defined_at(cls)
        owner = self._unit_of_class(cls) if where is not None else None
        if owner is None:
            return None
        unit, cls_name = owner
        dotted = unit.aliases.get(f"{cls_name}.{name}")
        if dotted is None:
            return None
        own = f"{unit.name}.{cls_name}.{dotted}"  # (a method of the class body, bound above the alias)
        if own in unit.functions:
            return unit.functions[own]
        head = dotted.partition(".")[0]
        target = _qualified(dotted, unit) if head in unit.imports else f"{unit.name}.{dotted}"
        return self.function(target)

    def is_module(self, cls: str) -> bool:
        """A project class deriving from `torch.nn.Module` (or a library's module class), through its project bases."""
        owner = self._unit_of_class(cls)
        return owner is not None and any(map(torch_modules.is_module_class, self._bases_of(*owner)))

    def is_property(self, function: FunctionRef) -> bool:
        """Decorated as a property (`@property`, `@functools.cached_property`): reading the attribute runs it."""
        unit = self.unit(function.module)
        for decorator in getattr(function.node, "decorators", ()):
            expr = decorator.decorator
            if unit is not None and (qualified(expr, unit.imports) or getattr(expr, "value", "")) \
                    in python_std.PROPERTY_DECORATORS:
                return True
        return False

    def private_callers(self, function: FunctionRef) -> tuple[str, ...]:
        """The functions that call a private one (`_sync_params`, `_helper`: named for its module's own use, so its
        callers are there), found by the name they call; none when it is public, a dunder, called by no one, or
        handed on as a value somewhere in its module (`register_hook(self._on_grad)`: called from out of sight)."""
        name = function.node.name.value if isinstance(function.node, cst.FunctionDef) else ""
        unit = self.unit(function.module)
        if unit is None or not name.startswith("_") or name.startswith("__"):
            return ()
        if function.module not in self._only_called:
            self._only_called[function.module] = names_only_called(unit.tree)
        if name not in self._only_called[function.module]:
            return ()
        return tuple(q for q, names in sorted(unit.called_names().items()) if name in names and q != function.qualname)

    def is_context_manager(self, function: FunctionRef) -> bool:
        """Decorated to be entered by `with` (`contextlib.contextmanager`): its `yield` runs the `with` body."""
        unit = self.unit(function.module)
        for decorator in getattr(function.node, "decorators", ()):
            expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            if unit is not None and qualified(expr, unit.imports) in python_std.CONTEXT_MANAGER_DECORATORS:
                return True
        return False

    def memoized(self, function: FunctionRef) -> bool:
        """Decorated to run once per distinct argument tuple (`functools.lru_cache`)."""
        unit = self.unit(function.module)
        decorators = getattr(function.node, "decorators", ())
        for decorator in decorators:
            expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            if unit is not None and qualified(expr, unit.imports) in python_std.MEMOIZING_DECORATORS:
                return True
        return False

    def _inherited(self, unit: ModuleUnit, cls: str, name: str, hops: int) -> "FunctionRef | str | None":
        """A method the class does not define: its project bases' (method resolution in the
        order the bases are written, depth first)."""
        if hops >= _MAX_REEXPORTS:
            return None
        for base in unit.bases.get(cls, ()):
            found = self._defined(f"{base}.{name}", hops + 1)
            if found is not None:
                return found
        return None

    def classes_with_method(self, module: str, name: str, most: int, within: str = "",
                            call: Optional[cst.Call] = None) -> tuple[str, ...]:
        """The project classes that define a method `name` of their own, among those of `module`,
        of the modules it imports, and of its package's `__init__` and the modules that imports
        (what the package exports), when there are at most `most` and they are of one hierarchy
        (one class, or classes with a common project base); () otherwise. `within`: the
        subclasses of that class, when it has no method `name` itself. `call`: only the classes
        whose method can take the call's arguments (its arity) are candidates."""
        if within and self.function(f"{within}.{name}") is not None:
            return ()
        classes = [c for c in self._defining(module, name) if (not within or within in self._ancestors(c))
                   and (call is None or self._accepts(f"{c}.{name}", call))]
        if not classes or len(classes) > most:
            return ()
        return tuple(classes) if within or len(classes) == 1 or self.common_base(classes) else ()

    def _accepts(self, qualname: str, call: cst.Call) -> bool:
        """Whether the method `qualname`, called through an instance, can take the call's
        arguments (syntax/arity.accepts); a name not seen as a def may."""
        function = self.function(qualname)
        if function is None or not isinstance(function.node, cst.FunctionDef):
            return True
        static = any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
                     for d in function.node.decorators)
        return accepts(function.node.params, call, bound=not static)

    def common_base(self, classes: list[str]) -> Optional[str]:
        """The most derived project class every one of `classes` derives from; None when none."""
        common = set.intersection(*(self._ancestors(c) for c in classes)) if classes else set()
        return max(sorted(common), key=lambda c: len(self._ancestors(c)), default=None)

    def _defining(self, module: str, name: str) -> list[str]:
        unit = self.unit(module)
        package = self.unit(module.rpartition(".")[0]) if unit is not None and "." in module else None
        seen: dict[str, ModuleUnit] = {}
        for holder in (u for u in (unit, package) if u is not None):
            seen[holder.name] = holder
            for target in sorted(set(holder.imports.values())):
                for name_ in (target, target.rpartition(".")[0]):
                    found = self.unit(name_) if name_ and name_ not in seen and self._may_define(name_, name) else None
                    if found is not None:
                        seen[name_] = found
        if module != self.main.name:
            # a caller in another module may call, through any receiver, a method of the checked
            # module's classes or of the package modules read for its callers (Solver._callers_in)
            spelling = (self.unit(m) for m, text in self._package_read
                        if m not in seen and (not name.isascii() or may_call(text, frozenset({name}))))
            seen.update((u.name, u) for u in (self.main, *spelling) if u is not None)
        return sorted(f"{u.name}.{c}" for u in seen.values() for c in u.classes if f"{u.name}.{c}.{name}" in u.functions)

    def holder_producers(self, module: str, attr: str) -> tuple[str, ...]:
        """The functions of `module` and of the project modules it imports (those that spell
        `attr`) that store `.<attr>` on an object their parameters reach (D-16's field producers)."""
        unit = self.unit(module)
        if unit is None:
            return ()
        units = [unit] + [u for u in (self.unit(t) for t in sorted(set(unit.imports.values()))
                                      if t != module and self._may_define(t, attr)) if u is not None]
        return tuple(sorted({q for u in units for q, attrs in u.holder_stores().items() if attr in attrs}))

    def _may_define(self, module: str, name: str) -> bool:
        """Whether `module` may define something named `name`: read already, or its text spells
        the name (the syntax layer's prefilter; a module not read is not parsed for it)."""
        spells = getattr(self._loader, "spells", None)
        return module in self._units or spells is None or spells(module, frozenset({name}))

    def _ancestors(self, cls: str, hops: int = 0) -> set[str]:
        """The project classes `cls` derives from (where each is defined), within the hops."""
        module, _, name = cls.rpartition(".")
        unit = self.unit(module)
        found: set[str] = set()
        for base in (unit.bases.get(name, ()) if unit is not None and hops < _MAX_REEXPORTS else ()):
            where = self.class_defined_at(base)
            if where is not None:
                found |= {where} | self._ancestors(where, hops + 1)
        return found

    def class_defining(self, module: str, methods: frozenset[str]) -> Optional[str]:
        """The one class among `module`'s and the project modules it imports (`from . import m`,
        `import pkg.m`) that defines all of `methods` (its own or inherited); None otherwise."""
        unit = self.unit(module)
        if unit is None:
            return None
        units = [unit] + [u for u in (self.unit(t) for t in sorted(set(unit.imports.values()))) if u is not None]
        found = {f"{u.name}.{cls}" for u in units for cls in u.classes
                 if all(self.function(f"{u.name}.{cls}.{m}") is not None for m in methods)}
        return found.pop() if len(found) == 1 else None

    def methods_named(self, cls: str, prefix: str) -> tuple[str, ...]:
        """The methods the project class `cls` defines itself whose names start with `prefix`."""
        module, _, name = cls.rpartition(".")
        unit = self.unit(module)
        if unit is None or name not in unit.classes:
            return ()
        own = f"{cls}."
        return tuple(sorted(q for q in unit.functions
                            if q.startswith(own) and "." not in q[len(own):] and q[len(own):].startswith(prefix)))

    def makes_cuda_default(self, most: int, most_in_root: int) -> bool:
        """Does a module of the program make CUDA PyTorch's default device (ProjectModules.makes_cuda_default)?"""
        if self._cuda_default is None:
            asked = getattr(self._loader, "makes_cuda_default", None)
            self._cuda_default = bool(asked(most, most_in_root)) if asked is not None else False
        return self._cuda_default

    def package_units(self, most: int, most_in_root: int, called: frozenset[str],
                      named: frozenset[str] = frozenset(), remember: bool = True) -> list[ModuleUnit]:
        """The other modules of the checked module's package and the project's root scripts that may
        call one of `called` by name or spell one of `named`, read through the loader (so the cache
        notes each). Those that spell one of them are remembered for the classes a method call may
        reach (`_defining`), read only when they spell the method's name; not when `remember` is False
        (a question about the package that leaves the call resolution of the walks as it was)."""
        listing = getattr(self._loader, "package", None)
        spelling, calling = listing(most, most_in_root, called, named) if listing is not None else ((), ())
        if remember:
            self._package_read = [(name, text) for name, text in spelling if name != self.main.name]
        units = (self.unit(name) for name in calling if name != self.main.name)
        return [unit for unit in units if unit is not None]

    def unit(self, module: str) -> Optional[ModuleUnit]:
        if module not in self._units:
            source = self._loader(module) if self._loader is not None else None
            self._units[module] = _unit_of_source(module, source) if source is not None else None
            if self._units[module] is not None:
                self._bind_stars(self._units[module])
        return self._units[module]

    def _bind_stars(self, unit: ModuleUnit) -> None:
        """`from m import *` of a project module binds the public names m binds: what it imports and the functions
        and classes it defines (an import of the module's own comes first; a name bound twice keeps the first)."""
        if unit.name in self._starred or not unit.stars:
            return
        self._starred.add(unit.name)
        for module in unit.stars:
            source = self.unit(module)
            if source is None:
                continue
            exported = {**source.imports, **{name: f"{module}.{name}" for name in source.top_names}}
            for name, target in exported.items():
                if not name.startswith("_"):
                    unit.imports.setdefault(name, target)


def _unit_of_source(module: str, source: Source) -> ModuleUnit:
    """The unit of a module read from a file: made once per parsed tree (every checked file of
    the process that reads the module shares it, with what it read off the tree once)."""
    unit = source.derived.get(("unit", module))
    if unit is None:
        unit = source.derived[("unit", module)] = unit_of(module, source.tree, source.package)
        unit.path, unit.text = source.path, source.text
    return unit


def qualified(expr: cst.BaseExpression, imports: dict[str, str]) -> str:
    """`nn.Module` as `torch.nn.Module`: a dotted name with its first name resolved by the imports."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return ""
    parts.append(imports.get(expr.value, expr.value))
    return ".".join(reversed(parts))


def _takes_an_argument(node: cst.FunctionDef) -> bool:
    """A method handed something besides its receiver: a parameter without a default after the first."""
    params = (*node.params.posonly_params, *node.params.params)[1:]
    return any(p.default is None for p in (*params, *node.params.kwonly_params))


def _is_test_name(name: str) -> bool:
    """`test_x`, `test`, `_test_x`: a test function's name, as pytest collects them (and their private helpers)."""
    bare = name.lstrip("_")
    return bare == "test" or bare.startswith("test_")
