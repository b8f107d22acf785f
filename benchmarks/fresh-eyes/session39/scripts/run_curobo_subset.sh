#!/bin/bash
# curobo whole-tree runs time out (900 s, rc=124, no output) on this loaded machine; run each variant on a subset.
. /work/venv/bin/activate
OUT=/work/main/benchmarks/fresh-eyes/session39/out
SUB="curobo/_src/solver curobo/_src/rollout curobo/_src/util curobo/_src/optim curobo/examples"
for V in old new newcuda; do
  case $V in old) SRC=/tmp/rv42/old/src;; *) SRC=/tmp/rv42/new/src;; esac
  EXTRA=(); [ "$V" = newcuda ] && EXTRA=(--config 'assume-device="cuda"')
  cd /tmp/rv42/proj/curobo
  s=$(date +%s.%N)
  PYTHONPATH=$SRC timeout 600 python -m streamlint check --no-cache --timeout 300 --format concise --exit-zero "${EXTRA[@]}" $SUB > $OUT/$V-curobo.txt 2> $OUT/$V-curobo.stderr
  rc=$?; e=$(date +%s.%N)
  echo "$V curobo-subset rc=$rc wall=$(echo "$e - $s" | bc) lines=$(wc -l < $OUT/$V-curobo.txt) sl000=$(grep -c SL000 $OUT/$V-curobo.txt)" | tee -a $OUT/walltimes.txt
done
