#!/bin/bash
# usage: density.sh mirror_dir  -> count stream-API lines in HEAD .py files
m=$1
git -C $m log -1 --format='%H %cd' HEAD
n=$(git -C $m ls-tree -r --name-only HEAD | grep -c '\.py$')
echo "py files: $n"
git -C $m grep -c -E 'Stream\(|wait_stream|record_stream|non_blocking|pin_memory|pinned|\.synchronize\(|Event\(|cuda\.stream\(|current_stream|cudaMemcpyAsync' HEAD -- '*.py' 2>/dev/null | sort -t: -k3 -n -r | head -8
echo total: $(git -C $m grep -h -E 'Stream\(|wait_stream|record_stream|non_blocking|pin_memory|pinned|\.synchronize\(|Event\(|cuda\.stream\(|current_stream|cudaMemcpyAsync' HEAD -- '*.py' 2>/dev/null | wc -l)
