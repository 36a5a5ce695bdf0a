# rf-p1.gp — `hdpsgd rf-experiment P1` (Bombari-Mondelli, Fig. 2, first panel; docs/theory.md §7):
# test loss against the number of random features p, for DP-GD (the configuration of its
# small hyperparameter grid chosen on the validation set at every p, its test loss) and for
# the min-norm interpolator Phi^+ y, the limit of non-private gradient descent from 0
# (double descent: the peak at p = n).
# Variables: data_file (CSV of rf-experiment P1), title_text, n_train, select_text
# ('validation' by default, 'test' for --select-on test).
if (!exists("select_text")) select_text = 'validation'
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'random features p'
set ylabel 'test loss'
set logscale x
set logscale y
set format x '10^{%L}'
set grid lc rgb '#e5e5e5'
set key outside below center Left reverse maxcols 1 samplen 2.5 spacing 1.0 height 0.5
set arrow 1 from n_train, graph 0 to n_train, graph 1 nohead dt (3,3) lc rgb oi_grey
set label 1 sprintf('p = n = %d', n_train) at first n_train, graph 0.06 offset 0.5, 0 tc rgb '#666666' font fs_small
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
plot data_file using 1:2 with linespoints lt 2 dt 1 ps 0.6 title ulabel(1, 'min-norm interpolator Φ^+y (non-private)'), \
     data_file using 1:5:6 with yerrorlines lt 1 ps 0.6 title ulabel(2, sprintf('DP-GD, (C, CT) chosen on %s', select_text)), \
     data_file using 1:4 with lines lt 8 lw 1.2 title 'θ = 0 (mean y^2)'
