#!/usr/bin/env bash
# Peak memory (and time) of DP-GD on random features at the sizes of Bombari-Mondelli's Fig. 2
# (docs/theory.md §7): `hdpsgd rf` with p = 20000, n = 2000, d = 100, test size 1000 must stay
# within 2 GiB; also the cost of one step (bench_rf). Not a ctest: it takes ~30 s.
# Usage: bench/rf_memory.sh BUILD_DIR [P]   (BUILD_DIR: a Release build; P default 20000)
# Peak RSS from GNU time (-v), else from the kernel's VmHWM through /proc.
set -u
build=$(cd "$1" && pwd)
p=${2:-20000}
bin=$build/hdpsgd
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
limit_kb=$((2 * 1024 * 1024))
args=(rf --set rf.p=$p --set rf.n=2000 --set rf.d=100 --set rf.test_size=1000
      --set dpgd.T=5 --set rf.records=5 --runs 2 --threads 2 -o "$work/rf.csv" --json "$work/rf.json")
if [[ -x /usr/bin/time ]] && /usr/bin/time -v true 2>/dev/null; then
  /usr/bin/time -v "$bin" "${args[@]}" 2>"$work/time" >/dev/null
  rc=$?
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time")
  wall=$(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$work/time")
else
  "$bin" "${args[@]}" >/dev/null 2>&1 &
  pid=$!; kb=0
  while kill -0 $pid 2>/dev/null; do
    v=$(sed -n 's/^VmHWM:\s*\([0-9]*\) kB/\1/p' /proc/$pid/status 2>/dev/null); [[ -n $v ]] && kb=$v
    sleep 0.2
  done
  wait $pid; rc=$?; wall="?"
fi
echo "hdpsgd rf, p = $p, n = 2000, d = 100, test 1000, 2 runs, 2 threads: exit $rc, peak RSS $((kb / 1024)) MiB, wall $wall"
[[ -x $build/bench_rf ]] && "$build/bench_rf" 2000 "$p" 20
if [[ $rc -ne 0 ]]; then echo "FAIL: hdpsgd rf exited $rc"; exit 1; fi
if [[ $kb -gt $limit_kb ]]; then echo "FAIL: peak RSS above 2 GiB"; exit 1; fi
echo "ok: within 2 GiB"
