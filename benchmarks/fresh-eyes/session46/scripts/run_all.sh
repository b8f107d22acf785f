#!/bin/bash
# Runs OLD, NEW, NEW+cuda on each project, one process at a time.
. /work/venv/bin/activate
OUT=/tmp/rv49/session46/runs
mkdir -p $OUT
: > $OUT/times.tsv
for p in Gaussian-SLAM pytorch-a2c-ppo-acktr-gail kernl nvdiffrec tomoalign; do
  for v in old new newcuda; do
    case $v in
      old) SRC=/tmp/rv49/old/src; EXTRA=();;
      new) SRC=/tmp/rv49/new/src; EXTRA=();;
      newcuda) SRC=/tmp/rv49/new/src; EXTRA=(--config 'assume-device="cuda"');;
    esac
    cd /tmp/rv49/projects/$p
    s=$(date +%s.%N)
    PYTHONPATH=$SRC python -m streamlint check --no-cache --timeout 300 --format concise --exit-zero "${EXTRA[@]}" . > $OUT/$v-$p.txt 2> $OUT/$v-$p.err
    rc=$?
    e=$(date +%s.%N)
    n=$(grep -cE '^[^ ].*:[0-9]+:[0-9]+: ' $OUT/$v-$p.txt)
    printf "%s\t%s\t%.1f\t%s\t%s\n" $p $v $(echo "$e - $s" | bc) $rc $n >> $OUT/times.tsv
  done
done
