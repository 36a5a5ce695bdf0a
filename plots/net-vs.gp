# net-vs.gp — `hdpsgd net --vs width|samples` (the privacy-for-free paper, Fig. 1;
# docs/theory.md §7.4): test accuracy against the hidden-layer width or the training samples
# n, for DP-GD on both layers, DP-GD on the second layer only (random features) and plain GD,
# each at the configuration of best validation accuracy.
# Variables: data_file (CSV of net --vs), title_text, xcol ('width' or 'samples'),
# xlabel_text.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel xlabel_text
set ylabel 'test accuracy'
set logscale x
set format x '%g'
set grid lc rgb '#e5e5e5'
set key outside below center Left reverse maxcols 1 samplen 2.5 spacing 1.0 height 0.5 noenhanced
set autoscale xfix
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
plot data_file using xcol:'gd_test_accuracy' with linespoints lw 1.6 dt (8,4) pt 6 ps 0.7 lc rgb oi_grey title ulabel(1, 'GD (non-private), both layers'), \
     data_file using xcol:'test_accuracy' with linespoints lw 1.8 dt 1 pt 7 ps 0.7 lc rgb oi_blue title ulabel(2, 'DP-GD, both layers'), \
     data_file using xcol:'rf_test_accuracy' with linespoints lw 1.6 dt 1 pt 5 ps 0.7 lc rgb oi_vermillion title ulabel(3, 'DP-GD, second layer only (random features)')
