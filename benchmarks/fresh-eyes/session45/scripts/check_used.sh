#!/bin/bash
# usage: check_used.sh owner/name ...   -> prints USED/free for each (case-insensitive grep of owner/name and bare name)
cd /work/main/benchmarks
for r in "$@"; do
  name=${r#*/}
  a=$(grep -ril -- "$r" fresh-eyes recall 2>/dev/null | head -3 | tr '\n' ' ')
  b=$(grep -rilw -- "$name" fresh-eyes recall 2>/dev/null | head -3 | tr '\n' ' ')
  if [ -n "$a$b" ]; then echo "USED $r : $a $b"; else echo "free $r"; fi
done
