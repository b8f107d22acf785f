"""Does indexing a CUDA tensor with an index the host holds make the host wait (torch's sync debug mode raises on a
wait), and what does the profiler see (a pageable host-to-device copy)?

Run on a GPU: python benchmarks/probes/host_indices.py; prints one line per form, "waits" or "no wait", then the
CUDA runtime calls and copies the profiler records for one NumPy-indexed read."""
import numpy as np
import torch
from sync_debug import probe


def main():
    rays = torch.rand(1 << 16, 8, device="cuda")
    picked_np = np.random.choice(rays.shape[0], size=[1024], replace=False)
    picked_cpu = torch.randint(0, rays.shape[0], (1024,))
    picked_gpu = torch.randint(0, rays.shape[0], (1024,), device="cuda")
    rows = torch.ones(1024, 8, device="cuda")
    probe("rays[numpy index]", lambda: rays[picked_np])
    probe("rays[cpu tensor index]", lambda: rays[picked_cpu])
    probe("rays[[0, 2, 4]]", lambda: rays[[0, 2, 4]])
    probe("rays[cpu index] = rows", lambda: rays.__setitem__(picked_cpu, rows))
    probe("rays[cuda index]", lambda: rays[picked_gpu])
    probe("rays[cuda index] = rows", lambda: rays.__setitem__(picked_gpu, rows))
    probe("rays[3] (an int)", lambda: rays[3])
    probe("rays[1:9] (a slice)", lambda: rays[1:9])
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            rays[picked_np]
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if "Memcpy" in e.name or e.name.startswith("cuda")})
    print("profiler:", "; ".join(names))
    print(torch.__version__)


if __name__ == "__main__":
    main()
