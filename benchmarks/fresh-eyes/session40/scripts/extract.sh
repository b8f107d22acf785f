#!/bin/bash
# usage: extract.sh mirror_git_dir dest
g=$1; d=$2; mkdir -p $d
git --git-dir=$g ls-tree -r --name-only HEAD | grep -E '\.(py|ipynb|toml)$' | while read p; do
  mkdir -p "$d/$(dirname "$p")"; git --git-dir=$g show "HEAD:$p" > "$d/$p" 2>/dev/null || { echo "missing $p"; rm -f "$d/$p"; }
done
(cd $d && git init -q)
