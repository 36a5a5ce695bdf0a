#!/usr/bin/env bash
# Golden outputs: run every case of cases.txt with fixed seeds and compare its CSV data rows
# and JSON values with tests/golden/expected/, value for value. What is compared:
#   - CSV (every *.csv below the case's folder, sweeps' point folders included): every line that does not start with '#' (the '#' header holds the version and
#     the model, whose format may change without any result changing), byte for byte,
#     less columns of timings (*seconds*);
#   - JSON (out.json, when the case writes one): every number, string and boolean, flattened to key paths (nested objects as
#     a.b, arrays and the older name_0, name_1 form both as name[i]), except timings
#     (*seconds*, *per_second*), the version, thread counts and file names.
# Usage: run.sh HDPSGD SRC_DIR [--record]   (cases: tests/golden/cases.txt)
set -uo pipefail
bin=$1; src=$2; mode=${3:-check}
exp="$src/tests/golden/expected"
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
while IFS='|' read -r name args; do
  name=${name//[[:space:]]/}; [[ -z "$name" || "$name" == \#* ]] && continue
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
  if [[ $mode == --record ]]; then
    mkdir -p "$exp"; cp "$work/$name.golden" "$exp/$name.golden"; echo "recorded $name"
  elif ! diff -q "$exp/$name.golden" "$work/$name.golden" >/dev/null 2>&1; then
    echo "FAIL $name: differs from tests/golden/expected/$name.golden"
    diff "$exp/$name.golden" "$work/$name.golden" | head -8 | sed 's/^/    /'
    fail=$((fail + 1))
  else
    echo "ok   $name"
  fi
done <"$src/tests/golden/cases.txt"
echo "$((n - fail)) passed, $fail failed"
[[ $fail -eq 0 ]]
