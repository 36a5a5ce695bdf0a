#!/usr/bin/env bash
# Speed of `hdpsgd accountant` (issue 33's targets: PLD for 14 063 steps under 0.5 s,
# calibration under 2 s). Usage: bench/accountant.sh BUILD_DIR. Prints the best of five runs of
# each command, wall and CPU seconds (CPU time is what a busy machine cannot inflate).
set -u
bin=$(cd "$1" && pwd)/hdpsgd
q=$(python3 -c 'print(256/60000)')
measure() { # measure NAME ARGS...
  local name=$1; shift
  python3 - "$bin" "$name" "$@" <<'PY'
import os, resource, subprocess, sys, time
binary, name, args = sys.argv[1], sys.argv[2], sys.argv[3:]
walls, cpus = [], []
for _ in range(5):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([binary, *args], check=True, stdout=subprocess.DEVNULL)
    walls.append(time.perf_counter() - t)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
print(f"{name}: wall {min(walls):.3f} s, cpu {min(cpus):.3f} s (best of 5)")
PY
}
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
measure "epsilon, 60 epochs at q = 256/60000 (14063 steps), PLD + RDP" accountant --sample-rate "$q" --noise-multiplier 1.1 --epochs 60
measure "calibration to epsilon = 2 (PLD), 14063 steps" accountant --sample-rate "$q" --epsilon 2 --epochs 60
measure "calibration to epsilon = 2 (RDP), 14063 steps" accountant --sample-rate "$q" --epsilon 2 --epochs 60 --accountant rdp
measure "epsilon, q = 0.01, sigma = 0.8, 100000 steps" accountant --sample-rate 0.01 --noise-multiplier 0.8 --steps 100000
