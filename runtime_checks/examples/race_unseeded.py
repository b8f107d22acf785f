"""A missing wait (SL401) in a program that is not seeded: the weights are random on
every run, so its printed checksum differs from run to run whether or not the race
bites. `streamlint verify` sees the control runs disagree, drops the output comparison
from the evidence and says why; the verdict rests on the traced accesses alone.

    streamlint verify runtime_checks/examples/race_unseeded.py
"""
import torch


def main(steps: int = 8) -> float:
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
