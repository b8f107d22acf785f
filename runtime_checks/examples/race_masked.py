"""A missing wait (SL401) that a per-step host read hides: `row_means` copies the row
means of `y` to the host (it synchronizes s1) before the consumer on s2 is queued, so s1
is always done by then. The missing wait is real (drop the logging and the race can
happen) but cannot bite in this program; `streamlint verify` reports it as masked by
that synchronization.

    streamlint verify runtime_checks/examples/race_masked.py
"""
import torch


def row_means(t):
    return sum(t.mean(dim=1).tolist()) / t.shape[0]


def main(steps: int = 8) -> float:
    torch.manual_seed(0)
    x = torch.rand(2048, 2048, device="cuda")
    w = torch.rand(2048, 2048, device="cuda") / 2048
    s1 = torch.cuda.Stream()
    s2 = torch.cuda.Stream()
    torch.cuda.synchronize()
    total = 0.0
    logged = []
    for i in range(steps):
        with torch.cuda.stream(s1):
            y = torch.tanh(x @ w + i)
            logged.append(row_means(y))
        with torch.cuda.stream(s2):
            z = y * 2.0 + 1.0
        s2.synchronize()
        total += float(z.sum())
    return total + sum(logged)


print(f"checksum {main():.4f}")
