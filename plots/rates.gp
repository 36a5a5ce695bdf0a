# rates.gp — `hdpsgd rates --figure FIG`: final excess risk of each optimised schedule
# family against gamma = d/n (log-log), with the rates of the theorem of docs/theory.md
# section 5 scaled to match at the smallest gamma.
#
# Variables (set before this script):
#   data_file   CSV written by the command: gamma,risk_<family>,theory_<family>,...
#   families    space-separated family names, e.g. "output linear-noise inverse-time"
#   title_text  the title
#   has_fit     1: draw the columns fit_<family> (the rate with its constants fitted,
#               A r1 + B r2, docs/theory.md §5.2) instead of theory_<family> (default 0)
# By hand:
#   gnuplot -e "set terminal pngcairo size 1000,760; set output 'r.png'" \
#           -e "data_file='r.rates.csv'; families='output inverse-time'; title_text='x'" plots/house.gp plots/rates.gp
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set grid lc rgb '#e5e5e5'
set grid mxtics mytics lc rgb '#f2f2f2'
set logscale xy
set format x '10^{%L}'
set format y '10^{%L}'
set xlabel 'γ = d/n'
set ylabel 'final excess risk R(1)'
# the axes end at the data (a decade beyond them was empty), the legend under the plot
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
set key outside below center Left reverse maxcols 2 samplen 2.5 spacing 1.0 height 0.5
nf = words(families)
if (!exists("has_fit")) has_fit = 0
curve(name) = has_fit ? 'fit_'.name : 'theory_'.name
fam_color(name) = name eq 'output' ? oi_blue : name eq 'linear-noise' ? oi_orange : \
                  name eq 'inverse-time' ? oi_green : name eq 'pl' ? oi_vermillion : oi_grey
fam_name(name) = name
fam_point(name) = name eq 'output' ? 7 : name eq 'linear-noise' ? 5 : name eq 'inverse-time' ? 9 : 13
# solid with points: optimised on the ODE; dashed, same colour: the theorem's rate
# (docs/theory.md §5) with its two constants fitted (has_fit), else scaled to match at the smallest
# gamma: output γ log(1/γ) + γ² log²(1/γ)/ρ², linear-noise γ log^{2/3}(1/γ) + γ² log^{4/3}(1/γ)/ρ²,
# inverse-time γ + γ²/ρ²
plot for [i=1:nf] data_file using 1:(column('risk_'.word(families,i))) with linespoints lw 1.6 dt 1 \
     pt fam_point(word(families,i)) ps 0.7 lc rgb fam_color(word(families,i)) title ulabel(i, fam_name(word(families,i))), \
     for [i=1:nf] data_file using 1:(column(curve(word(families,i)))) with lines dt (6,4) lw 1.3 \
     lc rgb fam_color(word(families,i)) notitle, \
     NaN with lines dt (6,4) lw 1.3 lc rgb '#444444' \
     title (has_fit ? "theorem's rate, A r_1 + B r_2 fitted" : "theorem's rate")
