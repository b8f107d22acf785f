"""The probes' shared check: does an action make the host wait? torch's sync debug mode raises on a wait."""
import torch


def probe(name, action):
    """Print "waits" or "no wait" for `action()` under sync debug mode "error"."""
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        action()
        verdict = "no wait"
    except RuntimeError as error:
        verdict = "waits" if "synchroniz" in str(error) else f"error: {error}"
    finally:
        torch.cuda.set_sync_debug_mode("default")
    print(f"{name}: {verdict}")
