#!/bin/bash
# usage: run_variant.sh old|new|newcuda  -> runs linter on each project sequentially
. /work/venv/bin/activate
v=$1; src=/tmp/rv43/${v%cuda}/src; [ "$v" = newcuda ] && src=/tmp/rv43/new/src
OUT=/work/main/benchmarks/fresh-eyes/session40/out
for p in cifar10-airbench torch-ngp ComfyUI-GGUF hlb-gpt PPDS-2020; do
  cd /tmp/rv43/proj/$p
  extra=(); [ "$v" = newcuda ] && extra=(--config 'assume-device="cuda"')
  s=$(date +%s.%N)
  PYTHONPATH=$src timeout 900 python -m streamlint check --no-cache --timeout 300 --format concise --exit-zero . "${extra[@]}" > $OUT/$v-$p.txt 2> $OUT/$v-$p.err
  rc=$?; e=$(date +%s.%N)
  echo "$v $p rc=$rc wall=$(python -c "print(round($e-$s,1))") lines=$(wc -l < $OUT/$v-$p.txt)" | tee -a $OUT/runs.txt
done
