"""PyTorch (API-FACTS.md section 4): every op, copy and allocation uses the current stream of the
tensor's device; pool streams are non-blocking, never ordered by the legacy default stream."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from streamlint.model.api.facts import Arg, Block, Fact, Stream
from streamlint.model.api.op_kinds import OpKind as K

F = "torch"

_SYNC = dict(stream=Stream.DATA, blocking=Block.ALWAYS)  # the host waits when the data is on a device
FUNCTIONS: dict[str, Fact] = {
    "torch.cuda.Stream": Fact(K.STREAM_CREATE, F, result="stream", creates_blocking="no"),
    "torch.Stream": Fact(K.STREAM_CREATE, F, result="stream", creates_blocking="no"),
    # a foreign stream keeps its creation flags, which the code does not show
    # A wrapper of a stream made elsewhere: no stream is made (API-FACTS 4.1: it keeps the foreign flags)
    "torch.cuda.ExternalStream": Fact(None, F, result="wrapped_stream", target=Arg(0, "stream_ptr")),
    "torch.cuda.get_stream_from_external": Fact(None, F, result="wrapped_stream", target=Arg(0, "data_ptr")),
    "torch.cuda.current_stream": Fact(None, F, result="current_stream"),
    "torch.cuda.default_stream": Fact(None, F, result="legacy_stream"),
    "torch.cuda.stream": Fact(None, F, result="context", stream_arg=Arg(0, "stream")),
    "torch.cuda.StreamContext": Fact(None, F, result="context", stream_arg=Arg(0, "stream")),
    "torch.cuda.set_stream": Fact(K.SET_STREAM, F, stream_arg=Arg(0, "stream")),
    **dict.fromkeys(("torch.cuda.Event", "torch.Event"), Fact(K.EVENT_CREATE, F, result="event")),
    "torch.cuda.synchronize": Fact(K.DEVICE_SYNC, F, blocking=Block.ALWAYS),
    # frees the allocator's cached blocks with cudaFree, which waits for the whole device (API facts §6)
    **dict.fromkeys(("torch.cuda.empty_cache", "torch.cuda.memory.empty_cache"),
                    Fact(K.DEVICE_SYNC, F, blocking=Block.ALWAYS)),
    "torch.utils.data.DataLoader": Fact(None, F, result="loader", flag=Arg(kw="pin_memory"), flag_default=False),
    # a sampler of batches: each is a Python list of indices (ints the host holds)
    **dict.fromkeys(("torch.utils.data.BatchSampler", "torch.utils.data.sampler.BatchSampler"),
                    Fact(None, F, result="index_batches")),
    "torch.device": Fact(None, F, result="device"),
    # the memory it is given (host or device, DLPack or NumPy), now a tensor too: no copy
    **dict.fromkeys(("torch.from_numpy", "torch.from_dlpack", "torch.utils.dlpack.from_dlpack"),
                    Fact(None, F, result="like_arg0")),
    # a tensor over a Python object's buffer (bytes, bytearray, memoryview, array.array): pageable host memory
    "torch.frombuffer": Fact(None, F, result="host_view"),
    # a Python bool of CUDA tensors' data (a test's comparison: the host raises): read back, the host waits (4.4)
    **dict.fromkeys(("torch.equal", "torch.allclose", "torch.is_nonzero", "torch.testing.assert_close",
                     "torch.testing.assert_allclose"), Fact(K.IMPLICIT_SYNC, F, **_SYNC)),
    # work under `with torch.cuda.graph(g):` is recorded into the graph on a capture stream
    "torch.cuda.graph": Fact(None, F, result="graph_context"),
    # the analysed program runs where its streams do: on a machine with a GPU
    "torch.cuda.is_available": Fact(None, F, result="true"),
    # A context that does nothing (the other arm of `stream(s) if overlap else nullcontext()`).
    "contextlib.nullcontext": Fact(None, F, result="none"),
}

# Tensors a module keeps as its state (`nn.Parameter(torch.randn(...))`, `nn.Buffer(...)`): they move with the
# module (`model.to("cuda")`), so where the data was made tells nothing of where they are when used.
MODULE_STATE = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
                          "torch.nn.parameter.Buffer"})

# torch.<creator>(..., device=, pin_memory=): device from the keywords, CPU otherwise.
CREATORS = frozenset({
    "rand", "randn", "randint", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "tensor",
    "as_tensor", "empty_strided", "randperm", "normal",
})
# The legacy typed constructors (`torch.LongTensor(n, m)`, `torch.FloatTensor(data)`): a new tensor in the host's
# pageable memory; under `torch.cuda.` (`torch.cuda.FloatTensor(n)`) in CUDA memory, made on the current stream.
LEGACY_TENSOR_TYPES = frozenset({"FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
                                 "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"})
LEGACY_CUDA_NAMESPACE = "torch.cuda."
# Wrappers that hand back the tensor they are given (`Variable(t)` since PyTorch 0.4): that tensor, as it is.
IDENTITY_WRAPPERS: dict[str, Arg] = {
    "torch.autograd.Variable": Arg(0, "data"),
    "torch.autograd.variable.Variable": Arg(0, "data"),
}
LIKE_CREATORS = frozenset({"rand_like", "randn_like", "zeros_like", "ones_like", "empty_like", "full_like", "randint_like"})
ALLOCATING_ONLY = frozenset({"empty", "empty_like", "empty_strided"})
# Functions that make one new tensor from a list of tensors (their first argument), on the
# device of those tensors: each item is read where they live.
ITEM_COMBINERS = frozenset({
    "torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack",
    "torch._utils._flatten_dense_tensors", "torch.nn.utils.parameters_to_vector",
})

STREAM_METHODS: dict[str, Fact] = {
    "synchronize": Fact(K.STREAM_SYNC, F, stream=Stream.SELF, blocking=Block.ALWAYS),
    "wait_stream": Fact(K.WAIT_STREAM, F, stream=Stream.SELF, target=Arg(0, "stream")),
    "wait_event": Fact(K.STREAM_WAIT_EVENT, F, stream=Stream.SELF, target=Arg(0, "event")),
    "record_event": Fact(K.EVENT_RECORD, F, stream=Stream.SELF, result="event", target=Arg(0, "event")),
}

# Methods of streams (tensors have none): called on a value of unknown kind, it is the stream held
# at its path (an event's `synchronize` taken so synchronizes nothing it does not).
STREAM_ONLY_METHODS = frozenset(STREAM_METHODS)

EVENT_METHODS: dict[str, Fact] = {
    "record": Fact(K.EVENT_RECORD, F, stream=Stream.ARG_OR_CURRENT, stream_arg=Arg(0, "stream")),
    "wait": Fact(K.STREAM_WAIT_EVENT, F, stream=Stream.ARG_OR_CURRENT, stream_arg=Arg(0, "stream")),
    "synchronize": Fact(K.EVENT_SYNC, F, blocking=Block.ALWAYS),
    # the time between two events, read by the host: the code measures (a sync beside it is the measurement's)
    "elapsed_time": Fact(K.HOST_TIMER, F),
}

# Copies whose direction depends on source and target.
_NB = dict(blocking=Block.FLAG, flag_default=False, flag_blocks_when=False, stream=Stream.CURRENT)
TENSOR_COPIES: dict[str, Fact] = {
    "to": Fact(K.COPY, F, flag=Arg(kw="non_blocking"), **_NB),
    "cuda": Fact(K.COPY_H2D, F, flag=Arg(1, "non_blocking"), **_NB),
    "cpu": Fact(K.COPY_D2H, F, stream=Stream.CURRENT, blocking=Block.ALWAYS),
    "copy_": Fact(K.COPY, F, flag=Arg(1, "non_blocking"), **_NB),
}


TENSOR_METHODS: dict[str, Fact] = {
    **dict.fromkeys(("item", "tolist", "numpy"), Fact(K.IMPLICIT_SYNC, F, **_SYNC)),
    # the host copies the tensor into new page-locked memory (blocking the calling thread, no GPU sync)
    "pin_memory": Fact(K.PIN, F, result="pinned:torch", blocking=Block.ALWAYS, self_reads=True),
    "record_stream": Fact(K.RECORD_STREAM, F, target=Arg(0, "stream")),
}

# Operations whose result's size depends on the data (API-FACTS 4.4, 8 item 12): on a CUDA tensor the
# host reads the size back first and waits for the stream (`x.nonzero()`, `torch.unique(x)`).
SIZED_BY_DATA = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"})
# Indexing with a boolean mask (`x[mask]`, `x[mask] = v`) selects as many items as the mask holds True: the host reads
# that count back first (API-FACTS 4.4), as `nonzero` does. How the rules name it:
MASK_INDEX = "a boolean-mask index"
MASK_STORE = "a boolean-mask store"
# `cpu_tensor[i] = cuda_tensor`: PyTorch copies the device values into host memory (`copy_`, non_blocking=False): the
# host waits for the stream
HOST_STORE = "a store of GPU data into a host tensor"
# Indexing a CUDA tensor with an index the host holds (a NumPy array, a CPU tensor, a list written out) moves the index
# to the tensor's device first, with a blocking copy (`index.to(self.device())` in ATen's AdvancedIndex): an upload of
# host-built data, and the host waits for the stream to drain. How the rules name it:
HOST_INDEX = "an index on the host"
# Functions and tensor methods (of PyTorch and CuPy alike) whose result holds booleans: a comparison, a
# predicate, a logical operation, `.bool()`. Their result indexes as a mask.
MASK_MAKERS = frozenset({
    "bool", "eq", "ne", "gt", "ge", "lt", "le", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "isin", "isclose", "signbit",
    "logical_and", "logical_or", "logical_not", "logical_xor",
})

# Boolean dtypes: a tensor made or converted with one holds a mask.
BOOL_DTYPES = frozenset({"torch.bool", "cupy.bool_", "numpy.bool_", "numpy.bool"})

# Methods that, on a CPU tensor, return a NumPy array over the same memory: no copy, no read of the data yet (a
# pending device-to-host copy into it is read where the array is used, not here).
HOST_VIEWS = frozenset({"numpy"})
# Device syncs made to hand the allocator's cached blocks back (not to wait for results): the remedy is to free less
# often, not to wait for less.
CACHE_RELEASES = frozenset({"torch.cuda.empty_cache", "torch.cuda.memory.empty_cache"})
# Methods that work on host tensors only (a CUDA tensor's `numpy()` raises), unless the flag named asks for a copy
# (`numpy(force=True)` copies a CUDA tensor to the host): without it, the call shows the tensor is on the host.
HOST_ONLY_METHODS: dict[str, Arg] = {"numpy": Arg(kw="force")}

# Methods of one kind of tensor only (API-FACTS 4.3, 4.5): called on a value of unknown kind, they
# tell its memory; "": a copy, whose result does not depend on what the receiver was; "unknown": a tensor of a
# device not told (`make_viewless(t).detach()`: a view of it, where it is).
RECEIVER_EVIDENCE: dict[str, str] = {"pin_memory": "pageable", "record_stream": "device", "cuda": "", "to": "", "cpu": "",
                                     "detach": "unknown"}

# Tensor methods that return a tensor on the same device (and launch work there, except views).
TENSOR_PRESERVING = frozenset({
    "sum", "mean", "max", "min", "abs", "exp", "log", "float", "double", "half", "bfloat16", "int", "long", "bool",
    "clone", "detach", "contiguous", "view", "reshape", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "t",
    "softmax", "log_softmax", "relu", "sigmoid", "tanh", "argmax", "argmin", "norm", "pow", "sqrt", "add", "sub", "mul",
    "div", "matmul", "mm", "bmm", "std", "var", "prod", "cumsum", "expand", "expand_as", "repeat", "gather", "scatter",
    "index_select", "masked_fill", "clamp", "type_as", "neg", "sign", "round", "floor", "ceil", "eq", "ne", "lt", "le",
    "gt", "ge", "any", "all", "add_", "sub_", "mul_", "div_", "zero_", "fill_", "clamp_", "copy", "narrow", "chunk",
    "split", "topk", "sort", "cat", "square", "amax", "amin", "logsumexp", "sin", "cos", "tan", "erf", "log1p", "log2",
    "log10", "rsqrt", "reciprocal", "where", "nan_to_num", "clamp_min", "clamp_max", "to_dense", "masked_scatter",
    "floor_divide", "remainder", "fmod", "lerp", "addmm", "baddbmm", "einsum", "unfold", "roll", "flip", "tril", "triu",
    "diag", "outer", "dot", "cross", "cumprod", "median", "mode", "sgn",
})
# Tensor methods that return its storage, whose `resize_(0)` hands the memory back to the caching
# allocator at once, whoever still holds the tensor (ZeRO-style offload).
STORAGE_METHODS = frozenset({"untyped_storage", "storage", "_typed_storage"})
STORAGE = "storage"  # the value's target: a storage, not a tensor
STORAGE_RELEASES = frozenset({"resize_"})  # with a size of 0
# Methods of Python's own values: a name of one says nothing about a tensor (`line.split(",")`).
BUILTIN_METHODS = frozenset(name for kind in (str, list, dict, set, tuple, bytes) for name in dir(kind))
# Tensor operations that show a value of unknown kind called under a stream the code chose is a tensor.
TENSOR_OPERATIONS = TENSOR_PRESERVING - BUILTIN_METHODS
# Methods that set a flag of the tensor and return the tensor itself (`x.cuda().requires_grad_(True)`): no kernel.
RETURN_THEMSELVES = frozenset({"requires_grad_", "share_memory_", "detach_"})
# In-place-looking methods (trailing "_") that launch no kernel on the tensor's data.
NON_KERNEL_INPLACE = frozenset({"requires_grad_", "share_memory_", "set_", "resize_", "detach_", "retain_grad_", "record_stream_"})
# Splits hand back views of the tensor's memory (a tuple of them): no kernel, no copy; the pieces are where
# the tensor is, pinned memory included (`torch.split(pinned, sizes)`).
SPLITS = frozenset({"split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit"})
VIEW_METHODS = frozenset({
    "view", "reshape", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "t", "expand", "expand_as", "narrow",
    "detach", "contiguous",
}) | SPLITS
# Of those, the ones that never copy (`reshape`, `flatten`, `contiguous` copy a non-contiguous tensor).
PURE_VIEWS = VIEW_METHODS - {"reshape", "flatten", "contiguous"}
# torch.* functions that do not return a tensor on the device of their inputs.
NON_TENSOR_FUNCTIONS = frozenset({
    "is_tensor", "numel", "is_floating_point", "is_complex", "manual_seed", "save", "load", "no_grad", "enable_grad",
    "inference_mode", "set_grad_enabled", "device", "dtype", "get_default_dtype", "set_default_dtype",
    "is_grad_enabled", "compile", "jit",
})
# Of those, the ones that restore a saved object whose kind the call does not tell (a model, a tensor, a dict of
# them): a value as unknown as an unseen function's, so its uses are the evidence (`torch.load(f).to(device)`).
RESTORERS = frozenset({"torch.load", "torch.jit.load", "torch.hub.load", "torch.export.load"})
# Of those, the ones that answer from a tensor's metadata on the host (a type, a count): a host value, no device work.
HOST_PREDICATES = frozenset({"torch." + name for name in (
    "is_tensor", "numel", "is_floating_point", "is_complex", "is_storage", "is_grad_enabled", "is_inference_mode_enabled",
    "is_autocast_enabled")})
# Namespaces whose (lowercase) functions return a new tensor made where their tensor arguments are
# (`torch.diff`, `F.softmax`): given values of a device not told, a tensor of a device not told.
TENSOR_FUNCTION_NAMESPACES = frozenset({"torch", "torch.linalg", "torch.nn.functional", "torch.fft", "torch.special"})
# Functions of those namespaces that return tensors or tuples of them (`torch.sort(x)`): data, never an
# object with methods of its own; NOT_ONE_TENSOR: all that return no single tensor.
TENSORS_OR_TUPLES = frozenset({
    "split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "meshgrid", "broadcast_tensors", "sort",
    "topk", "kthvalue", "unique", "unique_consecutive", "histogram", "frexp", "aminmax", "max", "min", "median", "mode",
    "nonzero", "where", "std_mean", "var_mean", "cummax", "cummin",
})
NOT_ONE_TENSOR = NON_TENSOR_FUNCTIONS | TENSORS_OR_TUPLES | frozenset({
    "lu", "lu_unpack", "eig", "eigh", "svd", "qr", "slogdet", "lu_factor", "lu_factor_ex", "lstsq", "inv_ex",
    "cholesky_ex", "ldl_factor", "ldl_factor_ex", "solve_ex", "triangular_solve", "geqrf", "svd_lowrank", "pca_lowrank",
    "get_rng_state", "set_rng_state", "seed", "initial_seed", "autocast", "finfo", "iinfo", "broadcast_shapes",
    "result_type", "promote_types", "can_cast", "typename", "is_storage", "set_default_device", "get_default_device",
    "set_default_tensor_type", "set_printoptions", "use_deterministic_algorithms", "set_num_threads", "get_num_threads",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "is_autocast_enabled", "vmap", "cond", "export",
    "set_warn_always", "is_nonzero", "equal", "allclose", "multi_head_attention_forward", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
})


def returns_tensor(name: str) -> bool:
    """`torch.diff`, `torch.nn.functional.relu`: a function that returns one new tensor."""
    namespace, _, short = name.rpartition(".")
    return namespace in TENSOR_FUNCTION_NAMESPACES and short[:1].islower() and short not in NOT_ONE_TENSOR


_TENSOR_ATTRIBUTES = Path(__file__).resolve().parent / "data" / "torch_tensor_attributes.txt"


@lru_cache(maxsize=1)
def tensor_attributes() -> frozenset[str]:
    """Every method and attribute a `torch.Tensor` has (torch's own docs and stubs, data/torch_tensor_attributes.txt):
    a method none of them names tells that its receiver is no tensor (a module moved with `.to(device)`)."""
    lines = _TENSOR_ATTRIBUTES.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


# Tensor methods that return no tensor (metadata, host values, hooks; and dicts', lists' and sets'): no device work.
NON_TENSOR_METHODS = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "storage_offset",
    "is_contiguous", "is_pinned", "is_floating_point", "is_complex", "get_device", "untyped_storage", "storage", "type",
    "register_hook", "requires_grad_", "retain_grad", "__len__", "__repr__", "__str__", "__format__", "__hash__",
    "dim_order", "is_set_to", "nbytes", "is_shared", "share_memory_", "backward", "new_empty", "new_zeros", "new_ones",
    "new_full", "new_tensor", "keys", "items", "values", "get", "pop", "popitem", "remove", "clear", "update",
    "discard", "count",
})
# Metadata methods that, given an argument, convert instead: `t.type()` is a string, `t.type(torch.float16)` a tensor
# on the tensor's device (as `t.half()`).
CONVERTING_WITH_ARGUMENT = frozenset({"type"})
# Tensor methods that answer from the tensor's metadata, on the host: numbers, or (True) a tuple of numbers when called
# without an argument (`t.size()` is a `torch.Size`, `t.size(0)` an int). No device memory is read.
SHAPE_METHODS: dict[str, bool] = {"size": True, "stride": True, "dim": False, "ndimension": False, "numel": False,
                                  "nelement": False, "element_size": False, "storage_offset": False}
# Types every tensor is an instance of (`isinstance(t, torch.Tensor)` of a tensor is true).
TENSOR_TYPES: frozenset[str] = frozenset({"torch.Tensor"})
# Predicates that hold of a tensor only (`torch.is_tensor(x)`): where they hold, `x` is a tensor (its device not told).
TENSOR_TESTS = frozenset({"torch.is_tensor"})
# Tests of where a tensor lives, by the device type they tell: its flags (`x.is_cuda`) and its `x.device.type`.
DEVICE_FLAGS = {"is_cuda": "cuda", "is_cpu": "cpu"}
CUDA_TYPE, CPU_TYPE = "cuda", "cpu"
# A tensor's device (`x.device`): where it lives, as a device value.
DEVICE_ATTRIBUTES = frozenset({"device"})
# Creators that build their tensor from the data they are given (Python values: on the host first).
FROM_DATA = frozenset({"tensor", "as_tensor"})
# Attributes of a CUDA tensor that are CUDA tensors (views or named-tuple fields).
TENSOR_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "mH", "real", "imag", "values", "indices"})
# Attributes of a tensor that are host values (its metadata and autograd flags): never GPU data.
TENSOR_HOST_ATTRIBUTES = frozenset({
    "dtype", "layout", "is_cuda", "is_cpu", "is_mps", "is_xpu", "is_meta", "is_sparse", "is_sparse_csr",
    "is_quantized", "is_nested", "is_mkldnn", "is_leaf", "requires_grad", "retains_grad", "grad_fn", "output_nr",
    "names", "itemsize", "nbytes", "ndim", "shape",
})
# A tensor's attribute a framework consumer reads later: a parameter's gradient (`p.grad = t`), read
# by the optimizer's step at a time the storing code does not order.
CONSUMED_ATTRIBUTES = frozenset({"grad"})
# Attributes of a tensor that are its own memory, whole (`p.data`): a message names the tensor.
SAME_MEMORY_ATTRIBUTES = frozenset({"data"})

# torch.distributed collectives: the positional arguments each one writes (the rest it reads).
_D = "torch.distributed."
COLLECTIVES: dict[str, tuple[int, ...]] = {
    _D + "all_reduce": (0,), _D + "broadcast": (0,), _D + "reduce": (0,),
    _D + "all_gather": (0,), _D + "all_gather_into_tensor": (0,), _D + "_all_gather_base": (0,),
    _D + "reduce_scatter": (0,), _D + "reduce_scatter_tensor": (0,), _D + "_reduce_scatter_base": (0,),
    _D + "all_to_all": (0,), _D + "all_to_all_single": (0,), _D + "gather": (1,), _D + "scatter": (0,),
    _D + "recv": (0,), _D + "irecv": (0,), _D + "send": (), _D + "isend": (),
}
# torch.distributed calls given tensors that queue no operation on the current stream and return no tensor: a
# point-to-point descriptor (it only holds its tensor) and the batch that starts such ops on the process group's own
# stream, returning its `Work` handles (`w.wait()` orders the current stream after them).
HANDLES, DESCRIPTOR = "handles", "descriptor"  # what each returns: a list of `Work` handles, one descriptor
DISTRIBUTED_HANDLES: dict[str, str] = {_D + "P2POp": DESCRIPTOR, _D + "batch_isend_irecv": HANDLES}
# Functional collectives (`torch.distributed._functional_collectives`): they read their first argument, a CUDA
# tensor, on the current stream and return a new CUDA tensor made there (waited for by `wait_tensor` or its first use).
FUNCTIONAL_COLLECTIVES = frozenset(_D + "_functional_collectives." + name for name in (
    "all_reduce", "all_gather_tensor", "reduce_scatter_tensor", "all_to_all_single", "broadcast", "permute_tensor",
    "all_reduce_autograd", "all_gather_tensor_autograd", "reduce_scatter_tensor_autograd",
    "all_to_all_single_autograd"))
# The same collectives' tensor parameters by name, in their positions (`all_to_all_single(output=out)`).
COLLECTIVE_TENSOR_PARAMS: dict[str, tuple[str, ...]] = {
    **{_D + name: ("tensor",) for name in ("all_reduce", "broadcast", "reduce", "recv", "irecv", "send", "isend")},
    **{_D + name: ("output_tensor", "input_tensor") for name in ("all_gather_into_tensor", "_all_gather_base")},
    **{_D + name: ("output", "input") for name in ("reduce_scatter_tensor", "_reduce_scatter_base", "all_to_all_single")},
}

# Functions over lists of tensors (`torch._foreach_mul_(params, decay)`), their first argument a list.
TENSOR_LIST_FUNCTIONS = "torch._foreach_"

# The per-accelerator modules of one API (`torch.cuda.synchronize`, `torch.npu.synchronize`, ...). A value that is one
# of them by the path taken (`get_device_module()` returning `torch.cuda` or `torch.npu`) is the CUDA one where the
# analysed program runs (D-2: the code's GPU path).
CUDA_MODULE = "torch.cuda"
ACCELERATOR_MODULES = frozenset({CUDA_MODULE, "torch.npu", "torch.mlu", "torch.xpu", "torch.mps", "torch.cpu",
                                 "torch.hpu", "torch.musa", "torch.mtia"})

# Parameters the host must read as a Python integer (PyTorch calls `__index__` on a tensor given there, a copy to the
# host that waits for the stream): by function (`torch.topk(x, k)`) and by tensor method (`x.topk(k)`).
INT_PARAMETERS: dict[str, tuple[Arg, ...]] = {
    "topk": (Arg(1, "k"),), "kthvalue": (Arg(1, "k"),), "narrow": (Arg(2, "start"), Arg(3, "length")),
}
INT_METHOD_PARAMETERS: dict[str, tuple[Arg, ...]] = {
    "topk": (Arg(0, "k"),), "kthvalue": (Arg(0, "k"),), "narrow": (Arg(1, "start"), Arg(2, "length")),
}
# How an operation the host reads as an integer is named (the rules' words for it).
SLICE_BOUND = "a slice bound"
INTEGER_ARGUMENT = "an integer argument"

# Methods of an autograd function's `ctx` (only it has them): they keep references to the tensors they are given for
# the backward pass, and read no data.
AUTOGRAD_CONTEXT_METHODS = frozenset({
    "save_for_backward", "save_for_forward", "mark_dirty", "mark_non_differentiable",
})
