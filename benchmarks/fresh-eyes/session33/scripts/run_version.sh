#!/bin/bash
# usage: run_version.sh <label> <src-dir> [extra args...]
# label: old | new | newcuda ; runs every project sequentially, records wall times
. /work/venv/bin/activate
label=$1; src=$2; shift 2
OUT=/tmp/rv35/out
mkdir -p $OUT
for p in ms-swift CosyVoice sam2 index-tts pyaerial; do
  cd /tmp/rv35/proj/$p
  s=$(date +%s.%N)
  PYTHONPATH=$src/src timeout 900 python -m streamlint check --no-cache --timeout 300 --format concise --exit-zero "$@" . > $OUT/$label-$p.txt 2> $OUT/$label-$p.err
  rc=$?
  e=$(date +%s.%N)
  echo "$p $label rc=$rc wall=$(python -c "print(round($e-$s,1))")s" >> $OUT/times.txt
done
echo "DONE $label $(date -u +%FT%TZ)" >> $OUT/times.txt
