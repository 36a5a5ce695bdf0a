#!/usr/bin/env bash
# Reliability, second round (issue 18): one regression case per failure found by the
# adversarial review, each of which failed before its fix.
#   reliability.sh HDPSGD
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
# run: exit status in $rc, stderr in err
run() { "$@" >out 2>err; rc=$?; }
# bad input: exit 2, the message contains $1, and no file left in ./o
refused() { # refused FRAGMENT COMMAND...
  local frag=$1; shift
  rm -rf o; mkdir o
  "$@" >out 2>err; local st=$?
  [[ $st -eq 2 ]] && grep -qF -- "$frag" err && [[ -z $(ls -A o) ]] || {
    echo "    exit $st; stderr:"; sed 's/^/      /' err | head -5; return 1; }
}

# ---- 1. log binning: eigenvalues exactly on bin edges (heap overflow before) ----
python3 -c "
s=213.70400347470368
v=[s*10.0**-k for k in range(9)]+[s*10.0**-k for k in range(1,9) for c in range(50)]
v+=[s*10.0**(-k-(f+1)/10.0) for k in range(8) for f in range(9)]
open('edges.txt','w').write(''.join(repr(x)+'\n' for x in v))"
run "$bin" ode --set data.spectrum=file --set data.spectrum_file=edges.txt --set ode.bins=auto --json j.json
check "bins=auto, eigenvalues on bin edges: exit 0" test $rc -eq 0
check "bins=auto, eigenvalues on bin edges: a finite final risk" \
  python3 -c "import json,math; v=json.load(open('j.json')); assert math.isfinite(v['final_risk']) and v['bins'] <= 2*64+1"

# ---- 3. lines longer than inih's buffer were split (a comment's tail read as a key) ----
{ printf '[data]\n; %0199d' 0; printf ' n = 50\n'; } > long.ini
check "a 200+ character comment: read as one comment (its tail is not a key)" \
  bash -c "mkdir -p o && '$bin' ode long.ini -o o/x.csv 2>/dev/null && grep -qx '# gamma = 0.1' o/x.csv"
{ printf '[data]\nd = 50 ; %0199d\n' 0; } > long.ini
check "a 200+ character key line: refused with its line number" \
  refused "long.ini:2: line longer than 198 characters" "$bin" ode long.ini -o o/x.csv
# ---- 4. a NUL byte truncated a value silently (d = 2\0 0 ran with d = 2) ----
printf '[data]\nd = 2\0 0\n' > nul.ini
check "a NUL byte in a model: refused with its line" refused "nul.ini:2:" "$bin" ode nul.ini -o o/x.csv
check "a NUL byte in a model: named" grep -q "NUL byte" err
printf '1\n2\0\n' > nul.txt
check "a NUL byte in a spectrum file: refused" refused "nul.txt:2:" \
  "$bin" ode --set data.spectrum=file --set data.spectrum_file=nul.txt -o o/x.csv
# ---- 5. CR-only line ends were ignored and the defaults ran ----
printf '[data]\rd = 20\rgamma = 0.5\r' > cr.ini
run "$bin" ode cr.ini --json j.json -o /dev/null
check "CR-only line ends: read (d = 20, n = 40)" \
  python3 -c "import json; v=json.load(open('j.json')); assert v['d'] == 20 and v['n'] == 40, v"
printf '[data]\r\nd = 30\r\n' > crlf.ini
run "$bin" ode crlf.ini --json j.json -o /dev/null
check "CRLF line ends: read (d = 30)" python3 -c "import json; assert json.load(open('j.json'))['d'] == 30"
# a UTF-8 byte order mark first: read as a model file's, also in spectrum files and schedule
# tables (refused there as "got '1'", the mark invisible in the message)
printf '\xef\xbb\xbf1\n4\n' > bom.txt
printf '1\n4\n' > nobom.txt
run "$bin" ode --set data.spectrum=file --set data.spectrum_file=bom.txt --json j.json -o /dev/null
run "$bin" ode --set data.spectrum=file --set data.spectrum_file=nobom.txt --json j2.json -o /dev/null
check "a BOM in a spectrum file: read as without it" \
  python3 -c "import json; a, b = (json.load(open(f)) for f in ('j.json', 'j2.json')); assert a['final_risk'] == b['final_risk'] and a['d'] == 2, a"
printf '\xef\xbb\xbf0 1\n1 1\n' > bom.tab
run "$bin" ode --set schedule.kind=table --set schedule.file=bom.tab -o /dev/null
check "a BOM in a schedule table: read" test "$rc" -eq 0
# ---- 6. a FIFO as the model file was read as empty and the defaults ran ----
mkfifo fifo.ini
( printf '[data]\nd = 24\n' > fifo.ini ) &
run timeout 20 "$bin" ode fifo.ini --json j.json -o /dev/null
wait
check "a FIFO model: read whole (d = 24)" python3 -c "import json; assert json.load(open('j.json'))['d'] == 24"
( : > fifo.ini ) &
check "a FIFO model that gives nothing: refused, not the defaults" \
  refused "a pipe that gave nothing" timeout 20 "$bin" ode fifo.ini -o o/x.csv
wait
: > empty.ini
check "an empty model file: refused, not the defaults" \
  refused "model file: it is empty (0 bytes)" "$bin" ode empty.ini -o o/x.csv
mkfifo fifo.txt
check "a FIFO spectrum file: refused" refused "is a pipe, not a regular file" \
  timeout 20 "$bin" ode --set data.spectrum=file --set data.spectrum_file=fifo.txt -o o/x.csv
# ---- 7. spectrum lines over 4096 characters were split into several eigenvalues ----
{ printf '1\n'; printf '%04200d\n' 2; } > longline.txt
check "a 4200-character spectrum line: refused" refused "longline.txt:2: line longer than 4000" \
  "$bin" ode --set data.spectrum=file --set data.spectrum_file=longline.txt -o o/x.csv
# a comment line of any length is a comment, in tables as in model files (schedule writes the
# command that simulates the table into its header, which may exceed 4000 characters)
{ printf '# %05000d\n' 1; printf '0 1\n1 1\n'; } > longcomment.tab
run "$bin" ode --set schedule.kind=table --set schedule.file=longcomment.tab -o /dev/null
check "a 5000-character comment line in a schedule table: read" test "$rc" -eq 0
# ---- 8. normalising huge eigenvalues overflowed (a risk column of zeros) ----
printf '1e308\n1e308\n1e308\n' > huge.txt
run "$bin" ode --set data.spectrum=file --set data.spectrum_file=huge.txt --json j.json -o /dev/null
check "eigenvalues 1e308: normalised without overflow (the isotropic risk)" python3 -c "
import json, subprocess
v = json.load(open('j.json'))
iso = json.loads(subprocess.run(['$bin', 'ode', '--set', 'data.spectrum=isotropic', '--set', 'data.d=3',
                                 '--json', '-', '-o', '/dev/null'], capture_output=True, text=True).stdout)
assert v['final_risk'] > 0 and abs(v['final_risk'] / iso['final_risk'] - 1) < 1e-12, (v, iso)"
printf '1e-320\n1e-320\n' > denormal.txt
check "subnormal eigenvalues: refused as out of range" refused "denormal.txt:1: '1e-320' is out of range" \
  "$bin" ode --set data.spectrum=file --set data.spectrum_file=denormal.txt -o o/x.csv
# ---- 11. decimal numbers only; an overflow is out of range ----
printf '[data]\nd = 0x14\n' > hex.ini
check "d = 0x14: not a number" refused "hex.ini:2: [data] d = '0x14' is not a number" "$bin" ode hex.ini -o o/x.csv
check "--set clip.c=0x1p-2: not a number" refused "[clip] c = '0x1p-2' is not a number" \
  "$bin" ode --set clip.c=0x1p-2 -o o/x.csv
check "--set clip.c=1e400: out of range" refused "[clip] c = 1e400 is out of range" \
  "$bin" ode --set clip.c=1e400 -o o/x.csv
run "$bin" sim --set sim.seed=010 --runs 1 --set data.d=10 --json j.json -o /dev/null
check "sim.seed = 010 is ten (decimal), not eight" python3 -c "import json; assert json.load(open('j.json'))['seed'] == 10"

# ---- 9, 10 and the smaller items: ranges checked before anything runs ----
check "rho = 1e-170 (noise variances beyond double range): refused, not silently noiseless" \
  refused "[privacy] rho = 1e-170 is out of range" "$bin" sim --set privacy.rho=1e-170 --runs 2 -o o/x.csv
check "ode at the same rho: refused the same way" \
  refused "[privacy] rho = 1e-170 is out of range" "$bin" ode --set privacy.rho=1e-170 -o o/x.csv
check "ode.points = 3e9: refused before allocating" refused "[ode] points = 3000000000 is out of range" \
  timeout 10 "$bin" ode --set ode.points=3000000000 -o o/x.csv
check "d = 4294967297: refused naming data.d (was exit 4, out of memory)" \
  refused "[data] d = 4294967297 is out of range" "$bin" ode --set data.d=4294967297 -o o/x.csv
check "c = 1e300: out of range (was a CVODE failure with an rtol/atol hint)" \
  refused "[clip] c = 1e300 is out of range" "$bin" ode --set clip.c=1e300 -o o/x.csv
check "runs x points beyond memory: refused naming both" refused "runs = 10000000 with ode.points = 1001" \
  "$bin" sim --set sim.runs=10000000 --set ode.points=1001 -o o/x.csv
check "rf n x p beyond memory: refused naming both" refused "[rf] n: n = 100000 with rf.p = 100000" \
  "$bin" rf --set rf.n=100000 --set rf.p=100000 -o o/x.csv
check "gamma = 1e-20 (n = 2e22 steps): refused" refused "[data] gamma: gamma = 1e-20 gives n" \
  "$bin" ode --set data.gamma=1e-20 -o o/x.csv
"$bin" keys > keys.txt
check "hdpsgd keys documents the bounds" grep -q "dimension of data and parameter (integer in \[1, 1e8\])" keys.txt
HDPSGD_SIMD=sse9 "$bin" sim --runs 2 --set data.d=10 -o /dev/null 2>err
check "HDPSGD_SIMD=sse9: a warning naming the accepted values" grep -q "HDPSGD_SIMD=sse9 is not one of auto, generic, avx2, avx512" err

# ---- 12. output paths that are symbolic links are written through, never replaced ----
small=(--set data.d=20 --set ode.points=3)
ln -s /proc/self/fd/1 fdlink
"$bin" ode "${small[@]}" --json fdlink -o /dev/null > captured.txt 2>/dev/null
check "--json LINK-TO-/proc/self/fd/1: the JSON reaches standard output" grep -q '"final_risk"' captured.txt
check "--json LINK-TO-/proc/self/fd/1: the link is still a link" test -L fdlink
echo old > target.csv; ln -s target.csv link.csv
"$bin" ode "${small[@]}" -o link.csv 2>/dev/null
check "-o LINK: written through to the target" grep -q '^t,risk' target.csv
check "-o LINK: the link is still a link to it" test "$(readlink link.csv)" = target.csv
mkdir sub; ln -s sub/new.csv dangling.csv
"$bin" ode "${small[@]}" -o dangling.csv 2>/dev/null
check "-o DANGLING-LINK: creates the link's target" test -f sub/new.csv -a -L dangling.csv
"$bin" ode "${small[@]}" -o - --json j.json > dash.csv 2>/dev/null
check "-o -: standard output" grep -q '^t,risk' dash.csv
# ---- 13. two outputs, or an output and an input, that are one file: refused before running ----
check "-o a.csv --json a.csv: refused" refused "are the same file" "$bin" ode -o o/a.csv --json o/a.csv
check "validate --figure f.png --json f.sim.csv: refused" refused "the figure's data file" \
  "$bin" validate --runs 2 --figure o/f.png --json o/f.sim.csv
check "--json through a link to the -o file: refused" refused "are the same file" \
  bash -c "ln -sf a.csv o/b.json && '$bin' ode -o o/a.csv --json o/b.json; st=\$?; rm -f o/b.json; exit \$st"
"$bin" ode "${small[@]}" -o x.csv 2>/dev/null; cp x.csv x0.csv
ln -s x.csv x-link.png
check "plot x.csv -o LINK-TO-x.csv: refused" refused "an input would be overwritten" "$bin" plot x.csv -o x-link.png
check "plot x.csv -o LINK-TO-x.csv: the input untouched" cmp -s x.csv x0.csv
printf '[data]\nd = 10\n' > in.ini
check "ode MODEL -o MODEL: refused" refused "an input would be overwritten" "$bin" ode in.ini -o in.ini
check "-o the spectrum file: refused" refused "data.spectrum_file" \
  "$bin" ode --set data.spectrum=file --set data.spectrum_file=huge.txt -o huge.txt
# ---- 14. the replaced file's permissions are kept ----
echo old > private.csv; chmod 600 private.csv
"$bin" ode "${small[@]}" -o private.csv 2>/dev/null
check "a 0600 file stays 0600 when replaced" test "$(stat -c %a private.csv)" = 600
umask 027; "$bin" ode "${small[@]}" -o fresh.csv 2>/dev/null; umask 022
check "a new file gets the umask's mode (0640 under umask 027)" test "$(stat -c %a fresh.csv)" = 640
# ---- 15. over-long names: refused before running, the reason never cut ----
long=$(printf 'x%.0s' {1..300})
check "a 300-character file name: refused up front" refused "has 304 characters: at most 242" \
  "$bin" ode -o "o/$long.csv"
check "a 5000-character path: refused, the reason said" refused "the output path is longer than 4000" \
  "$bin" ode -o "o/$(printf 'd%.0s' {1..5000})/x.csv"
# ---- 16. SIGXFSZ (ulimit -f): exit 3, no temporary file, the previous file intact ----
mkdir fs; echo old > fs/big.csv
(ulimit -f 1; exec "$bin" ode --set ode.points=5000 -o fs/big.csv) 2>err; rc=$?
check "ulimit -f: exit 3 (was killed by SIGXFSZ)" test $rc -eq 3
check "ulimit -f: the previous file intact, no temporary file" \
  test "$(cat fs/big.csv)" = old -a "$(ls -A fs)" = big.csv

# ---- 17. sweep --resume refuses a sweep whose definition changed ----
mkdir sw && (
  cd sw
  printf '1\n2\n3\n4\n' > spec.txt
  printf '[data]\nspectrum = file\nspectrum_file = spec.txt\n' > base.ini
  printf '[sweep]\nmodel = base.ini\ncommands = ode\n[axes]\nclip.c = 0.5, 1\n' > s.ini
  "$bin" sweep s.ini -o out >/dev/null 2>&1
)
check "sweep: a digest of the definition is stored" test -s sw/out/sweep.digest
run bash -c "cd sw && '$bin' sweep s.ini -o out --resume"
check "sweep --resume, nothing changed: exit 0" test $rc -eq 0
echo 5 >> sw/spec.txt
run bash -c "cd sw && '$bin' sweep s.ini -o out --resume"
check "sweep --resume after the spectrum file changed: exit 2 naming it" \
  bash -c "[[ $rc -eq 2 ]] && grep -q 'a file the models name changed .* spec.txt' err"
printf '[sweep]\nmodel = base.ini\ncommands = ode\n[axes]\nclip.c = 0.5, 2\n' > sw/s.ini
run bash -c "cd sw && '$bin' sweep s.ini -o out --resume"
check "sweep --resume after the sweep file changed: exit 2" bash -c "[[ $rc -eq 2 ]] && grep -q 'changed since' err"
# ---- 18 and plot: non-regular inputs refused, bad content is bad input, figure formats ----
mkfifo plot.csv
check "plot on a FIFO: refused at once (it hung)" refused "not a regular file (a pipe)" \
  timeout 10 "$bin" plot plot.csv -o o/p.png
"$bin" ode "${small[@]}" -o good.csv 2>/dev/null
{ grep -v '^#' good.csv; echo '0.5,abc,1,1,1,1,1,1'; } > badrow.csv
check "plot on a CSV with a bad row: exit 2 naming the line (was 3)" refused "badrow.csv:5: field 2 is not a number" \
  "$bin" plot badrow.csv -o o/p.png
for ext in jpg gif none; do
  f=o/v.$ext; [[ $ext == none ]] && f=o/v
  check "validate --figure with .$ext: refused before running" refused ".png, .pdf, .svg, .eps or .tex" \
    "$bin" validate --runs 2 --figure "$f"
done
check "plot -o v.jpg: refused" refused ".png, .pdf, .svg, .eps or .tex" "$bin" plot good.csv -o o/v.jpg
echo old > fig.png; chmod 640 fig.png; ln -s fig.png figlink.png
"$bin" plot good.csv -o figlink.png 2>/dev/null
check "plot -o LINK: the figure written through the link, mode kept" \
  bash -c "[[ -L figlink.png && \$(stat -c %a fig.png) == 640 && \$(stat -c %s fig.png) -gt 1000 ]]"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
