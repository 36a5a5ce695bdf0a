# net-curve.gp — `hdpsgd net` (the privacy-for-free paper, last panel of Fig. 2;
# docs/theory.md §7.4): test, validation and training loss of one DP-GD run of the two-layer
# ReLU network against the training time eta t, with the test accuracy on the right axis.
# Variables: data_file (CSV of net), title_text.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'training time  η t'
set ylabel 'mean loss'
set y2label 'test accuracy'
set y2range [0:1]
set y2tics 0.2
set ytics nomirror
set grid lc rgb '#e5e5e5'
set key outside below center Left reverse maxcols 2 samplen 2.5 spacing 1.0 height 0.5 noenhanced
set autoscale xfix
set offsets graph 0.02, graph 0.02, 0, 0
plot data_file using 'time':'test_loss' with linespoints lw 1.8 dt 1 pt 7 ps 0.5 lc rgb oi_blue title ulabel(1, 'test loss'), \
     data_file using 'time':'val_loss' with lines lw 1.2 dt (6,3) lc rgb oi_green title ulabel(2, 'validation loss'), \
     data_file using 'time':'train_loss' with lines lw 1.2 dt (2,2) lc rgb oi_grey title ulabel(3, 'training loss'), \
     data_file using 'time':'test_accuracy' axes x1y2 with lines lw 1.4 dt 1 lc rgb oi_vermillion title ulabel(4, 'test accuracy (right)')
