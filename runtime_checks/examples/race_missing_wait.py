"""A real missing wait (SL401): `y` is made on stream s1 and read on stream s2 with
nothing ordering the two. Usually s1 is done in time, so the printed checksum looks
right; `streamlint verify` provokes the race by delaying s1 and sees the result change.

    streamlint verify runtime_checks/examples/race_missing_wait.py
"""
import torch


def main(steps: int = 8) -> float:
    torch.manual_seed(0)
    x = torch.rand(2048, 2048, device="cuda")
    w = torch.rand(2048, 2048, device="cuda") / 2048
    s1 = torch.cuda.Stream()
    s2 = torch.cuda.Stream()
    torch.cuda.synchronize()
    total = 0.0
    for i in range(steps):
        with torch.cuda.stream(s1):
            y = torch.tanh(x @ w + i)
        with torch.cuda.stream(s2):
            z = y * 2.0 + 1.0
        s2.synchronize()
        total += float(z.sum())
    return total


print(f"checksum {main():.4f}")
