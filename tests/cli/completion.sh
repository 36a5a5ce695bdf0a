#!/usr/bin/env bash
# The generated bash completion (hdpsgd --completion bash) in a plain scripted bash with
# extglob off (bash --norc, no bash-completion package): commands, each command's options
# (the same as its help lists), model keys after --set, their values where they are a choice
# (bash splits `--set data.spectrum=` at '=', and a COMP_WORDBREAKS without '=' does not),
# file names for MODEL.ini, plot's CSVs and output options, folders for -o DIR.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi; }

"$bin" --completion bash >"$work/hdpsgd.bash"
check "--completion bash exits 0" test $? -eq 0
check "no extglob pattern in the script" bash -c "! grep -q -e '@(' -e '!(' -e 'extglob' <(grep -v '^#' '$work/hdpsgd.bash')"
bash --norc -c "shopt -u extglob; source '$work/hdpsgd.bash'" 2>"$work/err"
check "sources without error with extglob off" test $? -eq 0 -a ! -s "$work/err"

mkdir -p "$work/files/sub" && cd "$work/files" && touch a.ini b.csv c.png
# comp CWORD WORD...: the sorted completions, one per line, space-separated on one line
comp() { local cword=$1; shift
  local words="" w
  for w in "$@"; do words+=" $(printf '%q' "$w")"; done
  bash --norc -c "shopt -u extglob; source '$work/hdpsgd.bash'; COMP_WORDS=($words); COMP_CWORD=$cword; _hdpsgd; printf '%s\n' \"\${COMPREPLY[@]}\"" 2>&1 | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() { local name=$1 want=$2; shift 2
  local got; got=$(comp "$@")
  [[ $got == "$want" ]] || echo "     got '$got', want '$want'"
  check "$name" test "$got" = "$want"
}

expect "command" "validate" 1 hdpsgd val
expect "commands starting with s" "schedule sde sim sim-index sweep" 1 hdpsgd s
expect "help COMMAND or results" "rates results rf rf-experiment" 2 hdpsgd help r
expect "help results (the result tables)" "results" 2 hdpsgd help res
expect "-V and --version" "--version" 1 hdpsgd --vers
expect "--set clip.<Tab>" "clip.c= clip.feature_norm=" 3 hdpsgd ode --set clip.
expect "--set data.spec<Tab>" "data.spectrum= data.spectrum_alpha= data.spectrum_file=" 3 hdpsgd sim --set data.spec
expect "--set data.spectrum=<Tab> (split at =)" "file isotropic powerlaw twolevel" 4 hdpsgd ode --set data.spectrum =
expect "--set data.spectrum=iso<Tab> (split at =)" "isotropic" 5 hdpsgd ode --set data.spectrum = iso
expect "--set data.spectrum=<Tab> (one word)" "data.spectrum=file data.spectrum=isotropic data.spectrum=powerlaw data.spectrum=twolevel" 3 hdpsgd ode --set data.spectrum=
expect "--set schedule.kind=lin<Tab>" "linear-noise" 5 hdpsgd validate --set schedule.kind = lin
expect "--set ode.solver=<Tab>" "auto cvode dop853" 4 hdpsgd ode --set ode.solver =
expect "--set data.spectrum_file=<Tab>: files" "a.ini b.csv c.png sub" 4 hdpsgd ode --set data.spectrum_file =
expect "a numeric key: no value offered" "" 4 hdpsgd ode --set data.d =
expect "MODEL.ini: .ini files and folders" "a.ini sub" 2 hdpsgd ode ""
expect "MODEL.ini after --set k=v (split)" "a.ini sub" 6 hdpsgd ode --set data.d = 3 ""
expect "MODEL.ini after an option's value" "a.ini sub" 4 hdpsgd sim --runs 5 ""
expect "plot: CSV files and folders" "b.csv sub" 2 hdpsgd plot ""
expect "plot: more CSV files" "b.csv sub" 3 hdpsgd plot b.csv ""
expect "sweep: SWEEP.ini" "a.ini sub" 2 hdpsgd sweep ""
expect "-o FILE: every file" "a.ini b.csv c.png sub" 3 hdpsgd ode -o ""
expect "--json FILE: every file" "a.ini b.csv c.png sub" 3 hdpsgd validate --json ""
expect "--figure FIG: every file" "a.ini b.csv c.png sub" 3 hdpsgd validate --figure ""
expect "sweep -o DIR: folders" "sub" 3 hdpsgd sweep -o ""
expect "an option's value that is not a file: nothing" "" 3 hdpsgd sim --runs ""
expect "kl: the subcommand" "bound init run" 2 hdpsgd kl ""
expect "kl run MODEL.ini" "a.ini sub" 3 hdpsgd kl run ""
expect "rf-experiment: the experiment" "P1 P2 P3 P4" 2 hdpsgd rf-experiment ""
expect "keys: MODEL.ini" "a.ini sub" 2 hdpsgd keys ""
expect "config: MODEL.ini" "a.ini sub" 2 hdpsgd config ""
expect "validate --fi<Tab>" "--figure" 2 hdpsgd validate --fi
expect "plot does not offer --set" "" 2 hdpsgd plot --se
expect "ode offers --set" "--set" 2 hdpsgd ode --se

# every command's options: the long options its help lists (and --set where it lists it)
for c in $("$bin" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}'); do
  want=$("$bin" help "$c" | awk '/^(Options|Figure options):/ {on = 1; next} /^[A-Z]/ {on = 0}
      on && /^  -/ { line = substr($0, 3, 29); n = split(line, w, /,? /); for (i = 1; i <= n; i++) if (w[i] ~ /^--/) print w[i] }' | sort | tr '\n' ' ' | sed 's/ $//')
  got=$(comp 2 hdpsgd "$c" --)
  [[ $got == "$want" ]] || echo "     got '$got', want '$want'"
  check "$c: the completion offers the options of its help" test "$got" = "$want"
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
