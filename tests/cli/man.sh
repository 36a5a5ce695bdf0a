#!/usr/bin/env bash
# The man page (hdpsgd --man) formats without a single groff warning at three line lengths,
# no text runs into a CSV header, and it has EXAMPLES, FILES and ENVIRONMENT sections, the
# last naming every environment variable the sources read (getenv). Needs groff (Debian:
# groff-base, in scripts/install-deps.sh); skipped (77) without it.
set -u
bin=$1
src=$2
if ! command -v groff >/dev/null 2>&1; then
  echo "skip: groff is not installed (apt-get install groff-base)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi; }

"$bin" --man >"$work/hdpsgd.1"
check "hdpsgd --man exits 0" test $? -eq 0
for ll in 60n 78n 120n; do
  groff -man -Tutf8 -ww -rLL=$ll -z "$work/hdpsgd.1" >"$work/warn.$ll" 2>&1
  [[ -s $work/warn.$ll ]] && head -5 "$work/warn.$ll"
  check "groff -man -ww: no warning (line length $ll)" test ! -s "$work/warn.$ll"
done
groff -man -Tutf8 -rLL=78n "$work/hdpsgd.1" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g' >"$work/man.txt"
for s in NAME SYNOPSIS DESCRIPTION COMMANDS 'MODEL KEYS' 'EXIT STATUS' ENVIRONMENT FILES EXAMPLES 'SEE ALSO'; do
  check "section $s" grep -qx "$s" "$work/man.txt"
done
# the CSV headers stay lines of their own
check "ode's CSV header is a line of its own" grep -qx ' *t,risk,risk_upper,risk_lower,mu_c,nu_c,eta,sigma2' "$work/man.txt"
check "sim's CSV header is a line of its own" grep -qx ' *t,mean,stderr,q10,q50,q90,clipped_fraction' "$work/man.txt"
# the JSON keys of a command, generated from its result tables (help_results.c)
check "validate's JSON keys" grep -q 'validate_side under sde_' "$work/man.txt"
# every environment variable the sources read is documented
vars=$(grep -rhoE 'getenv\("[A-Z_]+"\)' "$src/src" | sed 's/getenv("\(.*\)")/\1/' | sort -u)
check "the sources read environment variables" test -n "$vars"
env_section=$(sed -n '/^ENVIRONMENT$/,/^[A-Z]/p' "$work/man.txt")
for v in $vars OMP_NUM_THREADS; do
  check "ENVIRONMENT documents $v" grep -q "$v" <<<"$env_section"
done
# every command has its subsection, with --set only where the command takes it
for c in $("$bin" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}'); do
  check "COMMANDS has $c" grep -qx "   $c" "$work/man.txt"
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
