#!/usr/bin/env bash
# The inputs of `hdpsgd sweep` read as model files are (docs/reliability.md): lines read
# whole (a long one refused with file:line, an axis's list continued on indented lines),
# NUL bytes refused, CR, CRLF and LF line ends alike, each key once, the sweep file and the
# base model regular files (a device or a FIFO is refused at once, not read forever), at
# most 10^6 points (no overflow), --resume's digest over every data file the models name.
# Also: a model on a pipe is read up to 16 MiB and stops at a NUL byte, validate's --data
# prefix must end in a name, and no message says `sweep_has`.
#   sweep_input.sh HDPSGD
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
pass=0 fail=0
check() { local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi; }

# bad NAME FRAGMENT FILE [ARGS]: exit 2 within 20 s, the message, no output folder
bad() {
  local name=$1 frag=$2 file=$3; shift 3
  timeout 20 "$bin" sweep "$file" -o "$work/bad-out" "$@" >/dev/null 2>"$work/err"
  local rc=$?
  check "$name: exit 2 (got $rc)" test $rc -eq 2
  check "$name: message" grep -qF -- "$frag" "$work/err" || cat "$work/err"
  check "$name: no output" test ! -e "$work/bad-out"
}
head='[sweep]\ncommands = ode\n[axes]\n'

# a line over 198 characters: refused with its line (it used to be split, its tail an axis)
printf "${head}clip.c = 1, %s\n" "$(printf '1, %.0s' {1..62})3 data.d = 7" > long.ini
bad "long line" "long.ini:4: line longer than 198 characters" long.ini
# 198 characters exactly are read
printf "${head}clip.c = 1,%s 2\n" "$(printf ' %.0s' {1..185})" > edge.ini
check "a line of 198 characters is read" test "$(awk 'NR==4{print length($0)}' edge.ini)" -eq 198
"$bin" sweep edge.ini --dry-run >dry.out 2>/dev/null
check "... and gives its 2 points" test "$(wc -l < dry.out)" -eq 2

# a NUL byte: refused (it used to end the line: "clip.c = 1, 2\0, 3" was two points)
printf "${head}clip.c = 1, 2\0, 3\n" > nul.ini
bad "NUL byte" "nul.ini:4: the sweep file contains a NUL byte" nul.ini

# CR, CRLF and LF line ends: the same points
printf "${head}clip.c = 1, 2\ndata.d = 5, 6\n" > lf.ini
tr '\n' '\r' < lf.ini > cr.ini
sed 's/$/\r/' lf.ini > crlf.ini
for f in lf cr crlf; do "$bin" sweep $f.ini --dry-run >$f.out 2>/dev/null; done
check "LF line ends: 4 points" test "$(wc -l < lf.out)" -eq 4
check "CR line ends: the same points" cmp -s lf.out cr.out
check "CRLF line ends: the same points" cmp -s lf.out crlf.out

# each key once
printf "${head}clip.c = 1, 2\nclip.c = 3, 4\n" > twice.ini
bad "axis given twice" "twice.ini:5: [axes] clip.c: the key is given twice (first on line 4, in [axes])" twice.ini
printf "${head}clip.c = 1, 2\n[set]\nclip.c = 3\n" > axisset.ini
bad "axis also in [set]" "axisset.ini:6: [set] clip.c: the key is given twice (first on line 4, in [axes])" axisset.ini
printf '[sweep]\ncommands = ode\ncommands = sim\n' > cmds.ini
bad "[sweep] key twice" "cmds.ini:3: [sweep] commands: the key is given twice (first on line 2" cmds.ini
printf "${head}clip.c =\n" > novalue.ini
bad "axis without values" "novalue.ini:4: axis clip.c has no values" novalue.ini

# an axis's list continues on indented lines; nothing else does
printf "${head}clip.c = 1, 2,\n  3, 4\n\t5 ; a comment: the last\ndata.d = 9\n" > cont.ini
"$bin" sweep cont.ini --dry-run >cont.out 2>/dev/null
check "continued list: 5 points" test "$(wc -l < cont.out)" -eq 5
check "continued list: the last value" grep -qx '4 clip.c=5 data.d=9' cont.out
printf "${head}clip.c = 1, 2\n  data.d = 3\n" > contkey.ini
bad "indented key under an axis" "contkey.ini:5: the line is indented, so it continues the list of values of axis clip.c" contkey.ini
printf "${head}clip.c = 1:2:3\n  4\n" > contrange.ini
bad "indented line under a range" "a range LO:HI:COUNT" contrange.ini
# a section line without ']' is the error named, not the key after it (read into [sweep])
printf '[sweep]\ncommands = ode\n[axes\nclip.c = 1, 2\n' > unclosed.ini
bad "section without ]" "unclosed.ini:3: syntax error: expected '[section]'" unclosed.ini
# an empty value between two commas is refused however it is written (strtok skipped '1,,2''s)
for v in '1,,2' '1, ,2'; do
  printf "${head}clip.c = %s\n" "$v" > emptyval.ini
  bad "empty value in '$v'" "emptyval.ini:4: axis clip.c: empty value" emptyval.ini
done
# an axis value is its results.csv cell as it is: a double quote would open a quoted field there
printf "${head}schedule.kind = output, \"inverse-time\n" > quote.ini
bad "a double quote in an axis value" "quote.ini:4: axis schedule.kind: the value '\"inverse-time' holds a double quote" quote.ini
# a range's COUNT is read whole (it was read by sscanf's %d: 1e9 ran 1 point, 3x ran 3)
for r in 0.5:2:1e9 0.5:2:3x 0.5:2:3:logx 0.5:2:3:log:1 0.5:2:99999999999999999999 0.5:2:; do
  printf "${head}clip.c = %s\n" "$r" > range.ini
  bad "range $r" "range.ini:4: axis clip.c: '$r': expected LO:HI:COUNT" range.ini
done
printf "${head}clip.c = 0.5:2:3:log\n" > logrange.ini
"$bin" sweep logrange.ini --dry-run >logrange.out 2>/dev/null
check "log range: 3 points" test "$(wc -l < logrange.out)" -eq 3
check "log range: its middle value" grep -qx '1 clip.c=1' logrange.out
printf '[sweep]\ncommands = ode\n  sim\n' > contsweep.ini
bad "indented line under [sweep]" "only an axis's list of values continues on indented lines" contsweep.ini

# devices and FIFOs: refused at once, not read forever
bad "sweep file /dev/zero" "/dev/zero: cannot read the sweep file: it is a device or socket" /dev/zero
bad "sweep file /dev/urandom" "/dev/urandom: cannot read the sweep file: it is a device or socket" /dev/urandom
mkfifo fifo
bad "sweep file a FIFO" "fifo: cannot read the sweep file: it is a pipe, not a regular file" fifo
for base in /dev/zero /dev/urandom "$work/fifo"; do
  printf '[sweep]\nmodel = %s\ncommands = ode\n' "$base" > base.ini
  bad "base model $base" "base.ini:2: [sweep] model = $base: cannot read the model file: it is a" base.ini
done
check "... base model: why it must be a regular file" grep -q 'it must be a regular file' err
mkdir adir
bad "sweep file a directory" "adir: cannot read the sweep file: it is a directory" adir

# a model on a pipe: read to its end, up to 16 MiB, stopping at the first NUL byte
start=$(date +%s)
(cat /dev/zero | timeout 20 "$bin" ode /dev/stdin -o z.csv) 2>err
rc=$?
check "model from /dev/zero through a pipe: exit 2 (got $rc)" test $rc -eq 2
check "... the NUL byte named" grep -q '/dev/stdin:1: the model file contains a NUL byte' err
check "... within 5 s (it read 1 GiB, 2 GB of memory, before)" test $(($(date +%s) - start)) -le 5
(yes '# a comment' | timeout 20 "$bin" ode /dev/stdin -o z.csv) 2>err
rc=$?
check "model from an endless pipe: exit 2 (got $rc)" test $rc -eq 2
check "... larger than 16 MiB" grep -q 'the model file is larger than 16 MiB' err
check "... no output" test ! -e z.csv
printf '[data]\nd = 40\n' | "$bin" ode /dev/stdin -o p.csv 2>/dev/null
check "a model through a pipe is still read" test $? -eq 0 -a -s p.csv

# the number of points: checked as the product grows, at most 10^6
{ printf "$head"; for k in clip.c data.d data.tau2 privacy.rho sim.runs ode.bins ode.points; do
    echo "$k = 1:2:1024"; done; } > big.ini
bad "seven axes of 1024 values (it was '0 points', exit 0)" \
  "the axes make 1024 x 1024 x 1024 x 1024 x 1024 x 1024 x 1024 points, more than the 1000000" big.ini
printf "${head}clip.c = 1:2:1000\ndata.d = 1:1000:1001\n" > over.ini
bad "1001000 points" "1000 x 1001 points, more than the 1000000" over.ini

# --resume's digest covers every data file the models name: 70 spectrum files, the 68th edited
for i in $(seq 1 70); do printf '1\n0.5\n0.%d\n' "$i" > s$i.txt; done
{ printf '[sweep]\ncommands = ode\n[set]\ndata.spectrum = file\n[axes]\ndata.spectrum_file = s1.txt'
  for i in $(seq 2 70); do if ((i % 10 == 0)); then printf ',\n  s%d.txt' "$i"; else printf ', s%d.txt' "$i"; fi; done
  echo; } > many.ini
"$bin" sweep many.ini -o many --threads 1 2>err
check "70 spectrum files: the sweep runs" test $? -eq 0 -a "$(wc -l < many/results.csv)" -eq 71
check "70 spectrum files: all in the digest" test "$(grep -c '^file ' many/sweep.digest)" -eq 70
cp -r many many2
rm many/points/p00067/row.csv
echo 0.9 >> s68.txt
"$bin" sweep many.ini -o many --resume --threads 1 2>err
check "edited 68th file: --resume refuses (exit 2)" test $? -eq 2
check "edited 68th file: named" grep -q 'a file the models name changed since many was started — s68.txt' err
check "edited 68th file: nothing run" test ! -e many/points/p00067/row.csv
# the unchanged files: --resume runs the lost point only
sed -i '$d' s68.txt
rm many2/points/p00003/row.csv
"$bin" sweep many.ini -o many2 --resume --threads 1 2>err
check "unchanged files: --resume exits 0" test $? -eq 0
check "unchanged files: one point run" test "$(grep -c 'done' err)" -eq 1
rm many2/sweep.digest many2/points/p00004/row.csv
"$bin" sweep many.ini -o many2 --resume --threads 1 2>err
check "no sweep.digest: a warning in words" grep -q 'warning: many2 has no sweep.digest' err

# no message says `sweep_has` (an identifier left in three messages)
check "no 'sweep_has' in the program's messages" bash -c "! strings '$bin' | grep -q 'sweep_has [a-z]'"

# validate --data PREFIX: the start of file names, never a folder (hidden files .ode.csv)
mkdir sub
for prefix in sub/ / . .. sub/. sub/..; do
  "$bin" validate --set data.d=20 --runs 2 --no-sde --data "$prefix" >/dev/null 2>err
  rc=$?
  check "validate --data '$prefix': exit 2 (got $rc)" test $rc -eq 2
  check "validate --data '$prefix': why" grep -q 'it must end in a name' err
done
check "validate --data: no hidden file written" test -z "$(ls -A sub)" -a ! -e .ode.csv -a ! -e ..ode.csv
"$bin" validate --set data.d=20 --runs 2 --no-sde --data sub/run >/dev/null 2>&1
check "validate --data sub/run: sub/run.ode.csv" test -s sub/run.ode.csv -a -s sub/run.sim.csv

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
