#!/bin/bash
# runs OLD, NEW, NEW+cuda on each project, one process at a time
. /work/venv/bin/activate
R=/tmp/rv47/session47/runs
mkdir -p $R
for p in SPECULA drqv2 denoising-diffusion-pytorch torchani dreamerv3-torch; do
  for v in old new newcuda; do
    cd /tmp/rv47/projects/$p
    src=/tmp/rv47/new/src; extra=()
    [ $v = old ] && src=/tmp/rv47/old/src
    [ $v = newcuda ] && extra=(--config 'assume-device="cuda"')
    s=$(date +%s.%N)
    PYTHONPATH=$src python -m streamlint check --no-cache --timeout 300 --format concise --exit-zero "${extra[@]}" . > $R/$v-$p.txt 2> $R/$v-$p.stderr.txt
    rc=$?
    e=$(date +%s.%N)
    printf "%s\t%s\t%.1f\t%s\t%s\n" $v $p $(echo "$e - $s" | bc) $rc $(grep -c . $R/$v-$p.txt) >> $R/runfacts.tsv
  done
done
