#!/bin/bash
. /work/venv/bin/activate
cd /tmp/rv28
for p in InfiniGen specexec gpgpu_bootcamp Fooocus veScale vattention; do
  for v in old new; do
    src=/tmp/rv28/$v-src/src
    s=$(date +%s.%N)
    (cd proj/$p && PYTHONPATH=$src timeout 1200 python -m streamlint check --no-cache --format concise --exit-zero . > /tmp/rv28/out/$v-$p.txt 2> /tmp/rv28/out/$v-$p.err)
    e=$(date +%s.%N)
    echo "$p $v $(echo "$e - $s" | bc)" >> /tmp/rv28/out/times.txt
  done
done
echo done >> /tmp/rv28/out/times.txt
