#!/usr/bin/env bash
# The Monte Carlo's cost per row against the batch size (issue 33, docs/performance.md):
# `hdpsgd sim` on the default model at d = 200 and 1000 (n = 10 d), 200 runs on one thread,
# sgd.batch = 1, 4, 16, 64, best of three wall times (the JSON's seconds).
# Usage: bench/sim_batch.sh HDPSGD
set -u
bin=$1
for d in 200 1000; do
  for B in 1 4 16 64; do
    best=
    for rep in 1 2 3; do
      s=$("$bin" sim --set data.d=$d --set sgd.batch=$B --runs 200 --threads 1 --json - -o /dev/null 2>/dev/null |
          python3 -c "import json, sys; print(json.load(sys.stdin)['seconds'])")
      best=$(python3 -c "print(min(float('$s'), float('${best:-inf}')))")
    done
    python3 -c "print('d = $d, B = $B: %.3f s, %.2f ns per row and coordinate' % ($best, $best / (200 * 10 * $d * $d) * 1e9))"
  done
done
