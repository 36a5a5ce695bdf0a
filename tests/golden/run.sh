#!/usr/bin/env bash
# Golden outputs: run every case of cases.txt with fixed seeds and compare its CSV data rows
# and JSON values with tests/golden/expected/, value for value. What is compared:
#   - CSV (every *.csv below the case's folder, sweeps' point folders included): every line that does not start with '#' (the '#' header holds the version and
#     the model, whose format may change without any result changing), less columns of
#     timings (*seconds*);
#   - JSON (out.json, when the case writes one): every number, string and boolean, flattened to key paths (nested objects as
#     a.b, arrays and the older name_0, name_1 form both as name[i]), except timings
#     (*seconds*, *per_second*), the version, thread counts and file names.
# How (tests/golden/compare.py): every value byte for byte, except in the cases whose third
# field in cases.txt is `blas RULE...`: their values pass through OpenBLAS (and GSL's
# optimisers on top of it), which picks its kernels at run time from the CPU (AVX-512,
# AVX2, SSE: other summation orders and FMA), so the last digits depend on the machine. A
# RULE gives a column or key a tolerance derived from the computation: 2 N u kappa (N the
# inner-product lengths along the value's chain of products, u = 2^-53, kappa the
# amplification of the statistic computed from them: 1 for means and risks, |mean|/sd for
# standard errors, kappa(Gram) for the min-norm solution; see cases.txt), plus one unit of
# the last printed digit; a value that is zero in exact arithmetic gets an absolute bound.
# Every value a RULE does not name, and every value of the other cases, is compared bit for
# bit (their computation is fixed: our own loops, CVODE, the seeded generators). The test
# golden_coretypes (coretypes.sh) runs the `blas` cases under two OpenBLAS core types and
# checks that they agree with each other and with the record within these rules.
# glibc's libm also dispatches at run time: on a CPU with FMA and AVX2 it runs FMA variants of
# exp, log, pow, sin, cos, tan, atan, expm1, log1p..., whose last bits differ from the
# baseline (SSE2) variants a CPU without FMA runs (e.g. ode with ode.bins = auto, sde,
# validate, the schedule search then differ in the last digit). The cases run with those
# variants masked (GLIBC_TUNABLES glibc.cpu.hwcaps, in the spellings of glibc before and after
# 2.33; unknown names are ignored), so that libm computes the same bits on every x86-64 CPU
# and the comparisons above stay bit for bit. OpenBLAS and our own SIMD kernels (HDPSGD_SIMD)
# detect the CPU themselves (cpuid): the mask does not change their choice.
# Usage: run.sh HDPSGD SRC_DIR [--record] [--blas-only] [--keep DIR]
#   --blas-only: only the `blas` cases; --keep DIR: keep each case's normalised output as
#   DIR/NAME.golden (for coretypes.sh).
set -uo pipefail
bin=$1; src=$2; shift 2
mode=check; only_blas=0; keep=
while [[ $# -gt 0 ]]; do
  case $1 in
    --record) mode=--record ;;
    --blas-only) only_blas=1 ;;
    --keep) keep=$2; shift ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
hwcaps=-FMA,-FMA4,-AVX2,-AVX,-FMA_Usable,-FMA4_Usable,-AVX2_Usable,-AVX_Usable
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.cpu.hwcaps=$hwcaps"
exp="$src/tests/golden/expected"
cmp_py="$src/tests/golden/compare.py"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
norm_json() {
  python3 - "$1" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
out = {}
def walk(p, v):
    if isinstance(v, dict):
        for k, x in v.items(): walk(f"{p}.{k}" if p else k, x)
    elif isinstance(v, list):
        for i, x in enumerate(v): walk(f"{p}[{i}]", x)
    else:
        m = re.fullmatch(r"(.*)_(\d+)", p)
        if m: p = f"{m.group(1)}[{m.group(2)}]"
        out[p] = v
walk("", d)
skip = re.compile(r"(seconds|per_second|^version$|^threads$|^model$|^model_file$|^model\.|file$)")
for k in sorted(out):
    if not skip.search(k): print(f"{k} = {json.dumps(out[k])}")
PY
}
norm_csv() {   # data rows without the columns that hold timings
  python3 - "$1" <<'PY'
import re, sys
rows = [l.rstrip("\n") for l in open(sys.argv[1]) if not l.startswith("#")]
if not rows: sys.exit(0)
head = rows[0].split(",")
keep = [i for i, h in enumerate(head) if not re.search(r"seconds", h)]
for r in rows:
    f = r.split(",")
    print(",".join(f[i] for i in keep if i < len(f)))
PY
}
fail=0; n=0
while IFS='|' read -r name args tol; do
  name=${name//[[:space:]]/}; [[ -z "$name" || "$name" == \#* ]] && continue
  read -r -a rules <<<"${tol:-}"
  blas=0; [[ ${#rules[@]} -gt 0 && ${rules[0]} == blas ]] && { blas=1; rules=("${rules[@]:1}"); }
  [[ $only_blas -eq 1 && $blas -eq 0 ]] && continue
  n=$((n + 1))
  dir="$work/$name"; mkdir -p "$dir"
  read -r -a argv <<<"${args//@DIR/$dir}"
  (cd "$src" && "$bin" "${argv[@]}" >"$work/$name.stdout" 2>"$work/$name.stderr")
  st=$?
  if [[ $st -ne 0 && $st -ne 1 ]]; then
    echo "FAIL $name: exit $st"; sed 's/^/    /' "$work/$name.stderr" | head -5; fail=$((fail + 1)); continue
  fi
  { while IFS= read -r f; do echo "---- ${f#"$dir"/}"; norm_csv "$f"; done < <(find "$dir" -name '*.csv' -type f | LC_ALL=C sort)
    if [[ -f "$dir/out.json" ]]; then echo "---- json"; norm_json "$dir/out.json"; fi; } >"$work/$name.golden"
  [[ -n "$keep" ]] && cp "$work/$name.golden" "$keep/$name.golden"
  if [[ $mode == --record ]]; then
    mkdir -p "$exp"; cp "$work/$name.golden" "$exp/$name.golden"; echo "recorded $name"
  elif cmp -s "$exp/$name.golden" "$work/$name.golden"; then
    echo "ok   $name"
  elif [[ ! -f "$exp/$name.golden" ]]; then
    echo "FAIL $name: no tests/golden/expected/$name.golden"; fail=$((fail + 1))
  elif out=$(python3 "$cmp_py" "$exp/$name.golden" "$work/$name.golden" "${rules[@]}"); then
    echo "ok   $name (within its BLAS tolerance, not bit for bit)"
  else
    echo "FAIL $name: differs from tests/golden/expected/$name.golden"
    printf '%s\n' "$out"
    fail=$((fail + 1))
  fi
done <"$src/tests/golden/cases.txt"
echo "$((n - fail)) passed, $fail failed"
[[ $fail -eq 0 ]]
