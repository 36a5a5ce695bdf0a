#!/usr/bin/env bash
# Command-line checks of `hdpsgd plot` and the figure options (issue 23): every CSV the
# toolkit writes is recognised by its header and drawn (the kind is named on stderr); the
# formats png, pdf, svg, eps and tex (with its graphics file FIG-graphic.pdf, never FIG.pdf); fonts at their size in the PDF;
# --label, --no-title (caption file), --key off, --size; and bad input (an unknown CSV, a
# column that does not exist, a bad --size, a bad extension): exit 2, naming it, nothing
# written. Small models keep it to a few seconds. Skipped (77) without gnuplot.
set -u
bin=$(readlink -f "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
if ! command -v gnuplot >/dev/null 2>&1 && [[ -z ${HDPSGD_GNUPLOT:-} ]]; then
  echo "skip: gnuplot not installed"; exit 77
fi
cd "$work" || exit 1
png() { [[ -s $1 && $(head -c 8 "$1" | od -An -c | tr -d ' ') == '211PNG\r\n032\n' ]]; }
# drawn FILE KIND ARGS...: plot exits 0, names the kind, writes a PNG
drawn() {
  local csv=$1 kind=$2; shift 2
  rm -f k.png
  "$bin" plot "$csv" -o k.png "$@" 2>err
  local rc=$?
  check "plot $csv: exit 0" test $rc -eq 0
  check "plot $csv: recognised as $kind" grep -qF "($kind)" err
  check "plot $csv: a PNG" png k.png
}

# ---- the CSVs, from small runs ----
small=(--set data.d=40 --set data.gamma=0.2 --set ode.points=11)
"$bin" ode "${small[@]}" -o ode.csv 2>/dev/null
"$bin" sim "${small[@]}" --runs 8 -o sim.csv 2>/dev/null
"$bin" sde "${small[@]}" --runs 8 -o sde.csv 2>/dev/null
iso=(--set data.spectrum=isotropic --set data.d=50 --set privacy.rho=1)
"$bin" rates "${iso[@]}" --gammas 0.005:0.05:3 --families output,optimal -o rates.csv \
  --figure r.png >/dev/null 2>&1
"$bin" schedule "${iso[@]}" --set data.gamma=0.05 --optimize --family optimal -o best.tab \
  --figure s.png >/dev/null 2>&1
cat > sw.ini <<'EOF'
[sweep]
commands = ode
[axes]
clip.c = 0.3, 1, 3
privacy.rho = 0.5, 1
[set]
data.d = 30
ode.points = 5
EOF
"$bin" sweep sw.ini -o sw >/dev/null 2>&1
"$bin" rf --set rf.d=4 --set rf.n=40 --set rf.p=60 --set rf.test_size=30 --set rf.records=5 \
  --set dpgd.CT=2 --runs 2 -o rf.csv >/dev/null 2>&1
"$bin" kl bound -o klb.csv >/dev/null 2>&1
klsmall=(--set kl.width=16 --set kl.depth=2 --set kl.d=4 --set kl.n=10 --set kl.epochs=6
         --set kl.inits=2 --set kl.runs=16 --schemes he)
"$bin" kl run "${klsmall[@]}" -o kle.csv >/dev/null 2>&1
"$bin" kl run "${klsmall[@]}" --vs depth --depths 2,3 -o kld.csv >/dev/null 2>&1
"$bin" nc --sweep flat --ps 10,100 --draws 20 -o nc.csv --figure nc.png >/dev/null 2>&1
si=(--set si.d=8 --set si.p=8 --set si.n=200 --set si.test_size=100 --set si.runs=4)
"$bin" sim-index --experiment align "${si[@]}" -o si-align.csv --figure si-align.png >/dev/null 2>&1
mkdir -p rfx
for x in P1 P2 P3 P4; do
  "$bin" rf-experiment $x --set rf.d=4 --set rf.n=40 --set rf.p=80 --set rf.test_size=30 -o rfx \
    >/dev/null 2>&1
done
for e in eps n; do
  "$bin" sim-index --experiment $e "${si[@]}" -o si-$e.csv --figure si-$e.png >/dev/null 2>&1
done

# ---- recognition of each kind ----
drawn ode.csv "risk curves"
drawn sim.csv "risk curves"
drawn rates.csv "rates"
drawn r.rates.csv "rates (figure data)"
drawn s.schedules.csv "schedules"
drawn best.tab "schedule table"
drawn sw/results.csv "sweep results" --x clip.c --by privacy.rho
drawn sw/results.csv "sweep results" --heat --x clip.c --by privacy.rho --y ode_final_risk
drawn rf.csv "rf"
drawn rfx/rf-p1.csv "rf-experiment P1"
drawn rfx/rf-p2.csv "rf-experiment P2"
drawn rfx/rf-p3.csv "rf-experiment P3"
drawn rfx/rf-p4.csv "rf-experiment P4"
drawn si-eps.csv "sim-index --experiment eps"
drawn si-n.csv "sim-index --experiment n"
drawn klb.csv "kl bound"
drawn kle.csv "kl run --vs epochs"
drawn kld.csv "kl run --vs depth|width"
drawn nc.csv "nc --sweep"
drawn si-align.csv "sim-index --experiment align"
drawn sde.csv "risk curves"
"$bin" plot ode.csv sim.csv sde.csv --bounds -o c.png 2>err
check "ode + sim + sde in one figure" png c.png
check "... named risk curves" grep -qF "(risk curves)" err

# ---- formats and fonts ----
for ext in pdf svg eps tex; do
  rm -f "f.$ext"
  "$bin" plot ode.csv sim.csv -o "f.$ext" 2>/dev/null
  check "plot -o f.$ext: written" test -s "f.$ext"
done
check ".tex: its graphics file f-graphic.pdf beside it" test -s f-graphic.pdf
check ".tex: includes f-graphic (not the temporary folder)" grep -q '\\includegraphics\[[^]]*\]{f-graphic}' f.tex
# f.pdf, the figure drawn first, is not the .tex's graphic: writing f.tex leaves it alone
"$bin" plot ode.csv -o f.pdf 2>/dev/null
sum_pdf=$(cksum < f.pdf)
"$bin" plot ode.csv sim.csv -o f.tex 2>/dev/null
check ".tex: an earlier f.pdf is not overwritten" test "$(cksum < f.pdf)" = "$sum_pdf"
check "... and the graphic is f-graphic.pdf, a PDF" bash -c "head -c 5 f-graphic.pdf | grep -q '%PDF-'"
check ".eps: an EPS file" bash -c "head -c 20 f.eps | grep -q '%!PS-Adobe'"
if command -v pdflatex >/dev/null 2>&1; then
  "$bin" plot s.schedules.csv -o ts.tex 2>/dev/null # Greek, tildes, subscripts, --options
  "$bin" plot ode.csv sim.csv sde.csv --bounds -o tc.tex 2>/dev/null
  printf '%s\n' '\documentclass{article}' '\usepackage{graphicx,color}' '\begin{document}' \
    '\input{f.tex}' '\input{ts.tex}' '\input{tc.tex}' '\end{document}' > doc.tex
  pdflatex -interaction=nonstopmode -halt-on-error doc.tex >/dev/null 2>&1
  check ".tex figures compile with plain pdflatex" test -s doc.pdf
  check "... without a missing character" bash -c "! grep -qi 'missing character' doc.log"
else
  echo "skip the LaTeX check: pdflatex not installed"
fi
"$bin" plot ode.csv sim.csv -o g.pdf 2>/dev/null
if command -v pdftotext >/dev/null 2>&1; then
  # DejaVu Sans: a word's box is 1.163 em high, 9.30 pt for the default 8 pt
  check "PDF: the default 8 pt text is 8 pt (box 9.30 pt)" python3 - g.pdf <<'PY'
import re, subprocess, sys
out = subprocess.run(['pdftotext', '-bbox', sys.argv[1], '-'], capture_output=True, text=True).stdout
h = [float(b) - float(a) for a, b in re.findall(r'yMin="([0-9.]+)" xMax="[0-9.]+" yMax="([0-9.]+)"', out)]
small = sorted(h)[len(h) // 2]
assert abs(small / 1.163 - 8) < 0.15, small
PY
  "$bin" plot ode.csv -o g10.pdf --font-size 10 --size 5,4 2>/dev/null
  check "PDF: --font-size 10 gives 10 pt text, --size 5,4 a 360 x 288 pt page" python3 - g10.pdf <<'PY'
import re, subprocess, sys
out = subprocess.run(['pdftotext', '-bbox', sys.argv[1], '-'], capture_output=True, text=True).stdout
page = re.search(r'<page width="([0-9.]+)" height="([0-9.]+)"', out)
assert abs(float(page.group(1)) - 360) < 1 and abs(float(page.group(2)) - 288) < 1, page.groups()
h = [float(b) - float(a) for a, b in re.findall(r'yMin="([0-9.]+)" xMax="[0-9.]+" yMax="([0-9.]+)"', out)]
small = sorted(h)[len(h) // 2]
assert abs(small / 1.163 - 10) < 0.15, small
PY
else
  echo "skip the font checks: pdftotext not installed (poppler-utils)"
fi

# ---- style options ----
"$bin" plot ode.csv sim.csv -o l.svg --label 'theory here' --label 'runs here' 2>/dev/null
check "--label: the legend texts in the SVG" bash -c "grep -q 'theory here' l.svg && grep -q 'runs here' l.svg"
check "Okabe-Ito palette: blue #0072B2 in the SVG" grep -qi 'rgb(  0, 114, 178)\|#0072b2' l.svg
# validate's figure takes --label in the order ODE, Monte Carlo, SDE (its script once redefined
# them away: gnuplot's exists() is false for a function)
"$bin" validate "${small[@]}" --runs 4 --label 'ode here' --label 'mc here' --label 'sde here' \
  --figure vl.svg >/dev/null 2>&1
check "validate --label: the three legend texts in the SVG" \
  bash -c "grep -q 'ode here' vl.svg && grep -q 'mc here' vl.svg && grep -q 'sde here' vl.svg"
# --xlabel on schedule's two stacked panels: once, under the lower one (it was also drawn
# between the panels, over the lower panel's top tic label)
"$bin" plot s.schedules.csv --xlabel 'shared t here' -o sx.svg 2>/dev/null
check "--xlabel on stacked panels: drawn once" test "$(grep -c 'shared t here' sx.svg)" -eq 1
"$bin" plot ode.csv sim.csv -o nk.svg --key off 2>/dev/null
"$bin" plot ode.csv sim.csv -o l0.svg 2>/dev/null
check "--key on: the legend text drawn" grep -q '<text>ODE R(t)</text>' l0.svg
check "--key off: no legend text drawn" bash -c "! grep -q '<text>ODE R(t)</text>' nk.svg"
"$bin" plot ode.csv -o nt.png --no-title --title 'the parameters' 2>/dev/null
check "--no-title: the caption file holds the title" grep -q 'the parameters' nt.caption.txt
"$bin" kl bound --figure kb.png --no-title --size wide >/dev/null 2>&1
check "--no-title on a --figure command: figure and caption" bash -c "test -s kb.png && test -s kb.caption.txt"
check "--no-title: the caption is the command's title" grep -q 'Corollary 4.2' kb.caption.txt
"$bin" plot sw/results.csv -o lg.png --x clip.c --logx 2>/dev/null
check "--logx on a sweep" png lg.png

# ---- bad input: exit 2, named, nothing written ----
refused() { # refused NAME PATTERN OUTPUT COMMAND...
  local name=$1 pat=$2 out=$3; shift 3
  rm -f "$out"
  "$@" >/dev/null 2>err
  local rc=$?
  check "$name: exit 2" test $rc -eq 2
  check "$name: names it" grep -qF -- "$pat" err
  check "$name: nothing written" test ! -e "$out"
}
printf 'a,b,c\n1,2,3\n' > foreign.csv
refused "an unknown CSV" "foreign.csv: not a CSV of the toolkit" x.png "$bin" plot foreign.csv -o x.png
refused "a column that does not exist (--y)" "--y nosuch" x.png \
  "$bin" plot sw/results.csv --x clip.c --y nosuch -o x.png
refused "a column that does not exist (--x)" "--x data.nosuch" x.png \
  "$bin" plot sw/results.csv --x data.nosuch -o x.png
refused "a column that does not exist (--by)" "--by zz" x.png \
  "$bin" plot sw/results.csv --x clip.c --by zz -o x.png
for size in 3 0,2 -1,2 a,b 2,3,4 3.4,; do
  refused "--size $size" "--size $size" x.png "$bin" plot ode.csv --size "$size" -o x.png
done
refused "--size on a --figure command, before running" "--size 0,0" kb2.png \
  "$bin" kl bound --figure kb2.png --size 0,0
refused "--font-size 0" "--font-size 0" x.png "$bin" plot ode.csv --font-size 0 -o x.png
refused "--key nonsense" "--key nonsense" x.png "$bin" plot ode.csv --key nonsense -o x.png
refused "-o x.jpg" ".png, .pdf, .svg, .eps or .tex" x.jpg "$bin" plot ode.csv -o x.jpg
refused "--heat without --by" "--heat" x.png "$bin" plot sw/results.csv --heat --x clip.c -o x.png
refused "--x on a CSV that is not a sweep" "--x, --y, --by and --heat apply" x.png \
  "$bin" plot ode.csv --x clip.c -o x.png
refused "a rates CSV with an ode CSV" "it is drawn alone" x.png "$bin" plot rates.csv ode.csv -o x.png
refused "more labels than inputs" "2 --label options for 1 input files" x.png "$bin" plot ode.csv --label a --label b -o x.png
refused "validate: more labels than its 3 curves" "4 --label options: the figure labels 3 curves" \
  x.png "$bin" validate "${small[@]}" --runs 2 --label a --label b --label c --label d --figure x.png
# a .tex figure's name is written into its LaTeX (\includegraphics{NAME-graphic}): a LaTeX
# special character there broke the document ('%' comments out the rest), or ran LaTeX
for n in 'a%b.tex' 'x}\\input{y}.tex' 'c#d.TEX' 'e~f.tex'; do
  refused ".tex figure named '$n'" "a .tex figure names its graphics file in LaTeX" "$n" \
    "$bin" plot ode.csv -o "$n"
  check ".tex figure named '$n': no graphics file" test ! -e "${n%.*}-graphic.pdf"
done
"$bin" plot ode.csv -o 'ok name_1.tex' 2>/dev/null
check ".tex figure named 'ok name_1.tex' (space, underscore): written" test -s 'ok name_1-graphic.pdf'
"$bin" ode "${small[@]}" -o t.csv 2>/dev/null
cp t.csv t.pdf
cp t.csv t-graphic.pdf
refused ".tex whose graphics file is an input (t-graphic.pdf)" "an input would be overwritten" t.tex \
  "$bin" plot t-graphic.pdf -o t.tex

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
