#!/bin/bash
# Run one variant on one project. usage: run_one.sh old|new|newcuda project
. /work/venv/bin/activate
V=$1; p=$2; OUT=/work/main/benchmarks/fresh-eyes/session39/out
case $V in old) SRC=/tmp/rv42/old/src;; new|newcuda) SRC=/tmp/rv42/new/src;; esac
EXTRA=(); [ "$V" = newcuda ] && EXTRA=(--config 'assume-device="cuda"')
cd /tmp/rv42/proj/$p
s=$(date +%s.%N)
PYTHONPATH=$SRC timeout 900 python -m streamlint check --no-cache --timeout 300 --format concise --exit-zero "${EXTRA[@]}" . > $OUT/$V-$p.txt 2> $OUT/$V-$p.stderr
rc=$?; e=$(date +%s.%N)
echo "$V $p rc=$rc wall=$(echo "$e - $s" | bc) lines=$(wc -l < $OUT/$V-$p.txt) sl000=$(grep -c SL000 $OUT/$V-$p.txt)" | tee -a $OUT/walltimes.txt
