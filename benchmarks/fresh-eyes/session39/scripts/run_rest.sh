#!/bin/bash
# Time-saving order (session 39): after OLD on all projects, run NEW then NEW+cuda per project, so each project can be
# pooled and judged blind while later projects run; curobo (whole tree timed out under OLD) last, on a subset.
D=$(dirname "$0")
while pgrep -f "run_all.sh old" >/dev/null; do sleep 5; done
for p in gsplat stable-baselines3 tianshou numba-examples; do
  bash $D/run_one.sh new $p; bash $D/run_one.sh newcuda $p; echo "DONE $p" >> /work/main/benchmarks/fresh-eyes/session39/out/walltimes.txt
done
bash $D/run_curobo_subset.sh
echo ALLDONE >> /work/main/benchmarks/fresh-eyes/session39/out/walltimes.txt
