# kl-sweep.gp — `hdpsgd kl run --vs depth|width --figure FIG`: the KL privacy of noisy GD on
# the linearised ReLU network against depth (seed 001 Fig. 2a, 2b) or width (Fig. 2c), one
# colour per initialisation: left after the early epoch count, right after all epochs.
# Monte Carlo (constant c = 4) with its standard error, the exact value for the squared loss,
# and the bound of Corollary 4.2 with c = 4, B T / (n^2 sigma^2).
#
# Variables (set before this script):
#   data_file     CSV written by the command: depth|width,<s>_kl_early,<s>_kl_early_se,...
#   schemes       space-separated scheme names, e.g. "lecun he ntk xavier"
#   xname         'depth' or 'width' (the first column; width is drawn on a log axis)
#   epochs_early, epochs_final   the two epoch counts
#   squared       1 when the loss is squared (exact columns), else 0
#   title_text    the title
# By hand:
#   gnuplot -e "set terminal pngcairo size 1400,760; set output 'k.png'" \
#           -e "data_file='k.csv'; schemes='lecun he'; xname='depth'" \
#           -e "epochs_early=20; epochs_final=50; squared=0; title_text='x'" plots/kl-sweep.gp
set datafile separator ','
set datafile columnheaders
set encoding utf8
set grid lc rgb '#dddddd'
set border lw 1.2
set logscale y
set format y '10^{%L}'
if (xname eq 'width') set logscale x 2; set format x '%g'
set xlabel (xname eq 'width' ? 'hidden width m  (log scale)' : 'depth L  (L − 1 hidden ReLU layers)')
set ylabel 'KL privacy loss (worst remove-one neighbour, c = 4)'
ns = words(schemes)
sch_color(s) = s eq 'lecun' ? oi_blue : s eq 'he' ? oi_vermillion : s eq 'ntk' ? oi_purple : \
               s eq 'xavier' ? oi_green : oi_grey
sch_label(s) = s eq 'lecun' ? 'LeCun' : s eq 'he' ? 'He' : s eq 'ntk' ? 'NTK' : \
               s eq 'xavier' ? 'Xavier' : s
pos(v) = v > 0 ? v : NaN
set multiplot layout 1,2 title title_text noenhanced font fs_title
set key outside below center horizontal maxcols 2 box samplen 3 spacing 1.1 font fs_small
set bmargin 9
do for [panel=1:2] {
  suf = panel == 1 ? '_early' : ''
  set title sprintf('%s: after %d epochs', panel == 1 ? '(a)' : '(b)', \
                    panel == 1 ? epochs_early : epochs_final) font fs_title
  exact_part = squared ? \
    sprintf("for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_exact%s'))) with points pt 6 ps 1.6 lw 1.5 lc rgb sch_color(word(schemes,i)) title sch_label(word(schemes,i)).': exact (OU)',", suf) : ""
  plot for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_kl'.suf))):(column(word(schemes,i).'_kl'.suf.'_se')) \
         with yerrorlines pt 7 ps 1.1 lw 2.2 lc rgb sch_color(word(schemes,i)) \
         title sch_label(word(schemes,i)).': Monte Carlo ± stderr', \
       @exact_part \
       for [i=1:ns] data_file using 1:(pos(column(word(schemes,i).'_bound'.suf))) with lines lw 1.3 dt (8,4,2,4) \
         lc rgb sch_color(word(schemes,i)) title sch_label(word(schemes,i)).': bound B T/(n²σ²)'
}
unset multiplot
