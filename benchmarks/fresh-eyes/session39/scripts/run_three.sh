#!/bin/bash
# Run OLD, then NEW, then NEW+cuda, one at a time.
D=$(dirname "$0")
for v in old new newcuda; do bash $D/run_all.sh $v; done
echo ALLDONE >> /work/main/benchmarks/fresh-eyes/session39/out/walltimes.txt
