#!/bin/bash
# Runs OLD, NEW, NEW+cuda on each project sequentially; records wall time, rc, line counts only.
. /work/venv/bin/activate
OUT=/tmp/rv47b/session47b/runs
FACTS=$OUT/run_facts.tsv
echo -e "variant\tproject\trc\twall_s\tstdout_lines\tstderr_lines" > $FACTS
for p in pytorch-cifar improved-diffusion Co-SLAM LLMSpeculativeSampling diffractsim; do
  for v in old new new-cuda; do
    cd /tmp/rv47b/projects/$p
    src=/tmp/rv47b/${v%%-cuda}/src
    extra=()
    [ "$v" = new-cuda ] && extra=(--config 'assume-device="cuda"')
    t0=$(date +%s.%N)
    PYTHONPATH=$src timeout 900 python -m streamlint check --no-cache --timeout 300 --format concise --exit-zero "${extra[@]}" . > $OUT/$v-$p.txt 2> $OUT/$v-$p.stderr.txt
    rc=$?
    t1=$(date +%s.%N)
    echo -e "$v\t$p\t$rc\t$(echo "$t1 - $t0" | bc)\t$(wc -l < $OUT/$v-$p.txt)\t$(wc -l < $OUT/$v-$p.stderr.txt)" >> $FACTS
  done
done
echo DONE >> $FACTS
