#!/usr/bin/env bash
# Hostile strings on their way to a figure (issue 29, item 1): no text given to hdpsgd may
# reach gnuplot's parser as code. Payloads (backquotes, system(), $(), quotes of both kinds,
# newlines, @macros, non-UTF-8 bytes and terminal escapes, strings of 1 181 to 5 000 bytes,
# the 1 181-byte label ending in a double quote followed by a label of gnuplot commands) go
# through every string that can reach a figure: --label, --title, --xlabel, --ylabel and --y of plot, the first
# comment line of a CSV (a figure's title), a sweep's column names and cells, input file
# names, --figure names (validate's data files are named after it), validate --data
# prefixes, rf-experiment's -o folder, and --label of every command that draws. Each case
# must give the figure (exit 0, a whole PNG) or a clear refusal (exit 2), create no file
# PWNED (what the payloads try), and leave no private folder of gnuplot behind. Also
# --key top,,,left (refused, exit 2) and output paths of 3 000 to 4 000 characters.
# Skipped (77) without gnuplot.
set -u
bin=$(readlink -f "$1")
if ! command -v gnuplot >/dev/null 2>&1 && [[ -z ${HDPSGD_GNUPLOT:-} ]]; then
  echo "skip: gnuplot not installed"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp" "$work/run"
export TMPDIR=$work/tmp # the private folders of gnuplot go here: checked empty
cd "$work/run" || exit 1
pass=0 fail=0
check() { # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name"; fi
}
png() { [[ -s $1 && $(head -c 8 "$1" | od -An -c | tr -d ' ') == '211PNG\r\n032\n' ]]; }
# outcome NAME FIG RC: a whole figure with exit 0, or exit 2 with an error message; nothing
# ran; no private folder left
outcome() {
  local name=$1 fig=$2 rc=$3
  if [[ $rc -eq 0 ]]; then
    check "$name: exit 0 and a PNG" png "$fig"
  else
    check "$name: exit 2 (got $rc) with a message" \
      bash -c "[[ $rc -eq 2 ]] && grep -q 'error' '$work/err'"
  fi
  check "$name: nothing ran" test -z "$(find "$work" -name 'PWNED*' -print -quit)"
  check "$name: no private folder left" bash -c "[[ -z \$(ls -A '$work/tmp') ]]"
  rm -rf "$work"/run/PWNED* "$work"/tmp/*
}

long1181=$(printf 'a%.0s' $(seq 1180))'"'
long5000=$(printf 'b%.0s' $(seq 4980))'`touch PWNED`'
payloads=(
  '`touch PWNED`'
  "system('touch PWNED')"
  'x" . system("touch PWNED") . "'
  "x' . system('touch PWNED') . '"
  '$(touch PWNED)'
  '"; system "touch PWNED"; "'
  "'; system 'touch PWNED'; '"
  $'two\nlines `touch PWNED`'
  '@fig_user @title_text `touch PWNED`'
  $'\xff\xfe not UTF-8 \x1b[31m escape \x01'
  'back\slash \" \n `touch PWNED`'
  "$long1181"
  "$long5000"
)
# payloads that can be file names (no slash, under 200 bytes)
names=(
  '`touch PWNED`'
  "q'; system('touch PWNED'); '"
  'd"; system("touch PWNED"); "'
  '$(touch PWNED)'
  'space and @fig_user'
  $'nl\nx`touch PWNED`'
  $'\xff\xfe'
)

# ---- the inputs, from small runs ----
small=(--set data.d=30 --set data.gamma=0.2 --set ode.points=11)
"$bin" ode "${small[@]}" -o ode.csv 2>/dev/null
"$bin" sim "${small[@]}" --runs 8 -o sim.csv 2>/dev/null
"$bin" kl bound -o klb.csv >/dev/null 2>&1
cat > sw.ini <<'EOF'
[sweep]
commands = ode
[axes]
clip.c = 0.3, 1
privacy.rho = 0.5, 1
[set]
data.d = 30
ode.points = 5
EOF
"$bin" sweep sw.ini -o sw >/dev/null 2>&1
check "inputs made" test -s ode.csv -a -s sim.csv -a -s klb.csv -a -s sw/results.csv

# ---- plot: --label, --title, the CSV's comment title, a sweep's columns and cells ----
i=0
for p in "${payloads[@]}"; do
  i=$((i + 1))
  "$bin" plot ode.csv sim.csv -o "l$i.png" --label "$p" --label "; system 'touch PWNED'; #" \
    --title "$p" >/dev/null 2>"$work/err"
  outcome "plot --label/--title payload $i" "l$i.png" $?
  "$bin" plot ode.csv sim.csv -o "t$i.png" --title "$p" >/dev/null 2>"$work/err"
  outcome "plot --title payload $i" "t$i.png" $?
  "$bin" plot ode.csv sim.csv -o "x$i.png" --xlabel "$p" --ylabel "$p" >/dev/null 2>"$work/err"
  outcome "plot --xlabel/--ylabel payload $i" "x$i.png" $?
  { printf '# ; hdpsgd 0.1.0 kl bound: %s\n' "$p"; tail -n +2 klb.csv; } > "c$i.csv"
  "$bin" plot "c$i.csv" -o "c$i.png" >/dev/null 2>"$work/err"
  outcome "plot: CSV comment title payload $i" "c$i.png" $?
  [[ $p == *,* || $p == *$'\n'* ]] && continue # not one CSV field
  awk -F, -v p="$p" 'NR == 1 { $3 = p } NR > 1 { $2 = p } { print }' OFS=, sw/results.csv > "s$i.csv"
  "$bin" plot "s$i.csv" -o "s$i.png" --x d --by "$p" >/dev/null 2>"$work/err"
  outcome "plot: sweep column name and cells payload $i" "s$i.png" $?
  "$bin" plot "s$i.csv" -o "y$i.png" --x d --y ode_final_risk,"$p" >/dev/null 2>"$work/err"
  outcome "plot: several --y, one a payload $i" "y$i.png" $?
  "$bin" plot "s$i.csv" --heat --x clip.c --by "$p" --y ode_final_risk -o "h$i.png" \
    >/dev/null 2>"$work/err"
  outcome "plot --heat: sweep cells as tics payload $i" "h$i.png" $?
done
# the text arrives as it was given: the caption file (--no-title) holds the title gnuplot
# printed from its variable, byte for byte (short titles: a long one is broken into lines)
i=0
for p in '`touch PWNED`' "'; system 'touch PWNED'; '" "''" "'" 'a"b\"c\\n @fig_user $(x)' \
         $'two\nlines\twith a tab' "it's"; do
  i=$((i + 1))
  "$bin" plot ode.csv -o "rt$i.png" --no-title --title "$p" >/dev/null 2>"$work/err"
  outcome "plot --no-title round trip $i" "rt$i.png" $?
  check "plot --no-title round trip $i: the text unchanged" \
    test "$(cat "rt$i.caption.txt"; echo .)" == "$p"$'\n.'
done
# the attack without any backquote: a label cut by a fixed buffer before its closing quote
"$bin" plot ode.csv sim.csv -o cut.png --label "$long1181" --label "; system 'touch PWNED'; #" \
  >/dev/null 2>"$work/err"
outcome "plot: 1181-byte label then gnuplot commands" cut.png $?

# ---- input file names and figure names ----
i=0
for n in "${names[@]}"; do
  i=$((i + 1))
  cp ode.csv "$n.csv"
  "$bin" plot "$n.csv" sim.csv -o "f$i.png" >/dev/null 2>"$work/err"
  outcome "plot: input file name $i" "f$i.png" $?
  "$bin" plot "$n.csv" -o "$n.png" >/dev/null 2>"$work/err"
  outcome "plot: figure name $i" "$n.png" $?
  rm -f "$n.csv" "$n.png"
  "$bin" validate "${small[@]}" --runs 8 --no-sde --figure "$n.png" \
    >/dev/null 2>"$work/err"
  outcome "validate --figure name $i" "$n.png" $?
  "$bin" validate "${small[@]}" --runs 8 --no-sde --figure "v$i.png" --data "$n" \
    >/dev/null 2>"$work/err"
  outcome "validate --data prefix $i" "v$i.png" $?
  rm -f "$n".*
done

# ---- every other command that draws: --label and the figure's name ----
lab='x`touch PWNED`'"'"'; system("touch PWNED")'
fig='r`touch PWNED`'"'"'"x.png'
iso=(--set data.spectrum=isotropic --set data.d=50 --set privacy.rho=1)
"$bin" rates "${iso[@]}" --gammas 0.005:0.05:3 --families output,optimal --label "$lab" \
  --figure "$fig" >/dev/null 2>"$work/err"
outcome "rates" "$fig" $?
"$bin" schedule "${iso[@]}" --set data.gamma=0.05 --optimize --family optimal --label "$lab" \
  --figure "$fig" >/dev/null 2>"$work/err"
outcome "schedule" "$fig" $?
"$bin" kl bound --label "$lab" --figure "$fig" >/dev/null 2>"$work/err"
outcome "kl bound" "$fig" $?
klsmall=(--set kl.width=16 --set kl.depth=2 --set kl.d=4 --set kl.n=10 --set kl.epochs=6
         --set kl.inits=2 --set kl.runs=16 --schemes he)
"$bin" kl run "${klsmall[@]}" --label "$lab" --figure "$fig" >/dev/null 2>"$work/err"
outcome "kl run" "$fig" $?
"$bin" nc --sweep flat --ps 10,100 --draws 20 -o nc.csv --label "$lab" --figure "$fig" \
  >/dev/null 2>"$work/err"
outcome "nc --sweep" "$fig" $?
si=(--set si.d=8 --set si.p=8 --set si.n=200 --set si.test_size=100 --set si.runs=4)
"$bin" sim-index --experiment align "${si[@]}" -o si.csv --label "$lab" --figure "$fig" \
  >/dev/null 2>"$work/err"
outcome "sim-index --experiment" "$fig" $?
dir='rf`touch PWNED`'"'"'"'
mkdir "$dir"
"$bin" rf-experiment P1 --set rf.d=4 --set rf.n=40 --set rf.p=80 --set rf.test_size=30 \
  --label "$lab" -o "$dir" >/dev/null 2>"$work/err"
outcome "rf-experiment -o folder" "$dir/rf-p1.png" $?

# ---- --key: words of its vocabulary only ----
"$bin" plot ode.csv -o k.png --key 'top,,,left' >/dev/null 2>"$work/err"
check "--key top,,,left: exit 2" test $? -eq 2
check "--key top,,,left: names the option" grep -q -- '--key' "$work/err"
check "--key top,,,left: nothing written" test ! -e k.png
"$bin" plot ode.csv -o k.png --key 'top, left' >/dev/null 2>"$work/err"
outcome "--key 'top, left'" k.png $?
"$bin" plot ode.csv -o k.png --key 'top; system("touch PWNED")' >/dev/null 2>"$work/err"
check "--key with a command: exit 2" test $? -eq 2

# ---- output paths of 3 000 to 4 000 characters (HDP_OUT_PATH_MAX is 4 000) ----
for len in 3000 3990; do
  d=$work/run
  while (( ${#d} < len - 220 )); do d=$d/$(printf 'd%.0s' $(seq 200)); done
  mkdir -p "$d"
  out=$d/$(printf 'f%.0s' $(seq $((len - ${#d} - 5)))).png
  "$bin" plot ode.csv -o "$out" >/dev/null 2>"$work/err"
  outcome "plot -o a path of ${#out} characters" "$out" $?
  "$bin" validate "${small[@]}" --runs 8 --no-sde --figure "$out" >/dev/null 2>"$work/err"
  outcome "validate --figure a path of ${#out} characters" "$out" $?
done

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
