#!/bin/bash
# runs OLD, NEW, NEW+cuda on each project sequentially
. /work/venv/bin/activate
OUT=/work/main/benchmarks/fresh-eyes/session43/runs
for p in efficientdet-pytorch DROID-SLAM second.pytorch CenterPoint cule; do
  cd /tmp/rv46/proj/$p && git init -q 2>/dev/null
  for v in old new newcuda; do
    case $v in old) SRC=/tmp/rv46/old/src; EXTRA=();; new) SRC=/tmp/rv46/new/src; EXTRA=();; newcuda) SRC=/tmp/rv46/new/src; EXTRA=(--config 'assume-device="cuda"');; esac
    s=$(date +%s.%N)
    PYTHONPATH=$SRC timeout 900 python -m streamlint check --no-cache --timeout 300 --format concise --exit-zero "${EXTRA[@]}" . > $OUT/$p.$v.txt 2> $OUT/$p.$v.err
    rc=$?
    e=$(date +%s.%N)
    echo "$p $v rc=$rc wall=$(echo "$e - $s" | bc) lines=$(wc -l < $OUT/$p.$v.txt)" | tee -a $OUT/summary.txt
  done
done
