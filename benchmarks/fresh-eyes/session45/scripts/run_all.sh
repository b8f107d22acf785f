#!/bin/bash
. /work/venv/bin/activate
cd /tmp/rv48/proj
echo "variant project wall_s rc" > /tmp/rv48/runs/times.txt
for p in yenchenlin+nerf-pytorch cvg+nice-slam rosinality+stylegan2-pytorch chengzeyi+stable-fast xsuite+xfields; do
 for v in old new newcuda; do
  case $v in old) src=/tmp/rv48/old/src; extra=();; new) src=/tmp/rv48/new/src; extra=();; newcuda) src=/tmp/rv48/new/src; extra=(--config 'assume-device="cuda"');; esac
  cd /tmp/rv48/proj/$p
  s=$(date +%s.%N)
  PYTHONPATH=$src python -m streamlint check --no-cache --timeout 300 --format concise --exit-zero "${extra[@]}" . > /tmp/rv48/runs/$v/$p.txt 2> /tmp/rv48/runs/$v/$p.err
  rc=$?
  e=$(date +%s.%N)
  echo "$v $p $(echo "$e - $s" | bc) $rc" >> /tmp/rv48/runs/times.txt
 done
done
