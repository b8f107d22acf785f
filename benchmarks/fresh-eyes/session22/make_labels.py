"""Session 22: write ../labels-session22.toml (run.py --labels format) from the pooled verdicts
(pool.txt + pool2.txt, verdicts.txt + verdicts2.txt) and the two runs' findings."""
import json, pathlib, re
HERE = pathlib.Path(__file__).resolve().parent
num = {}
for f in ("pool.txt", "pool2.txt"):
    for block in (HERE / f).read_text().strip().split("\n\n"):
        lines = block.split("\n")
        m = re.match(r"#(\d+) \[(.*?)\] (.*):(\d+) (SL\d+) fp=(\w+)", lines[0])
        num[int(m[1])] = dict(repo=m[2], path=m[3], line=int(m[4]), code=m[5], fingerprint=m[6],
                              text=lines[1].split("text: ", 1)[1])
out, seen = ["# Session 22 verdicts (pooled blind, see review-session22.md), keyed by the triage fingerprint.",
             "# Two pooled findings share a fingerprint (same site, two messages): one label, same verdict.", ""], set()
for f in ("verdicts.txt", "verdicts2.txt"):
    for line in (HERE / f).read_text().strip().split("\n"):
        n, v, reason = line.split("|", 2)
        it = num[int(n)]
        if it["fingerprint"] in seen:
            continue
        seen.add(it["fingerprint"])
        out += ["[[label]]", f'fingerprint = "{it["fingerprint"]}"', f'repo = "{it["repo"]}"', f'path = "{it["path"]}"',
                f'code = "{it["code"]}"', f'text = {json.dumps(it["text"])}', "test_code = false",
                f'verdict = "{v}"', f'reason = {json.dumps(reason)}', ""]
(HERE.parent / "labels-session22.toml").write_text("\n".join(out))
print(len(seen), "labels")
