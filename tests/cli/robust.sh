#!/usr/bin/env bash
# Reliability of the command line (issue 8): output paths checked before anything runs
# (exit 2, nothing written), numerical failure reported with CVODE's flag and the time
# reached (exit 4, nothing written), interrupted commands (SIGINT, SIGTERM) and full
# disks leave no partial file and the previous file untouched, files that are not
# regular files are refused as inputs.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
# nothing but the files the test made itself: no output, no temporary file
only_old() { [[ $(cd "$work/o" && ls -A | tr '\n' ' ') == "old.csv " ]] && grep -qx old "$work/o/old.csv"; }
small=(--set data.d=40 --set data.gamma=0.2 --set ode.points=11)
mkdir "$work/o"
echo old > "$work/o/old.csv"

# ---- output paths: checked before anything runs, exit 2, the path named ----
for cmd in ode sim sde validate; do
  for opt in -o --json --figure --data; do
    case $cmd/$opt in ode/--figure|ode/--data|sim/--figure|sim/--data|sde/--figure|sde/--data|validate/-o) continue ;; esac
    # --runs 10^7: if the check came after the computation this would not finish
    extra=(); [[ $cmd != ode ]] && extra=(--runs 10000000)
    start=$SECONDS
    x=x.csv; [[ $opt == --figure ]] && x=x.png
    timeout 60 "$bin" $cmd "${small[@]}" "${extra[@]}" $opt /nonexistent-dir/$x >"$work/out" 2>"$work/err"
    rc=$?
    check "$cmd $opt /nonexistent-dir/$x: exit 2" test $rc -eq 2
    check "$cmd $opt: the message names the path and the directory" \
      grep -q "/nonexistent-dir/$x: the directory '/nonexistent-dir' does not exist" "$work/err"
    check "$cmd $opt: before any computation" test $((SECONDS - start)) -lt 10
  done
done
"$bin" ode "${small[@]}" -o "$work/o" 2>"$work/err"
check "ode -o DIRECTORY: exit 2" test $? -eq 2
check "ode -o DIRECTORY: message" grep -q 'is a directory' "$work/err"
"$bin" sim "${small[@]}" --runs 2 --json "$work/o/old.csv/x.json" 2>"$work/err"
check "sim --json under a regular file: exit 2" test $? -eq 2
check "sim --json under a regular file: message" grep -q "is not a directory" "$work/err"
"$bin" plot "$work/o/old.csv" -o /nonexistent-dir/p.png 2>"$work/err"
check "plot -o /nonexistent-dir/p.png: exit 2" test $? -eq 2
if [[ $(id -u) -ne 0 ]]; then
  mkdir "$work/ro" && chmod 555 "$work/ro"
  "$bin" ode "${small[@]}" -o "$work/ro/x.csv" 2>"$work/err"
  check "ode -o in a read-only directory: exit 2" test $? -eq 2
  check "ode -o in a read-only directory: message" grep -q 'cannot create files in the directory' "$work/err"
  chmod 755 "$work/ro"
elif unshare -rm true 2>/dev/null; then
  mkdir "$work/ro"
  unshare -rm bash -c "mount -t tmpfs -o ro,size=64k tmpfs '$work/ro' && '$bin' ode ${small[*]} -o '$work/ro/x.csv'" 2>"$work/err"
  check "ode -o on a read-only file system: exit 2" test $? -eq 2
  check "ode -o on a read-only file system: message" grep -q 'cannot create files in the directory' "$work/err"
else
  echo "skip read-only directory: running as root without user namespaces"
fi
"$bin" ode "${small[@]}" -o /dev/null 2>/dev/null
check "ode -o /dev/null (a device) still works" test $? -eq 0
"$bin" ode "${small[@]}" -o - >"$work/stdout" 2>/dev/null
check "ode -o - writes standard output" grep -q '^t,risk' "$work/stdout"

# ---- numerical failure: the CVODE flag, the time reached, exit 4, no file ----
for how in "--max-steps 5" "--set ode.max_steps=5"; do
  # shellcheck disable=SC2086
  "$bin" ode $how -o "$work/o/new.csv" --json "$work/o/new.json" 2>"$work/err"
  rc=$?
  check "ode $how: exit 4" test $rc -eq 4
  check "ode $how: CV_TOO_MUCH_WORK" grep -q 'CV_TOO_MUCH_WORK' "$work/err"
  check "ode $how: the time reached" grep -Eq 'at t = [0-9.e+-]+ \(next output t = ' "$work/err"
  check "ode $how: no output file" only_old
done
# past the stability limit the risk overflows: CVODE's repeated right-hand-side errors
"$bin" ode --set schedule.kind=constant --set privacy.rho=inf --set clip.c=inf \
  --set schedule.eta0=1000 -o "$work/o/new.csv" 2>"$work/err"
check "ode past the stability limit: exit 4" test $? -eq 4
check "ode past the stability limit: CV_REPTD_RHSFUNC_ERR at t =" grep -Eq 'CV_REPTD_RHSFUNC_ERR at t = [0-9.e+-]+ ' "$work/err"
check "ode past the stability limit: warned and explained" bash -c \
  "grep -q 'past the stability limit of docs/theory.md §3' '$work/err' && grep -q 'the risk overflowed' '$work/err'"
check "ode past the stability limit: no output file" only_old
"$bin" validate "${small[@]}" --runs 4 --max-steps 5 --json "$work/o/v.json" >/dev/null 2>"$work/err"
rc=$?
check "validate --max-steps 5: exit 4" test $rc -eq 4
check "validate --max-steps 5: CV_TOO_MUCH_WORK" grep -q CV_TOO_MUCH_WORK "$work/err"
check "validate --max-steps 5: no output file" only_old
"$bin" ode "${small[@]}" --rtol 1e-6 --atol 1e-10 --max-steps 1000 -o "$work/tol.csv" 2>/dev/null
check "ode --rtol --atol --max-steps: exit 0" test $? -eq 0
check "ode --rtol/--atol/--max-steps set the [ode] keys" bash -c \
  "grep -qx '# rtol = 1e-06' '$work/tol.csv' && grep -qx '# atol = 1e-10' '$work/tol.csv' && grep -qx '# max_steps = 1000' '$work/tol.csv'"
for bad in "--rtol 0" "--rtol 1" "--atol 0" "--atol -1" "--max-steps 0" "--rtol nan" "--atol inf"; do
  # shellcheck disable=SC2086
  "$bin" ode $bad -o "$work/o/new.csv" 2>"$work/err"
  check "ode $bad: exit 2" test $? -eq 2
done
check "bad tolerances: no output file" only_old

# ---- interrupted commands leave no partial file; the old file is untouched ----
# (a background job of a script starts with SIGINT ignored, which hdpsgd respects: env
# --default-signal gives it the disposition a command has in a terminal). No race: with
# HDPSGD_TEST_STOP=POINT the command stops itself (SIGSTOP) at that point ("compute": before
# the Monte Carlo, no file made yet; "commit": its temporary files written, not yet renamed);
# a stopped process stays stopped, so the test waits for that state, looks, sends the
# signal and SIGCONT.
source "$(dirname "${BASH_SOURCE[0]}")/stop_point.sh"   # wait_stopped
for sig in INT TERM; do
  status=$((128 + $(kill -l $sig)))
  cp "$work/o/old.csv" "$work/o/X.csv"
  # during the computation (temporary files are made only afterwards)
  HDPSGD_TEST_STOP=compute env --default-signal=INT,TERM "$bin" sim --runs 1000 --threads 2 \
    -o "$work/o/X.csv" --json "$work/o/X.json" 2>/dev/null &
  pid=$!
  stopped=0; wait_stopped $pid && stopped=1
  check "SIG$sig during sim: stopped before the Monte Carlo (HDPSGD_TEST_STOP=compute)" test $stopped -eq 1
  kill -$sig $pid 2>/dev/null; kill -CONT $pid 2>/dev/null
  wait $pid
  rc=$?
  check "SIG$sig during sim: died of the signal (status $rc)" test $rc -eq $status
  check "SIG$sig during sim: X.csv untouched, no temporary or JSON file" \
    bash -c "grep -qx old '$work/o/X.csv' && [[ \$(cd '$work/o' && ls -A | tr '\n' ' ') == 'X.csv old.csv ' ]]"
  # while the outputs are written: stopped with its temporary files in place
  HDPSGD_TEST_STOP=commit env --default-signal=INT,TERM "$bin" ode --set ode.points=2000 \
    -o "$work/o/X.csv" --json "$work/o/X.json" 2>/dev/null &
  pid=$!
  stopped=0; wait_stopped $pid && stopped=1
  seen=0
  compgen -G "$work/o/.X.csv.tmp.*" >/dev/null && compgen -G "$work/o/.X.json.tmp.*" >/dev/null && seen=1
  kill -$sig $pid 2>/dev/null; kill -CONT $pid 2>/dev/null
  wait $pid
  rc=$?
  check "SIG$sig while writing: stopped before the rename (HDPSGD_TEST_STOP=commit)" test $stopped -eq 1
  check "SIG$sig while writing: both temporary files were there" test $seen -eq 1
  check "SIG$sig while writing: died of the signal (status $rc)" test $rc -eq $status
  check "SIG$sig while writing: X.csv untouched, no temporary file" \
    bash -c "grep -qx old '$work/o/X.csv' && [[ \$(cd '$work/o' && ls -A | tr '\n' ' ') == 'X.csv old.csv ' ]]"
  rm -f "$work/o/X.csv"
done
# without the variable, nothing stops
HDPSGD_TEST_STOP=none "$bin" ode --set ode.points=50 -o "$work/o/Y.csv" 2>/dev/null
check "HDPSGD_TEST_STOP at another point: runs through" test $? -eq 0
rm -f "$work/o/Y.csv"
check "after the signals: only the old file" only_old

# ---- full disks: /dev/full, and a 64 KiB tmpfs when user namespaces allow it ----
# (a command's files are committed all or nothing: the CSV is not left without its JSON)
for cmd in ode sim sde; do
  extra=(); [[ $cmd != ode ]] && extra=(--runs 2)
  "$bin" $cmd "${small[@]}" "${extra[@]}" -o "$work/o/old.csv" --json /dev/full 2>"$work/err"
  check "$cmd -o OLD --json /dev/full: exit 3" test $? -eq 3
  check "$cmd -o OLD --json /dev/full: OLD untouched, no file" only_old
done
"$bin" validate "${small[@]}" --runs 4 --data "$work/o/v" --json /dev/full >/dev/null 2>"$work/err"
check "validate --json /dev/full: exit 3" test $? -eq 3
check "validate --data --json /dev/full: no data file" only_old
"$bin" ode "${small[@]}" >/dev/full 2>"$work/err"
check "ode > /dev/full (standard output): exit 3" test $? -eq 3
# the program's own texts too (they returned 0 after a failed write)
for a in --help --version --man "--completion bash" "help ode"; do
  "$bin" $a >/dev/full 2>"$work/err"
  check "hdpsgd $a > /dev/full: exit 3" test $? -eq 3
done
if unshare -rm true 2>/dev/null; then
  mkdir "$work/small"
  unshare -rm bash -c "mount -t tmpfs -o size=64k tmpfs '$work/small' && echo old > '$work/small/x.csv' &&
    '$bin' ode --set ode.points=5000 -o '$work/small/x.csv' 2>'$work/err'; echo \$? > '$work/rc';
    ls -A '$work/small' > '$work/ls'; cat '$work/small/x.csv' > '$work/content'"
  check "a full tmpfs: exit 3" test "$(cat "$work/rc")" -eq 3
  check "a full tmpfs: the message says so" grep -q 'No space left on device (the previous file is untouched)' "$work/err"
  check "a full tmpfs: the old file untouched, no temporary file" bash -c "[[ \$(cat '$work/ls') == x.csv ]] && grep -qx old '$work/content'"
else
  echo "skip full tmpfs: user namespaces are not available"
fi

# ---- inputs that are not regular files are refused (they would hang or read as empty) ----
"$bin" ode / -o "$work/o/new.csv" 2>"$work/err"
check "a directory as the model: exit 2" test $? -eq 2
check "a directory as the model: message" grep -q 'cannot read the model file: it is a directory' "$work/err"
timeout 20 "$bin" ode --set data.spectrum=file --set data.spectrum_file=/dev/zero -o "$work/o/new.csv" 2>"$work/err"
check "/dev/zero as the spectrum: exit 2 at once" test $? -eq 2
check "/dev/zero as the spectrum: message" grep -q "cannot read '/dev/zero': it is a device" "$work/err"
mkfifo "$work/fifo"
timeout 20 "$bin" ode --set schedule.kind=table --set "schedule.file=$work/fifo" -o "$work/o/new.csv" 2>"$work/err"
check "a FIFO as the schedule table: exit 2 at once" test $? -eq 2
check "a FIFO as the schedule table: message" grep -q "it is a pipe, not a regular file" "$work/err"
printf '[clip]\nc = 0.5\n' | "$bin" ode "${small[@]}" /dev/stdin > "$work/stdin.csv" 2>"$work/err"
check "a model piped to /dev/stdin still works" grep -qx '# c = 0.5' "$work/stdin.csv"
check "inputs: no output file" only_old

# ---- an integer option reads as a model key's integer does (--runs 1e3 as --set sim.runs=1e3);
# a figure option without the figure is refused, not ignored ----
"$bin" sim "${small[@]}" --runs 2e1 --json "$work/runs.json" -o /dev/null 2>"$work/err"
check "--runs 2e1: read as 20, as --set sim.runs=2e1 is" \
  python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['runs'] == 20" "$work/runs.json"
for v in 2.5 0x10 nan 1e16 12abc ""; do
  "$bin" sim "${small[@]}" --runs "$v" -o "$work/o/x.csv" >/dev/null 2>"$work/err"
  check "--runs '$v': exit 2, an integer expected, nothing written" \
    bash -c '[[ $1 -eq 2 ]] && grep -q "expects an integer" "$2" && [[ ! -e $3 ]]' _ $? "$work/err" "$work/o/x.csv"
done
for opt in "--label ODE" "--logy" "--size wide" "--no-title"; do
  "$bin" validate "${small[@]}" --runs 2 $opt --json "$work/o/x.json" >/dev/null 2>"$work/err"
  check "validate $opt without --figure: exit 2, named, nothing run" \
    bash -c '[[ $1 -eq 2 ]] && grep -qF -- "--${2%% *} styles the figure, and no --figure was given" "$3" && [[ ! -e $4 ]]' \
    _ $? "${opt#--}" "$work/err" "$work/o/x.json"
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
