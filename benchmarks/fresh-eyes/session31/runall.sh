#!/bin/bash
. /work/venv/bin/activate
mkdir -p /tmp/rv33/out
: > /tmp/rv33/out/times.txt
for name in YOLOX cusignal nunchaku sample-factory habitat-lab xtuner; do
  for ver in old new; do
    cd /tmp/rv33/proj/$name
    s=$(date +%s.%N)
    PYTHONPATH=/tmp/rv33/$ver-src/src timeout 900 python -m streamlint check --no-cache --format concise --exit-zero . > /tmp/rv33/out/$ver-$name.txt 2>&1
    rc=$?
    e=$(date +%s.%N)
    echo "$name $ver rc=$rc wall=$(echo "$e - $s" | bc)" >> /tmp/rv33/out/times.txt
  done
done
echo DONE >> /tmp/rv33/out/times.txt
