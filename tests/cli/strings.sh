#!/usr/bin/env bash
# Long and strange strings (issue 29, items 3 and 4): nothing is cut silently (long --set
# values, relative paths in a model file in a deep folder, sweep -o DIR, long messages), a
# file name written back into a model or a CSV header reads back as itself (or is refused at
# input, exit 2, naming the key and the byte), and user text in messages shows control
# characters as \xNN (never a raw terminal escape).
set -u
bin=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
# refused FRAGMENT COMMAND...: exit 2, the message has FRAGMENT, no raw ESC, no file out.*
refused() {
  local frag=$1; shift
  rm -f out.csv
  "$@" >out 2>err; local st=$?
  [[ $st -eq 2 ]] && grep -qF -- "$frag" err && ! grep -q $'\033' err && [[ ! -e out.csv ]] ||
    { echo "    exit $st:"; cut -c1-300 err | head -3; return 1; }
}
xs() { head -c "$1" /dev/zero | tr '\0' x; }   # xs N: N x's

# ---- item 3: long values are refused with their length, never cut ----
printf '1\n0.5\n0.25\n' > spec.txt
for n in 1100 5000; do
  check "--set data.spectrum_file of $n bytes: refused with its length" \
    refused "the file name is $n bytes long: at most 1023 are accepted" \
    "$bin" ode --set data.spectrum=file --set "data.spectrum_file=$(xs "$n")" -o out.csv
done
# a file whose 1023-byte name differs from a 1100-byte name only after byte 1023: the
# long name is refused, not read as the short one
short=$(xs 200)/$(xs 200)/$(xs 200)/$(xs 200)/$(xs 200)/$(xs 14).txt  # 1023 bytes
mkdir -p "$(dirname "$short")" && cp spec.txt "$short"
check "a 1023-byte spectrum file name is read" \
  bash -c "'$bin' ode --set data.spectrum=file --set 'data.spectrum_file=$short' -o out.csv >/dev/null 2>&1 && grep -qF '$short' out.csv"
check "the same name with 77 bytes more: refused, not cut to the first" \
  refused "the file name is 1100 bytes long" \
  "$bin" ode --set data.spectrum=file --set "data.spectrum_file=${short}$(xs 77)" -o out.csv

# a relative name in a model file deep in folders: resolved against the folder, checked whole
deep=$(xs 250)/$(xs 250)/$(xs 250)/$(xs 250)
mkdir -p "$deep"
printf '[data]\nspectrum = file\nspectrum_file = %s.txt\n' "$(xs 100)" > "$deep/m.ini"
cp spec.txt "$deep/$(xs 100).txt"
check "a relative path over 1023 bytes with its model's folder: refused" \
  refused "(with the model file's folder before it): at most 1023 are accepted" \
  "$bin" ode "$deep/m.ini" -o out.csv
printf '[data]\nspectrum = file\nspectrum_file = s.txt\n' > "$deep/ok.ini"
cp spec.txt "$deep/s.txt"
check "a relative path under 1023 bytes with its folder: read" \
  bash -c "'$bin' ode '$deep/ok.ini' -o out.csv >/dev/null 2>&1 && grep -qF '$deep/s.txt' out.csv"
check "a model file name over 1023 bytes: refused with its length" \
  refused "the model file's name is" "$bin" ode "$deep/$(xs 40)/../ok.ini" -o out.csv

# sweep -o DIR: a long folder is used whole, a too long one refused before anything is written
cat > sw.ini <<EOF
[sweep]
model = $src/models/default.ini
commands = ode
[axes]
clip.c = 0.3, 1
[set]
data.d = 40
EOF
long=$(xs 200)/$(xs 200)/$(xs 200)/$(xs 200)/$(xs 200)/sweep-out
check "sweep -o DIR of ${#long} characters: results in DIR, not its parent" \
  bash -c "'$bin' sweep sw.ini -o '$long' >/dev/null 2>&1 && [[ -s '$long/results.csv' && -d '$long/points' ]] && [[ ! -e '$(dirname "$long")/results.csv' ]]"
toolong=$long/$(xs 200)
check "sweep -o DIR of ${#toolong} characters: refused, nothing created" \
  bash -c "'$bin' sweep sw.ini -o '$toolong' >out 2>err; [[ \$? -eq 2 ]] && grep -qF 'at most 1100 are accepted' err && [[ ! -e '$toolong' ]]"

# a message longer than the error record keeps its start and its reason, saying what was left out
check "an over-long message: start and reason kept, the cut said" \
  bash -c "'$bin' ode --set 'data.$(xs 20000)=1' -o out.csv >out 2>err; [[ \$? -eq 2 ]] && grep -qF 'bytes of this message left out' err && grep -qF 'accepted keys:' err && grep -qF 'unknown key' err"

# option values read whole: a --seed with 120 leading zeros is seed 7 (it was cut at 100
# characters), a --depths list of 600 characters is two depths (it was cut at 511)
zeros=$(head -c 120 /dev/zero | tr '\0' 0)
check "--seed of 120 zeros then 7 (127 characters): seed 7" \
  bash -c "'$bin' sim --set data.d=40 --runs 2 --seed ${zeros}7 -o /dev/null --json - 2>/dev/null | grep -q '^  \"seed\": 7,'"
zeros=$(head -c 600 /dev/zero | tr '\0' 0)
check "kl --depths 2,(600 zeros)3 (604 characters): depths 2 and 3" \
  bash -c "'$bin' kl run --vs depth --depths 2,${zeros}3 --set kl.width=8 --set kl.epochs=2 --set kl.runs=2 --set kl.inits=1 -o k.csv >/dev/null 2>&1 && grep -v '^#' k.csv | cut -d, -f1 | tr '\n' ' ' | grep -qx 'depth 2 3 '"
check "schedule --family with 282 characters: its last family (pl) is used, not cut off" \
  bash -c "'$bin' schedule --set data.d=40 --optimize --family $(printf 'output,%.0s' $(seq 40))pl --knots 3 -o fam.csv --json fam.json >/dev/null 2>&1 && grep -q '\"pl_final_risk\"' fam.json"
check "ode.bins = 'auto x': refused (only the word auto)" \
  refused "[ode] bins = 'auto x' is not a number" "$bin" ode --set 'ode.bins=auto x' -o out.csv

# ---- item 4: names that read back ----
check "' ;' in a file name: refused (an inline comment when read back)" \
  refused "has ';' after a blank" "$bin" ode --set data.spectrum=file --set 'data.spectrum_file=a ;b.txt' -o out.csv
check "';' first: refused" \
  refused "';' first" "$bin" ode --set data.spectrum=file --set 'data.spectrum_file=;b.txt' -o out.csv
check "a trailing blank: refused" \
  refused "a blank last" "$bin" ode --set data.spectrum=file --set 'data.spectrum_file=spec.txt ' -o out.csv
check "a leading blank: refused" \
  refused "a blank first" "$bin" ode --set data.spectrum=file --set 'data.spectrum_file= spec.txt' -o out.csv
check "a newline: refused, shown as \\x0a" \
  refused 'spec\x0a.txt' "$bin" ode --set data.spectrum=file --set $'data.spectrum_file=spec\n.txt' -o out.csv
check "a model file named with a newline: refused" \
  refused "the model file's name has a control character (byte 0x0a" "$bin" ode $'m\nx.ini' -o out.csv
mkdir -p 'w ;x' && cp spec.txt 'w ;x/s.txt'
check "a relative name under a working directory with ' ;': refused" \
  bash -c "cd 'w ;x' && '$bin' ode --set data.spectrum=file --set data.spectrum_file=s.txt -o out.csv >out 2>err; [[ \$? -eq 2 ]] && grep -qF 'working directory' err"
# names that are odd but read back: config -> model -> config is identical, the same file is read
odd=$(printf 'a;b #c=d:e\xe9.txt')
cp spec.txt "$odd"
"$bin" config --set data.spectrum=file --set "data.spectrum_file=$odd" > c1.ini 2>err
"$bin" config c1.ini > c2.ini 2>>err
check "odd but legal name (';' '#' '=' ':' Latin-1): config reads back identical" \
  bash -c "[[ -s c1.ini ]] && cmp -s c1.ini c2.ini && grep -qF '$odd' c1.ini"
"$bin" ode --set data.spectrum=file --set "data.spectrum_file=$odd" -o h1.csv >/dev/null 2>&1
sed -n 's/^# //p' h1.csv > h.ini
"$bin" ode h.ini -o h2.csv >/dev/null 2>&1
check "odd but legal name: the CSV header is a model that reads the same file" \
  bash -c "[[ -s h2.csv ]] && cmp -s <(grep -v '^#' h1.csv) <(grep -v '^#' h2.csv) && grep -qF '$odd' h2.csv"

# a file name too long for a model file's line (198): config refuses rather than write a
# model that does not read back; under a working directory over 1023 bytes a relative name is
# still written absolute (getcwd of any length)
check "config with a 1023-byte file name: refused, nothing written" \
  bash -c "'$bin' config --set data.spectrum=file --set 'data.spectrum_file=$short' -o c.ini >out 2>err; [[ \$? -eq 2 ]] && grep -qF 'would not read back' err && [[ ! -e c.ini ]]"
check "a relative name under a 1200-byte working directory: written absolute" \
  bash -c "cd '$deep' && '$bin' ode --set data.spectrum=file --set data.spectrum_file=s.txt -o '$work/abs.csv' >/dev/null 2>&1 && grep -qxF '# spectrum_file = $work/$deep/s.txt' '$work/abs.csv'"

# ---- item 4: user text in messages: control characters made visible ----
esc=$'\033'
printf '[data]\nspectrum = pow%s[31mer\n' "$esc" > esc.ini
check "an escape sequence in a model value: shown as \\x1b" \
  refused 'pow\x1b[31mer' "$bin" ode esc.ini -o out.csv
check "an escape sequence in a --set key: shown as \\x1b" \
  refused 'd\x1b[2J' "$bin" ode --set "data.d${esc}[2J=3" -o out.csv
check "an escape sequence in an output path: shown as \\x1b" \
  refused 'nodir\x1b[2J' "$bin" ode -o "nodir${esc}[2J/x.csv"
check "an unknown command with a C1 control and a Latin-1 byte: shown as \\xNN" \
  bash -c "'$bin' \$'no\\xc2\\x9bpe\\xe9' >out 2>err; [[ \$? -eq 2 ]] && grep -qF 'no\\xc2\\x9bpe\\xe9' err"
check "a missing model file named with an escape: shown as \\x1b" \
  refused 'nofile\x1b[31m.ini' "$bin" ode "nofile${esc}[31m.ini" -o out.csv
# standard output on a terminal: the names of the files written (validate's "figure: NAME",
# schedule's "table: NAME") were printed raw there; to a pipe or file the bytes stay as they are
if command -v script >/dev/null 2>&1; then
  design=(schedule --optimize --family output --set data.d=20 --set data.spectrum=isotropic)
  script -qc "'$bin' ${design[*]} -o 'e${esc}[31m.tab' 2>/dev/null" /dev/null >tty.out 2>&1
  check "on a terminal, standard output shows an escape in a name as \\x1b" \
    bash -c "grep -qF 'table: e\\x1b[31m.tab' tty.out && ! grep -q \$'\\033' tty.out"
  "$bin" "${design[@]}" -o "p${esc}[31m.tab" 2>/dev/null >pipe.out
  check "to a pipe, standard output is left byte for byte" grep -qF "table: p${esc}[31m.tab" pipe.out
else
  echo "skip the terminal check: script (util-linux) not installed"
fi

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
