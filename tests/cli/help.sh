#!/usr/bin/env bash
# The help of every command lists exactly what the command accepts: for each command of
# `hdpsgd --help`, every option its help lists is accepted (parsed, with --help last so that
# nothing runs), every option listed by another command's help and not by its own is refused
# (exit 2), --set and positional arguments only where the help lists them; `hdpsgd help CMD`
# and `hdpsgd CMD --help` agree; -V is --version; `hdpsgd help help` works.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { local name=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name"; fi; }

commands=$("$bin" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}')
check "the command list is not empty" test -n "$commands"
check "help is in the command list" grep -qx help <<<"$commands"

# the options a help lists: "NAME VALUE?" per line (VALUE 1 when it takes a value), short too
listed() { # listed CMD
  "$bin" help "$1" | awk '
    /^(Options|Figure options):/ { on = 1; next }
    /^[A-Z]/ { on = 0 }
    on && /^  -/ {
      line = substr($0, 3, 29); sub(/ +$/, "", line)
      n = split(line, w, /,? /)
      takes = 0
      for (i = 1; i <= n; i++) if (w[i] !~ /^-/) takes = 1
      for (i = 1; i <= n; i++) if (w[i] ~ /^-/) print w[i], takes
    }'
}

: >"$work/universe"
for c in $commands; do
  listed "$c" >"$work/$c.opts"
  cat "$work/$c.opts" >>"$work/universe"
done
echo "--no-such-option 0" >>"$work/universe"
sort -u "$work/universe" -o "$work/universe"
check "some commands list options" test "$(wc -l <"$work/universe")" -gt 20

for c in $commands; do
  "$bin" help "$c" >"$work/help.out" 2>&1
  check "help $c exits 0" test $? -eq 0
  "$bin" "$c" --help >"$work/self.out" 2>&1
  check "$c --help exits 0" test $? -eq 0
  check "$c --help is hdpsgd help $c" cmp -s "$work/help.out" "$work/self.out"
  check "$c: usage line" grep -q "^Usage: hdpsgd $c" "$work/help.out"
  # every listed option is accepted
  while read -r opt takes; do
    [[ $opt == -h || $opt == --help ]] && continue
    if [[ $opt == --set ]]; then args=(--set data.d=3); elif ((takes)); then args=("$opt" 1); else args=("$opt"); fi
    "$bin" "$c" "${args[@]}" --help >/dev/null 2>"$work/err"
    check "$c accepts its listed option $opt" test $? -eq 0
  done <"$work/$c.opts"
  # every option it does not list is refused
  while read -r opt takes; do
    grep -q "^$opt " "$work/$c.opts" && continue
    if [[ $opt == --set ]]; then args=(--set data.d=3); elif ((takes)); then args=("$opt" 1); else args=("$opt"); fi
    "$bin" "$c" "${args[@]}" --help >/dev/null 2>"$work/err"
    rc=$?
    check "$c refuses $opt, which its help does not list (exit $rc)" test $rc -eq 2
  done <"$work/universe"
  # --set: listed or refused
  if ! grep -q '^--set ' "$work/$c.opts"; then
    "$bin" "$c" --set data.d=3 --help >/dev/null 2>&1
    check "$c refuses --set, which its help does not list" test $? -eq 2
  fi
  # positional arguments only when the help has an Arguments section
  if ! grep -q '^Arguments:' "$work/help.out"; then
    "$bin" "$c" something --help >/dev/null 2>&1
    check "$c refuses a positional argument (no Arguments in its help)" test $? -eq 2
  fi
done

# the model commands (keys and config too) list MODEL.ini and --set; plot, sweep and help do not
for c in ode sim validate schedule keys config; do
  check "help $c lists MODEL.ini" bash -c "'$bin' help $c | grep -q '^  MODEL.ini '"
done
for c in plot sweep help; do
  check "help $c does not list MODEL.ini or --set" bash -c "! '$bin' help $c | grep -q -e '^  MODEL.ini ' -e '^  --set '"
done
# every output option's help says what '-' does
for c in $commands; do
  "$bin" help "$c" | grep -E '^  (-., )?--(output|json|data|figure) ' | grep -v "'-'" >"$work/nodash"
  check "$c: every output option's help says what '-' does" test ! -s "$work/nodash"
done

check "-V is --version" test "$("$bin" -V)" = "$("$bin" --version)"
# the revision recorded is the one built, not the one of the configure step (a rebuild after a
# commit writes the version again: cmake/hdpsgdGitVersion.cmake)
src=${2:-}
if [ -n "$src" ] && rev=$(git -C "$src" describe --always 2>/dev/null); then
  check "--version records the revision built ($rev)" \
    bash -c '"$1" --version | grep -qF "(git $2"' _ "$bin" "$rev"
fi
"$bin" help help | grep -q '^Usage: hdpsgd help \[COMMAND\]'
check "hdpsgd help help" test $? -eq 0
"$bin" help no-such-command >/dev/null 2>&1
check "help of an unknown command: exit 2" test $? -eq 2
# the results reference (help_results.c; tests/cli/json_keys.sh checks it against the tables)
check "help results lists the tables" bash -c "'$bin' help results | grep -q '^validate_side: '"
check "help results TABLE: that table" bash -c "'$bin' help results ode | head -1 | grep -q '^ode: '"
"$bin" help results no_such_table >"$work/out" 2>&1
check "help results of an unknown table: exit 2" test $? -eq 2
check "... naming the tables" grep -q "the tables are:" "$work/out"
"$bin" help results ode mc >/dev/null 2>&1
check "help results with two tables: exit 2" test $? -eq 2
"$bin" help ode sim >/dev/null 2>&1
check "help with two commands: exit 2" test $? -eq 2
# every command with --json lists its keys, generated from the result tables
for c in $commands; do
  "$bin" help "$c" | grep -q -- '--json' || continue
  check "help $c lists its JSON keys" bash -c "'$bin' help $c | grep -q '^JSON keys (--json)'"
done

# did you mean: commands and options
dym() { # dym NAME EXPECTED ARGS...
  local name=$1 want=$2; shift 2
  "$bin" "$@" >/dev/null 2>"$tmp_dym"; local rc=$?
  check "$name: exit 2" test $rc -eq 2
  check "$name: suggests $want" grep -qF "(did you mean $want?)" "$tmp_dym"
}
tmp_dym=$work/dym.err
dym "misspelt command" validate validat
dym "misspelt command in help" schedule help schedul
dym "command prefix" accountant accou
dym "misspelt option" --figure validate --figur x.png
dym "misspelt figure option" --label plot a.csv --lable x -o x.png
dym "misspelt option with a value" --sample-rate accountant --sample-rat=0.1
"$bin" xyzzy >/dev/null 2>"$tmp_dym"
check "nothing close: no suggestion" bash -c "! grep -q 'did you mean' '$tmp_dym'"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
