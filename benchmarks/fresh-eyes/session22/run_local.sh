#!/bin/bash
# Session 22: OLD then NEW on each project, one product on one project at a time, nice 10.
cd /work/wt/s22-fresh
P=benchmarks/fresh-eyes/projects-session22.toml
mkdir -p /tmp/s22/runs
for repo in "$@"; do
  n=$(echo $repo | tr / +)
  for prod in old new; do
    if [ $prod = old ]; then PP=/tmp/fe22-v2src/src; else PP=/tmp/fe22-v3src/src; fi
    s=$(date +%s)
    env PYTHONPATH=$PP nice -n 10 /work/venv/bin/python benchmarks/triage/run.py --projects $P --labels /nonexistent.toml \
      --work-dir /tmp/s22/work --only $repo --out /tmp/s22/runs/$prod-$n.json --timeout 300 > /tmp/s22/runs/$prod-$n.report 2>&1
    echo "$prod $repo rc=$? $(( $(date +%s) - s )) s" >> /tmp/s22/runs/times.txt
  done
done
echo done "$@" >> /tmp/s22/runs/times.txt
