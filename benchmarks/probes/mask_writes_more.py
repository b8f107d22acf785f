"""More forms of writing through a boolean mask in PyTorch: which make the host wait (the sync debug mode raises
on a wait). Run on a GPU: python benchmarks/probes/mask_writes_more.py"""
import torch


def _torch_probe(name, action):
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        action()
        verdict = "no wait"
    except RuntimeError as error:
        verdict = "waits" if "synchroniz" in str(error) else f"error: {str(error)[:80]}"
    finally:
        torch.cuda.set_sync_debug_mode("default")
    print(f"torch {name}: {verdict}")


def main():
    holder = torch.zeros(64, 8, device="cuda")
    mask = torch.rand(64, device="cuda") > 0.5
    selected = torch.ones(int(mask.sum()), 8, device="cuda")
    zero_d = torch.tensor(1.0, device="cuda")
    _torch_probe("holder[mask] = 0", lambda: holder.__setitem__(mask, 0))
    _torch_probe("holder[mask] = True-ish int 1", lambda: holder.__setitem__(mask, 1))
    _torch_probe("holder.masked_fill_(mask[:, None], 0-d cuda tensor)", lambda: holder.masked_fill_(mask[:, None], zero_d))
    _torch_probe("holder[mask] += 1", lambda: holder.__setitem__(mask, holder[mask] + 1))
    _torch_probe("holder.masked_scatter_(mask, selected) 1-D mask", lambda: holder.masked_scatter_(mask, selected))
    _torch_probe("holder[mask[:, None].expand_as(holder)] = 0.5", lambda: holder.__setitem__(mask[:, None].expand_as(holder), 0.5))
    _torch_probe("torch.masked_select(holder, mask[:, None])", lambda: torch.masked_select(holder, mask[:, None]))
    _torch_probe("holder[mask] = holder[mask] * 2 (same mask)", lambda: holder.__setitem__(mask, holder[mask] * 2))
    print(torch.__version__)


if __name__ == "__main__":
    main()
