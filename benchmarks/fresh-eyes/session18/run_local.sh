#!/bin/bash
cd /work/wt/s18-fresh
P=benchmarks/fresh-eyes/projects-session18.toml
for prod in old new; do
  if [ $prod = old ]; then PP=/tmp/fe-v2src-05c2; else PP=/tmp/fe-v3src-a08374bc; fi
  for repo in deepbeepmeep/mmgp HERA-Team/matvis Nerogar/OneTrainer deepseek-ai/DeepEP PtyLab/PtyLab.py kohya-ss/musubi-tuner fangwei123456/spikingjelly; do
    n=$(echo $repo | tr / +)
    /usr/bin/time -f "$prod $repo %e s" env PYTHONPATH=$PP nice -n 10 python benchmarks/triage/run.py --projects $P --labels /nonexistent.toml --work-dir build/s18/work --only $repo --out /tmp/s18/$prod-$n.json --timeout 900 > /tmp/s18/$prod-$n.report 2>&1
    tail -1 /tmp/s18/$prod-$n.report >> /tmp/s18/times.txt
  done
done
echo done >> /tmp/s18/times.txt
# Session 18 note: the loop above ran OLD then NEW for the first seven projects, one project at a
# time, on the shared 2-core host (load average 10-20). It was stopped during NEW musubi-tuner and
# NEW spikingjelly was started by hand beside it (same command, nice 0; musubi's processes were
# reniced to 0); OpenPCDet was added later and run the same way (OLD then NEW, nice 0).
# python combine.py merges /tmp/s18/<product>-<owner+name>.json into old-run.json / new-run.json.
