#!/usr/bin/env bash
# A command's outputs, figure included, are one set (issue 29, item 5): all written whole, or
# exit 3 and none changed. Deterministic failures of the figure: a file-size limit (ulimit -f)
# the data fit under and the PNG does not, and fake gnuplots (HDPSGD_GNUPLOT) that exit 0
# after writing a cut PNG or nothing, exit 1 with a message, die by SIGXFSZ, or send SIGTERM
# to hdpsgd while it waits for them. Each time: the exit status, a message, the previous
# data, JSON and figure byte for byte, no temporary file beside them, no private folder left
# in $TMPDIR. Skipped (77) without gnuplot.
set -u
bin=$(readlink -f "$1")
if ! command -v gnuplot >/dev/null 2>&1 && [[ -z ${HDPSGD_GNUPLOT:-} ]]; then
  echo "skip: gnuplot not installed"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp" "$work/out"
export TMPDIR=$work/tmp
cd "$work/out" || exit 1
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
small=(--set data.d=30 --set data.gamma=0.2 --set ode.points=11 --runs 8 --no-sde)
# the previous outputs: validate's figure, data and JSON, plot's figure
"$bin" validate "${small[@]}" --figure v.png --json v.json >/dev/null 2>&1
"$bin" plot v.ode.csv -o p.png >/dev/null 2>&1
check "first outputs written" test -s v.png -a -s v.ode.csv -a -s v.sim.csv -a -s v.json -a -s p.png
md5sum v.png v.ode.csv v.sim.csv v.json p.png > "$work/before"
# unchanged NAME RC WANT: exit WANT, a message, every previous output as it was, nothing else
unchanged() {
  local name=$1 rc=$2 want=$3
  check "$name: exit $want (got $rc)" test "$rc" -eq "$want"
  [[ $want -eq 3 ]] && check "$name: a message" grep -q 'error' "$work/err"
  check "$name: previous outputs unchanged" md5sum --quiet -c "$work/before"
  check "$name: no temporary file beside them" test -z "$(ls -A | grep -v -x -e v.png -e v.ode.csv -e v.sim.csv -e v.json -e p.png)"
  check "$name: no private folder left" test -z "$(ls -A "$work/tmp")"
}

# ---- a file-size limit: the data fit, the figure does not (gnuplot dies by SIGXFSZ) ----
(ulimit -f 16; "$bin" validate "${small[@]}" --set sim.seed=2 --figure v.png --json v.json \
  >/dev/null 2>"$work/err")
unchanged "validate under ulimit -f 16" $? 3
check "validate under ulimit -f 16: names the limit" grep -q 'file-size limit' "$work/err"
(ulimit -f 16; "$bin" plot v.sim.csv v.ode.csv -o p.png >/dev/null 2>"$work/err")
unchanged "plot under ulimit -f 16" $? 3

# ---- fake gnuplots ----
fake() { # fake NAME BODY: a gnuplot that runs BODY; OUT is the last output its script names
  cat > "$work/$1" <<EOF
#!/usr/bin/env bash
OUT=\$(grep "^set output '" "\$1" | tail -n 1 | sed "s/^set output '\\(.*\\)'\$/\\1/")
$2
EOF
  chmod +x "$work/$1"
}
fake cut 'printf "\211PNG\r\n\032\n\0\0\0\rIHDR" > "$OUT"; exit 0'
fake nothing 'exit 0'
fake fails 'echo "line 12: all went wrong" >&2; exit 1'
fake xfsz 'printf "\211PNG" > "$OUT"; kill -XFSZ $$'
fake signal 'echo $$ > "'"$work"'/fake.pid"; printf "\211PNG" > "$OUT"; kill -TERM $PPID; exec sleep 30'
for g in cut nothing fails xfsz; do
  HDPSGD_GNUPLOT=$work/$g "$bin" validate "${small[@]}" --set sim.seed=3 --figure v.png \
    --json v.json >/dev/null 2>"$work/err"
  unchanged "validate, gnuplot '$g'" $? 3
  HDPSGD_GNUPLOT=$work/$g "$bin" plot v.ode.csv -o p.png >/dev/null 2>"$work/err"
  unchanged "plot, gnuplot '$g'" $? 3
done
check "a cut PNG is named as such" bash -c "HDPSGD_GNUPLOT='$work/cut' '$bin' plot v.ode.csv -o p.png 2>&1 | grep -q 'cut short'"
check "gnuplot's message is shown" bash -c "HDPSGD_GNUPLOT='$work/fails' '$bin' plot v.ode.csv -o p.png 2>&1 | grep -q 'all went wrong'"
# SIGTERM while gnuplot draws: hdpsgd ends gnuplot, removes its files and dies by the signal
HDPSGD_GNUPLOT=$work/signal "$bin" validate "${small[@]}" --set sim.seed=4 --figure v.png \
  --json v.json >/dev/null 2>"$work/err"
unchanged "validate, SIGTERM while drawing" $? 143
HDPSGD_GNUPLOT=$work/signal "$bin" plot v.ode.csv -o p.png >/dev/null 2>"$work/err"
unchanged "plot, SIGTERM while drawing" $? 143
# the fake (now sleep 30) gets SIGTERM from hdpsgd's handler: gone within seconds, not 30
gone() { for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; return 1; }
check "gnuplot was ended with hdpsgd" gone "$(cat "$work/fake.pid")"

# ---- no gnuplot: exit 3 before anything runs, also for commands that draw unasked ----
mkdir "$work/none" && cd "$work/none" || exit 1
for c in "validate ${small[*]} --figure g.png" "nc --sweep flat --ps 10,100 --draws 20" \
         "sim-index --experiment align --set si.d=8 --set si.p=8 --set si.n=200 --set si.runs=4" \
         "rf-experiment P1 --set rf.d=4 --set rf.n=40 --set rf.p=80 --set rf.test_size=30 -o ."; do
  # shellcheck disable=SC2086
  HDPSGD_GNUPLOT=/nonexistent/gnuplot "$bin" $c >/dev/null 2>"$work/err"
  rc=$?
  check "no gnuplot, ${c%% *}: exit 3 (got $rc)" test $rc -eq 3
  check "no gnuplot, ${c%% *}: says so" grep -q 'gnuplot' "$work/err"
  check "no gnuplot, ${c%% *}: nothing written" test -z "$(ls -A)"
done
cd "$work/out" || exit 1

# ---- and when everything works, all are replaced together ----
"$bin" validate "${small[@]}" --set sim.seed=5 --figure v.png --json v.json >/dev/null 2>"$work/err"
check "validate: exit 0" test $? -eq 0
check "validate: the data and JSON replaced" bash -c "! md5sum -c '$work/before' 2>/dev/null | grep -E '^v\\.(sim\\.csv|json): OK'"
check "no private folder left" test -z "$(ls -A "$work/tmp")"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
