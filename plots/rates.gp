# rates.gp — `hdpsgd rates --figure FIG`: final excess risk of each optimised schedule
# family against gamma = d/n (log-log), with the rates of the theorem of THEORY.md
# section 5 scaled to match at the smallest gamma.
#
# Variables (set before this script):
#   data_file   CSV written by the command: gamma,risk_<family>,theory_<family>,...
#   families    space-separated family names, e.g. "output linear-noise optimal"
#   title_text  the title
# By hand:
#   gnuplot -e "set terminal pngcairo size 1000,760; set output 'r.png'" \
#           -e "data_file='r.rates.csv'; families='output optimal'; title_text='x'" plots/rates.gp
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set grid lc rgb '#dddddd'
set grid mxtics mytics lc rgb '#eeeeee'
set border lw 1.2
set logscale xy
set format x '10^{%L}'
set format y '10^{%L}'
set xlabel 'aspect ratio  γ = d/n'
set ylabel 'final excess risk  R_{exc}(θ_n)  (ODE, optimised schedule)'
set key bottom right box opaque samplen 3 spacing 1.2
nf = words(families)
fam_color(name) = name eq 'output' ? oi_blue : name eq 'linear-noise' ? oi_orange : \
                  name eq 'optimal' ? oi_green : name eq 'pl' ? oi_vermillion : oi_grey
fam_rate(name) = name eq 'output' ? 'γ log(1/γ) + γ² log²(1/γ)/ρ²' : \
                 name eq 'linear-noise' ? 'γ log^{2/3}(1/γ) + γ² log^{4/3}(1/γ)/ρ²' : \
                 'γ + γ²/ρ²'
plot for [i=1:nf] data_file using 1:(column('risk_'.word(families,i))) with linespoints lw 2.5 pt 7 ps 1.2 \
     lc rgb fam_color(word(families,i)) title word(families,i).' (optimised on the ODE)', \
     for [i=1:nf] data_file using 1:(column('theory_'.word(families,i))) with lines dt 2 lw 2 \
     lc rgb fam_color(word(families,i)) title 'theorem, matched at the smallest γ: '.fam_rate(word(families,i))
