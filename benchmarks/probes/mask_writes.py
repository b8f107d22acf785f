"""Which ways of writing through a boolean mask make the host wait (torch's sync debug mode raises on a wait).

Run on a GPU: python benchmarks/probes/mask_writes.py; prints one line per form, "waits" or "no wait"."""
import torch
from sync_debug import probe


def main():
    holder = torch.zeros(64, 8, device="cuda")
    mask = torch.rand(64, device="cuda") > 0.5
    full = torch.ones(64, 8, device="cuda")
    selected = torch.ones(int(mask.sum()), 8, device="cuda")
    probe("holder[mask] = selected", lambda: holder.__setitem__(mask, selected))
    probe("holder[mask] = 1.0", lambda: holder.__setitem__(mask, 1.0))
    probe("holder[mask] = 0-d tensor", lambda: holder.__setitem__(mask, torch.tensor(1.0, device="cuda")))
    probe("holder.copy_(torch.where(mask[:, None], full, holder))",
           lambda: holder.copy_(torch.where(mask[:, None], full, holder)))
    probe("holder.masked_fill_(mask[:, None], 1.0)", lambda: holder.masked_fill_(mask[:, None], 1.0))
    probe("holder.masked_scatter_(mask[:, None].expand_as(holder), selected)",
           lambda: holder.masked_scatter_(mask[:, None].expand_as(holder), selected))
    probe("holder.index_put_((idx,), selected) with idx taken once",
           lambda: holder.index_put_((mask.nonzero()[:, 0],), selected))
    idx = mask.nonzero()[:, 0]
    probe("holder[idx] = selected (idx precomputed)", lambda: holder.__setitem__(idx, selected))
    probe("holder[mask] (gather)", lambda: holder[mask])
    probe("torch.where(mask[:, None], holder, 0)", lambda: torch.where(mask[:, None], holder, 0))
    print(torch.__version__)


if __name__ == "__main__":
    main()
