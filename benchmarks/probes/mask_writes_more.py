"""More forms of writing through a boolean mask in PyTorch: which make the host wait (the sync debug mode raises
on a wait). Run on a GPU: python benchmarks/probes/mask_writes_more.py"""
import torch
from mask_writes import probe  # (the script's own folder is on the path)


def main():
    holder = torch.zeros(64, 8, device="cuda")
    mask = torch.rand(64, device="cuda") > 0.5
    selected = torch.ones(int(mask.sum()), 8, device="cuda")
    zero_d = torch.tensor(1.0, device="cuda")
    probe("holder[mask] = 0", lambda: holder.__setitem__(mask, 0))
    probe("holder[mask] = True-ish int 1", lambda: holder.__setitem__(mask, 1))
    probe("holder.masked_fill_(mask[:, None], 0-d cuda tensor)", lambda: holder.masked_fill_(mask[:, None], zero_d))
    probe("holder[mask] += 1", lambda: holder.__setitem__(mask, holder[mask] + 1))
    probe("holder.masked_scatter_(mask, selected) 1-D mask", lambda: holder.masked_scatter_(mask, selected))
    wide = mask[:, None].expand_as(holder)
    probe("holder[mask[:, None].expand_as(holder)] = 0.5", lambda: holder.__setitem__(wide, 0.5))
    probe("torch.masked_select(holder, mask[:, None])", lambda: torch.masked_select(holder, mask[:, None]))
    probe("holder[mask] = holder[mask] * 2 (same mask)", lambda: holder.__setitem__(mask, holder[mask] * 2))
    print(torch.__version__)


if __name__ == "__main__":
    main()
