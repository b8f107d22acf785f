#!/bin/bash
# usage: namecheck.sh owner/name ...   -> prints hits for owner/name and bare name
for r in "$@"; do
  bare=${r#*/}
  a=$(grep -ril -F -- "$r" /work/main/benchmarks/fresh-eyes/ /work/main/benchmarks/recall/ | wc -l)
  b=$(grep -ril -F -- "$bare" /work/main/benchmarks/fresh-eyes/ /work/main/benchmarks/recall/ | wc -l)
  echo "$r full=$a bare=$b"
done
