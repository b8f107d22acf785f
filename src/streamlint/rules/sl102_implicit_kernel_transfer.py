"""SL102 implicit-kernel-transfer: a host NumPy array passed straight to a Numba kernel launch."""

from __future__ import annotations

import libcst as cst

from streamlint.fixes.edits import FixBuilder, make_fix
from streamlint.fixes.idioms import fresh_name, import_alias
from streamlint.fixes.model import Applicability
from streamlint.model.api.facts import OpKind
from streamlint.model.domain.streams import StreamRefKind
from streamlint.model.readings.hot_paths import own_operations as hot_operations
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.rules import _labels as labels
from streamlint.rules._hot_uploads import copy_cost_at_stake
from streamlint.rules._shared import api_named
from streamlint.rules.base import Finding, Rule


class ImplicitKernelTransfer(Rule):
    """
    ## What it does
    Flags a Numba-CUDA kernel launch (`kernel[grid, block](...)` of a
    `@cuda.jit` function) that receives a host NumPy array directly as an
    argument, where the copies cost something: the launch repeats (in a loop
    that repeats it, on every call of a hot entry, or in a helper a loop in
    sight calls on every pass), another launch is given the same array (it
    goes to the device and back once per launch), or it runs on a stream the
    code chose (the copies then serialize what the stream was meant to overlap).

    ## Why is this bad?
    For every host array argument Numba allocates a device buffer, copies the
    array to the device, launches the kernel, and then copies the buffer back to
    the host (an implicit `cuda.InOut`), on every launch:
    - Launched on stream 0 (no stream given), the copy-back is a synchronous
      `cuMemcpyDtoH` followed by a synchronization of the default stream, so the
      launch blocks the host until the kernel and the copies finish.
    - Launched on a stream, the copy-back is asynchronous: a pageable array
      makes the driver block until the kernel and the copy finish, and a pinned
      array returns at once with host data that stays stale until
      `stream.synchronize()`.

    Measured on an H200 with 16 M floats: 20.8 ms per launch with NumPy
    arguments, 0.089 ms with device arrays. Numba emits a
    `NumbaPerformanceWarning` for this at run time, but warnings are easily
    filtered or missed (and it historically did not fire for `guvectorize`).

    ## Example
    ```python
    import numpy as np
    from numba import cuda


    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]


    x = np.random.rand(n).astype(np.float32)
    y = np.random.rand(n).astype(np.float32)
    out = np.empty_like(x)
    for step in range(steps):
        saxpy[blocks, threads](2.0, x, y, out)  # 3 copies in, 3 copies out, host waits
    ```

    ## Use instead
    Copy the inputs once, keep the data on the device, and copy back once:
    ```python
    import numpy as np
    from numba import cuda


    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]


    x = np.random.rand(n).astype(np.float32)
    y = np.random.rand(n).astype(np.float32)
    d_x = cuda.to_device(x)
    d_y = cuda.to_device(y)
    d_out = cuda.device_array_like(x)
    for step in range(steps):
        saxpy[blocks, threads](2.0, d_x, d_y, d_out)
    out = d_out.copy_to_host()
    ```
    When one launch really needs host data, `cuda.In(x)` / `cuda.Out(out)` state
    the direction and copy only one way; an explicit wrapper is not reported.

    ## Fix safety
    There is a fix for launches on the default stream whose host arrays are passed
    by name: `d_x = cuda.to_device(x)` before the launch, `d_x` in the call, and
    `d_x.copy_to_host(x)` after it, for every array, as Numba does (a kernel can
    write an array through a view the analysis does not follow). The program does
    what it did; the fix is still marked **unsafe** because its point is the next
    step, which is yours: drop the copies back of arrays the kernel only reads,
    and move the copies out of loops where the data does not change. Launches on a stream get no fix (the copies would have to be ordered on it).

    ## Known limits
    - A single launch (a demo's module code, a helper nothing in sight calls
      repeatedly) is not reported: its copies in and out are the ones the host
      needs anyway, but for the copies back of arrays the kernel only reads.
    - Only arguments the analysis knows to be host NumPy arrays are reported
      (arrays made by NumPy in the same function or module, results of
      `copy_to_host()`). Parameters and values from other modules are unknown and
      stay silent.
    - CuPy arrays, PyTorch tensors and Numba device arrays are passed without a
      copy (through `__cuda_array_interface__`) and are never reported.
    - Kernels are recognized by their `@cuda.jit` decoration (or `cuda.jit(f)`) in
      the same module, or in a module of the checked project that an import
      resolves to. A kernel received as a parameter or imported from elsewhere is
      unknown and stays silent; `@cuda.jit(device=True)` functions are not kernels.

    ## References
    - numba/numba#6904 and PR #7064 (`NumbaPerformanceWarning`,
      `NUMBA_CUDA_WARN_ON_IMPLICIT_COPY`), numba/numba#2929 (unnecessary D2H
      copies; use `cuda.to_device` / `cuda.In`), numba/numba#7342 (no warning for
      `guvectorize`).
    - Numba-CUDA documentation: *Memory management* (`user/memory.rst`).
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §3.3 *Kernel launch and implicit copies*, §8 item 9.
    """

    code = "SL102"
    name = "implicit-kernel-transfer"
    summary = "Host NumPy array passed straight to a Numba CUDA kernel launch (implicit copies)"
    fix_availability = "sometimes"

    def check(self, analysis):
        model = analysis.v3
        builder = FixBuilder(analysis)
        ancestry = Ancestry(analysis.module)
        reported: set[str] = set()
        operations = hot_operations(model)
        launches = [at for at in operations if at.operation.op == OpKind.KERNEL.value and at.operation.host_arrays]
        for at in operations:
            operation = at.operation
            if operation.op != OpKind.KERNEL.value or not operation.host_arrays or at.site in reported:
                continue
            call = model.node_of(at.site)
            if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Subscript):
                continue
            if not (copy_cost_at_stake(model, ancestry, at, call) or _moved_again(at, launches)):
                continue  # (one launch: Numba's copies are the ones the host needs anyway)
            reported.add(at.site)
            hosts = [labels.buffer_label(labels.argument(call, h.position, None)) for h in operation.host_arrays]
            plural = "s" if len(hosts) > 1 else ""
            names = ", ".join(f"`{label}`" for label in hosts if label) or ("arguments" if plural else "argument")
            on_default = at.stream is not None and at.stream.kind is StreamRefKind.LEGACY
            cost = (
                "and the copy back synchronizes the host" if on_default
                else "and the copy back blocks the host for pageable arrays"
            )
            # the kernel's function when the model knows it, else the launched name
            known = operation.api != "kernel" and ":" not in operation.api
            kernel = operation.api.rsplit(".", 1)[-1] if known else (labels.spelled(call.func.value)
                                                                       or analysis.code(call.func.value))
            yield Finding(
                call,
                f"host NumPy array{plural} {names} passed to kernel {api_named(kernel)}: Numba copies "
                f"{'them' if plural else 'it'} to the device before and back after every launch, {cost}",
                fix=_fix(builder, call, hosts) if on_default else None,
                help="move the data once with `cuda.to_device` and pass device arrays",
            )


def _moved_again(at, launches: list) -> bool:
    """Another launch of the function is given one of its host arrays: the array goes to the device and back once per
    launch, where one copy in and one out would do."""
    memory = {h.memory for h in at.operation.host_arrays if h.memory is not None}
    return any(other.function == at.function and other.site != at.site
               and memory & {h.memory for h in other.operation.host_arrays} for other in launches)


def _fix(builder: FixBuilder, node: cst.Call, hosts: list[str]):
    """Make the copies explicit: `d_x = cuda.to_device(x)` before the launch, the
    device array in the call, `d_x.copy_to_host(x)` after it. Only for launches on the default stream, where Numba's own copies are
    synchronous too, and for arrays passed by a plain name."""
    statement = builder.statement_of(node)
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    if not (isinstance(statement.body[0], cst.Expr) and statement.body[0].value is node):
        return None
    cuda = import_alias(builder.module, "numba.cuda")
    spelled = set(hosts)
    if cuda is None or "" in spelled:
        return None
    names = {}
    for label in sorted(spelled):
        if not any(isinstance(a.value, cst.Name) and a.value.value == label and not a.keyword for a in node.args):
            return None
        names[label] = fresh_name(builder.analysis.source, f"d_{label}")
    # Numba copies every host array back, and so does the fix: a kernel can write an
    # array through a view or an alias the body analysis does not follow. Dropping the
    # copies of arrays the kernel only reads is then a one-line edit for the user.
    written = spelled
    args = [
        a.with_changes(value=cst.Name(names[a.value.value]))
        if isinstance(a.value, cst.Name) and a.value.value in names and not a.keyword else a
        for a in node.args
    ]
    before = [f"{names[label]} = {cuda}.to_device({label})" for label in sorted(spelled)]
    after = [f"{names[label]}.copy_to_host({label})" for label in sorted(written)]
    edits = [builder.insert_before(statement, before), builder.replace(node, node.with_changes(args=args))]
    if after:
        edits.append(builder.insert_after(statement, after))
    return make_fix("Copy the host arrays explicitly around the launch", Applicability.UNSAFE, edits)
