"""A small training-style loop with three stream problems that streamlint flags: the
demo program for `streamlint verify runtime_checks/examples/train_loop.py -- --steps 24`.

- the host batches are pageable, so `non_blocking=True` cannot overlap (SL301);
- the loss is read with `.item()` on every step (SL502);
- `torch.cuda.synchronize()` ends every step (SL103).
"""
import argparse

import torch


def train(steps: int, batch: int, width: int) -> list[float]:
    data = (torch.arange(steps * batch, dtype=torch.float32) % 997 * 1e-3).reshape(steps, batch)
    w = torch.full((width, width), 1.0 / width, device="cuda")
    losses = []
    for step in range(steps):
        with _streamlint_rf('SL301:18'): x = data[step].to("cuda", non_blocking=True)
        h = x.view(-1, width)
        for _ in range(4):
            h = torch.tanh(h @ w)
        loss = h.square().mean()
        with _streamlint_rf('SL502:23'): losses.append(loss.item())
        with _streamlint_rf('SL103:24'): torch.cuda.synchronize()
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--batch", type=int, default=1 << 22)
    parser.add_argument("--width", type=int, default=1024)
    args = parser.parse_args()
    losses = train(args.steps, args.batch, args.width)
    print(f"{len(losses)} steps, final loss {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
