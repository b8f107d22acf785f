"""A missing wait (SL401) that a host read hides when it runs: every `log_every` steps,
`row_means` copies the row means of `y` to the host (it synchronizes s1) before the
consumer on s2 is queued. Statically the logging happens only on some steps, so the
missing wait is real (log less often and the race can happen); this run logs every step
(`log_every=1`), so s1 is always done by then and the race cannot bite. `streamlint
verify` reports it as masked by that synchronization.

    streamlint verify runtime_checks/examples/race_masked.py
"""
import torch


def row_means(t):
    return sum(t.mean(dim=1).tolist()) / t.shape[0]


def main(steps: int = 8, log_every: int = 1) -> float:
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
            if i % log_every == 0:
                logged.append(row_means(y))
        with torch.cuda.stream(s2):
            z = y * 2.0 + 1.0
        s2.synchronize()
        total += float(z.sum())
    return total + sum(logged)


print(f"checksum {main():.4f}")
