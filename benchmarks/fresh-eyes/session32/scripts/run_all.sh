#!/bin/bash
. /work/venv/bin/activate
cd /tmp/rv34
: > out/times.txt
for p in RLinf unsloth-zoo omniserve MONAI httomo larnd-sim; do
  for v in old new; do
    src=/tmp/rv34/$v-src
    cd /tmp/rv34/proj/$p
    s=$(date +%s.%N)
    PYTHONPATH=$src/src timeout 900 python -m streamlint check --no-cache --format concise --exit-zero . > /tmp/rv34/out/$v-$p.txt 2> /tmp/rv34/out/$v-$p.err
    rc=$?
    e=$(date +%s.%N)
    echo "$p $v rc=$rc wall=$(python -c "print(round($e-$s,1))")s" >> /tmp/rv34/out/times.txt
    cd /tmp/rv34
  done
done
echo DONE >> /tmp/rv34/out/times.txt
