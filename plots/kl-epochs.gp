# kl-epochs.gp — `hdpsgd kl run --vs epochs --figure FIG`: the KL privacy of noisy GD on the
# linearised ReLU network against epochs, one colour per initialisation (Ye et al., Fig. 1;
# docs/theory.md §8). Monte Carlo of the KL of all iterates (constant c = 4) with its standard
# error, the exact value for the squared loss (OU moments), the exact KL of the last
# iterate's law (dotted), and the bound (dashed) of Corollary 4.2 with c = 4, B T / (n^2 sigma^2).
#
# Variables (set before this script):
#   data_file   CSV written by the command: epoch,T,<s>_kl,<s>_kl_se,...,<s>_bound,...
#   schemes     space-separated scheme names, e.g. "lecun he ntk xavier"
#   squared     1 when the loss is squared (the exact columns are numbers), else 0
#   relu        1 when the CSV has the real network's columns <s>_relu_kl, _relu_kl_se (optional)
#   title_text  the title
# By hand:
#   gnuplot -e "set terminal pngcairo size 1000,760; set output 'k.png'" \
#           -e "data_file='k.csv'; schemes='lecun he'; squared=0; title_text='x'" plots/house.gp plots/kl-epochs.gp
# with the squared loss the legend has three rows per scheme: a taller canvas
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set grid lc rgb '#e5e5e5'
set logscale y
set format y '10^{%L}'
set xlabel 'epochs k  (Langevin time T = η k)'
set ylabel 'KL privacy loss (all iterates)'
set key outside below center vertical Left reverse maxrows 8 samplen 2.5 spacing 1.0 height 0.5
set xrange [0:*]
ns = words(schemes)
# one colour and point per initialisation (Okabe-Ito); the kind of curve by its dash
sch_color(s) = s eq 'lecun' ? oi_blue : s eq 'he' ? oi_vermillion : s eq 'ntk' ? oi_purple : \
               s eq 'xavier' ? oi_green : oi_grey
sch_point(s) = s eq 'lecun' ? 7 : s eq 'he' ? 5 : s eq 'ntk' ? 9 : s eq 'xavier' ? 13 : 1
sch_label(s) = s eq 'lecun' ? 'LeCun' : s eq 'he' ? 'He' : s eq 'ntk' ? 'NTK' : \
               s eq 'xavier' ? 'Xavier' : s
pos(v) = v > 0 ? v : NaN
exact_part = squared ? \
  "for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_kl_exact'))) every 2 with points pt 6 ps 0.7 lw 1 lc rgb sch_color(word(schemes,i)) notitle, for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_kl_final'))) with lines lw 1.2 dt (1,2) lc rgb sch_color(word(schemes,i)) notitle," : ""
exact_key = squared ? "NaN with points pt 6 ps 0.7 lc rgb '#444444' title 'exact (OU moments)', NaN with lines lw 1.2 dt (1,2) lc rgb '#444444' title 'exact, last iterate only'," : ""
if (!exists("relu")) relu = 0
# kl.network = relu: the real network's Monte Carlo (same data and initialisations), dash-dot
relu_part = relu ? \
  "for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_relu_kl'))):(column(word(schemes,i).'_relu_kl_se')) with yerrorlines pt sch_point(word(schemes,i)) ps 0.45 lw 2.2 dt (6,2,1,2) lc rgb sch_color(word(schemes,i)) notitle," : ""
relu_key = relu ? "NaN with linespoints pt 6 ps 0.45 lw 2.2 dt (6,2,1,2) lc rgb '#444444' title 'real ReLU network ± s.e.'," : ""
plot for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_kl'))):(column(word(schemes,i).'_kl_se')) \
       with yerrorbars pt 7 ps 0.3 lw 0.8 lc rgb sch_color(word(schemes,i)) notitle, \
     for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_kl'))) with lines lw 1.6 dt 1 \
       lc rgb sch_color(word(schemes,i)) title ulabel(i, sch_label(word(schemes,i))), \
     @exact_part \
     @relu_part \
     for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_bound'))) with lines lw 1.2 dt (8,4) \
       lc rgb sch_color(word(schemes,i)) notitle, \
     @exact_key \
     @relu_key \
     NaN with lines lw 1.6 dt 1 lc rgb '#444444' title (relu ? 'linearised network ± s.e.' : 'Monte Carlo ± s.e.'), \
     NaN with lines lw 1.2 dt (8,4) lc rgb '#444444' title 'bound B T/(n²σ²) (c = 4)'
