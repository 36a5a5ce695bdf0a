#!/usr/bin/env bash
# golden_coretypes: the golden cases marked `blas` in cases.txt (their values pass through
# OpenBLAS, which picks its kernels at run time from the CPU) run under two OpenBLAS core
# types this CPU can execute (OPENBLAS_CORETYPE; AVX-512: SkylakeX and Haswell, AVX2:
# Haswell and Sandybridge, AVX: Sandybridge and Nehalem). Each run must agree with the record
# (run.sh, within the case's rules), and the two runs with each other within the same rules;
# the cases whose values the two kernels change are listed.
# Skipped (77) when the OpenBLAS in use does not switch kernels (not a DYNAMIC_ARCH build, or
# another BLAS): then there is nothing to compare.
# Usage: coretypes.sh HDPSGD SRC_DIR   (GOLDEN_CORETYPES="A B" chooses the pair)
set -uo pipefail
bin=$1; src=$2
here="$src/tests/golden"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

core_of() {   # the core type OpenBLAS reports when asked for $1 (empty: no report)
  OPENBLAS_VERBOSE=2 OPENBLAS_CORETYPE=$1 "$bin" privacy 2>&1 </dev/null |
    sed -n 's/^Core: *//p' | head -1
}
if [[ -n ${GOLDEN_CORETYPES:-} ]]; then
  read -r -a pair <<<"$GOLDEN_CORETYPES"
else
  flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
  if [[ " $flags " == *" avx512f "* && " $flags " == *" avx512vl "* ]]; then pair=(SkylakeX Haswell)
  elif [[ " $flags " == *" avx2 "* && " $flags " == *" fma "* ]]; then pair=(Haswell Sandybridge)
  elif [[ " $flags " == *" avx "* ]]; then pair=(Sandybridge Nehalem)
  else echo "SKIP: a CPU without AVX (one kernel family only)"; exit 77
  fi
fi
for c in "${pair[@]}"; do
  got=$(core_of "$c")
  if [[ -z "$got" ]]; then
    echo "SKIP: OpenBLAS does not report its core type (not a DYNAMIC_ARCH OpenBLAS?)"; exit 77
  fi
  if [[ "$got" != "$c" ]]; then
    echo "SKIP: OpenBLAS runs $got when asked for $c"; exit 77
  fi
done
echo "core types: ${pair[0]} and ${pair[1]}"

fail=0
for c in "${pair[@]}"; do
  mkdir -p "$work/$c"
  echo "== OPENBLAS_CORETYPE=$c: the blas cases against tests/golden/expected"
  OPENBLAS_CORETYPE=$c bash "$here/run.sh" "$bin" "$src" --blas-only --keep "$work/$c" ||
    fail=$((fail + 1))
done

echo "== ${pair[0]} against ${pair[1]}"
n=0; same=0; differ=()
while IFS='|' read -r name _ tol; do
  name=${name//[[:space:]]/}; [[ -z "$name" || "$name" == \#* ]] && continue
  read -r -a rules <<<"${tol:-}"
  [[ ${#rules[@]} -gt 0 && ${rules[0]} == blas ]] || continue
  rules=("${rules[@]:1}")
  n=$((n + 1))
  a="$work/${pair[0]}/$name.golden"; b="$work/${pair[1]}/$name.golden"
  if [[ ! -f "$a" || ! -f "$b" ]]; then
    echo "FAIL $name: no output under both core types"; fail=$((fail + 1)); continue
  fi
  if cmp -s "$a" "$b"; then
    same=$((same + 1))
  elif out=$(python3 "$here/compare.py" "$a" "$b" "${rules[@]}"); then
    differ+=("$name")
  else
    echo "FAIL $name: ${pair[0]} and ${pair[1]} differ beyond the case's rules"
    printf '%s\n' "${out//recorded/${pair[0]}}"
    fail=$((fail + 1))
  fi
done <"$here/cases.txt"
echo "$n blas cases: $same bit for bit alike, ${#differ[@]} within their rules (${differ[*]:-none})"
[[ $n -gt 0 && $fail -eq 0 ]]
