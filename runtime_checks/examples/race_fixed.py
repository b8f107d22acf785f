"""The corrected race_missing_wait.py: s2 waits for s1 through a bound method, which
streamlint cannot follow, so SL401 is still reported; `streamlint verify` delays s1
as for the bad program and finds the result unchanged: the finding is not observed.

    streamlint verify runtime_checks/examples/race_fixed.py
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
        wait_for = s2.wait_stream
        wait_for(s1)
        with torch.cuda.stream(s2):
            z = y * 2.0 + 1.0
        s2.synchronize()
        total += float(z.sum())
    return total


print(f"checksum {main():.4f}")
