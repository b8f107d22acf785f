"""Do the host reads the model learned in session 47 make the host wait (torch's sync debug mode raises on a wait),
and how many device-to-host copies does each make (the profiler's Memcpy DtoH count)?

- `all(t)` / `any(t)` of a CUDA tensor (row 8.21): one copy per element read, against `t.all()`'s one read;
- storing a CUDA tensor into a CPU tensor (`pose[:3, :3] = rot`, row 8.22): a copy back that waits;
- `init.cuda().requires_grad_(True)` stays a CUDA tensor (row 8.22), checked by its device;
- a `DataLoader` with `batch_size=None` over an in-memory dataset pinned in place hands out pinned tensors even with
  `pin_memory=False` (row 10.111).

Run on a GPU: python benchmarks/probes/host_reads_session47.py"""
import torch
from sync_debug import probe


def copies_back(action):
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        action()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if "Memcpy DtoH" in e.name)


class InMemory(torch.utils.data.Dataset):
    def __init__(self, batches):
        self.batches = [{k: v.pin_memory() for k, v in b.items()} for b in batches]

    def __getitem__(self, i):
        return self.batches[i]

    def __len__(self):
        return len(self.batches)


def main():
    done = torch.zeros(8, dtype=torch.bool, device="cuda")  # all False: all() stops at the first element
    done_true = torch.ones(8, dtype=torch.bool, device="cuda")  # all True: all() reads every element
    probe("all(cuda bools)", lambda: all(done_true))
    probe("cuda bools .all() then bool", lambda: bool(done_true.all()))
    print("DtoH copies, all(8 True cuda bools):", copies_back(lambda: all(done_true)))
    print("DtoH copies, all(8 cuda bools, first False):", copies_back(lambda: all(done)))
    print("DtoH copies, bool(t.all()):", copies_back(lambda: bool(done_true.all())))
    rot = torch.rand(3, 3, device="cuda")
    pose = torch.eye(4)
    store = lambda: pose.__setitem__((slice(0, 3), slice(0, 3)), rot)  # noqa: E731
    probe("cpu_pose[:3, :3] = cuda_rot", store)
    print("DtoH copies, cpu_pose[:3, :3] = cuda_rot:", copies_back(store))
    init = torch.rand(4)
    print("init.cuda().requires_grad_(True).device:", init.cuda().requires_grad_(True).device)
    loader = torch.utils.data.DataLoader(InMemory([{"x": torch.rand(4, 3)} for _ in range(2)]), batch_size=None,
                                         pin_memory=False)
    print("batch_size=None loader over pinned items, is_pinned:", next(iter(loader))["x"].is_pinned())
    collated = torch.utils.data.DataLoader(InMemory([{"x": torch.rand(3)} for _ in range(2)]), batch_size=2,
                                           pin_memory=False)
    print("batch_size=2 loader (collated), is_pinned:", next(iter(collated))["x"].is_pinned())
    print(torch.__version__)


if __name__ == "__main__":
    main()
