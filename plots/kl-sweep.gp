# kl-sweep.gp — `hdpsgd kl run --vs depth|width --figure FIG`: the KL privacy of noisy GD
# against depth (Ye et al., Fig. 2a, 2b) or width (Fig. 2c), a colour per initialisation, after
# the early (left) and all epochs (right): Monte Carlo (c = 4) ± s.e., the exact value
# (squared loss), the real network (relu), the bound B T / (n^2 sigma^2).
#
# Variables (set before this script):
#   data_file     CSV written by the command: depth|width,<s>_kl_early,<s>_kl_early_se,...
#   schemes       space-separated scheme names, e.g. "lecun he ntk xavier"
#   xname         'depth' or 'width' (the first column; width is drawn on a log axis)
#   epochs_early, epochs_final   the two epoch counts
#   squared       1 when the loss is squared (exact columns), else 0
#   relu          1 when the CSV has the real network's <s>_relu_kl... columns (optional)
#   title_text    the title
# By hand:
#   gnuplot -e "set terminal pngcairo size 1400,760; set output 'k.png'" \
#           -e "data_file='k.csv'; schemes='lecun he'; xname='depth'" \
#           -e "epochs_early=20; epochs_final=50; squared=0; title_text='x'" plots/house.gp plots/kl-sweep.gp
set datafile separator ','
set datafile columnheaders
set encoding utf8
set grid lc rgb '#e5e5e5'
set logscale y
set format y '10^{%L}'
if (xname eq 'width') { set logscale x 2; set format x '%g' } else { set xtics 1; unset mxtics }
set xlabel (xname eq 'width' ? 'hidden width m' : 'depth L')
set ylabel 'KL privacy loss'
ns = words(schemes)
# one colour and point per initialisation (Okabe-Ito); the kind of curve by its dash
sch_color(s) = s eq 'lecun' ? oi_blue : s eq 'he' ? oi_vermillion : s eq 'ntk' ? oi_purple : \
               s eq 'xavier' ? oi_green : oi_grey
sch_point(s) = s eq 'lecun' ? 7 : s eq 'he' ? 5 : s eq 'ntk' ? 9 : s eq 'xavier' ? 13 : 1
sch_label(s) = s eq 'lecun' ? 'LeCun' : s eq 'he' ? 'He' : s eq 'ntk' ? 'NTK' : \
               s eq 'xavier' ? 'Xavier' : s
pos(v) = v > 0 ? v : NaN
top = strlen(title_text) > 0 ? 0.8 : 0.9
set multiplot layout 1,2 title title_text noenhanced font fs_title margins 0.08, 0.98, 0.26, top spacing 0.08, 0
set key at screen 0.5, 0.005 center bottom vertical maxrows 2 samplen 2.5 spacing 1.0 width 1
if (!exists("relu")) relu = 0
# exact values and the real network (dash-dot) outside the loop: gnuplot expands a loop
# body's macros before it runs; suf is read when the plot runs
exact_part = squared ? \
  "for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_exact'.suf))) with points pt 6 ps 0.9 lw 1 lc rgb sch_color(word(schemes,i)) notitle," : ""
exact_key = squared ? "NaN with points pt 6 ps 0.9 lc rgb '#444444' title 'exact (OU)'," : ""
relu_part = relu ? \
  "for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_relu_kl'.suf))):(column(word(schemes,i).'_relu_kl'.suf.'_se')) with yerrorlines pt sch_point(word(schemes,i)) ps 0.6 lw 2.2 dt (6,2,1,2) lc rgb sch_color(word(schemes,i)) notitle," : ""
relu_key = relu ? "NaN with linespoints pt 6 ps 0.6 lw 2.2 dt (6,2,1,2) lc rgb '#444444' title 'real ReLU network'," : ""
do for [panel=1:2] {
  suf = panel == 1 ? '_early' : ''
  set title sprintf('%s after %d epochs', panel == 1 ? '(a)' : '(b)', \
                    panel == 1 ? epochs_early : epochs_final) font fs_title
  if (panel == 2) { set key off }
  plot for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_kl'.suf))):(column(word(schemes,i).'_kl'.suf.'_se')) \
         with yerrorlines pt sch_point(word(schemes,i)) ps 0.6 lw 1.6 dt 1 lc rgb sch_color(word(schemes,i)) \
         title ulabel(i, sch_label(word(schemes,i))), \
       @exact_part \
       @relu_part \
       for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_bound'.suf))) with lines lw 1.2 dt (8,4) \
         lc rgb sch_color(word(schemes,i)) notitle, \
       @exact_key \
       @relu_key \
       NaN with lines lw 1.6 dt 1 lc rgb '#444444' title (relu ? 'linearised ± s.e.' : 'Monte Carlo ± s.e.'), \
       NaN with lines lw 1.2 dt (8,4) lc rgb '#444444' title 'bound B T/(n²σ²)'
}
unset multiplot
