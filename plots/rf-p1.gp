# rf-p1.gp — `hdpsgd rf-experiment P1` (seed 003 Fig. 2, first panel; THEORY.md 7):
# test loss against the number of random features p, for DP-GD (best of its small
# hyperparameter grid at every p) and for the min-norm interpolator Phi^+ y, the limit of
# non-private gradient descent from 0 (double descent: the peak at p = n).
# Variables: data_file (CSV of rf-experiment P1), title_text, n_train.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'number of random features p'
set ylabel 'test loss  (1/m) Σ_j (φ(x_j)^T θ − y_j)^2'
set logscale x
set logscale y
set grid lc rgb '#dddddd'
set key top right box opaque samplen 2.5 spacing 1.2
set arrow 1 from n_train, graph 0 to n_train, graph 1 nohead dt 2 lc rgb oi_grey
set label 1 sprintf('p = n = %d', n_train) at first n_train, graph 0.05 offset 0.8, 0 tc rgb oi_grey
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
plot data_file using 1:2 with linespoints lw 2 pt 7 ps 1.2 lc rgb oi_vermillion title 'min-norm interpolator Φ^+y (non-private GD, t → ∞)', \
     data_file using 1:5:6 with yerrorlines lw 2.5 pt 5 ps 1.2 lc rgb oi_blue title 'DP-GD, (ε, δ)-DP: best (C, CT) of the grid', \
     data_file using 1:4 with lines dt 3 lw 1.5 lc rgb oi_grey title 'θ = 0 (mean y^2)'
