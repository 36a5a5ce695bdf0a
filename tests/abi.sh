#!/usr/bin/env bash
# The shared library's interface (docs/architecture.md, "A narrow ABI"): every symbol
# libhdpsgd.so exports is named hdp_* and declared in a public header (the version script
# that cmake/hdpsgdExports.cmake writes from include/hdpsgd/*.h), the library starts no
# process (no posix_spawn, fork, exec*, system, popen: figures are the program's) and reads no
# environment variable (the program turns HDPSGD_SIMD, OMP_STACKSIZE, ... into options).
# Usage: abi.sh LIBHDPSGD.so VERSION_SCRIPT
set -u
lib=$1 map=$2
pass=0 fail=0
check() { local name=$1; shift; if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi; }
command -v nm >/dev/null || { echo "skipped: no nm"; exit 77; }
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBVWi]$/ {sub(/@.*/, "", $3); print $3}' | sort -u)
check "the library exports functions" test -n "$exported"
bad=$(grep -v '^hdp_' <<<"$exported")
check "every exported symbol is named hdp_* ${bad:+(not: $(echo $bad | head -c 300))}" test -z "$bad"
declared=$(sed -n 's/^ *\(hdp_[A-Za-z0-9_]*\);$/\1/p' "$map" | sort -u)
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
check "every exported symbol is declared in a public header ${extra:+(not: $(echo $extra | head -c 300))}" test -z "$extra"
spawn=$(nm -D -u "$lib" | grep -oE ' (posix_spawnp?|fork|vfork|execv[pe]*|execl[pe]*|system|popen)(@|$)' | sort -u)
check "the library starts no process ${spawn:+(references:$spawn)}" test -z "$spawn"
env=$(nm -D -u "$lib" | grep -oE ' (getenv|secure_getenv)(@|$)' | sort -u)
check "the library reads no environment variable ${env:+(references:$env)} (the program sets its options)" test -z "$env"
echo "$pass passed, $fail failed ($(wc -l <<<"$exported") symbols exported)"
((fail == 0))
