# si-n.gp — `hdpsgd sim-index --experiment n`: test risk (left axis, log) and mean neuron
# alignment |<w_j, mu>|/||w_j|| (right axis) against the samples per stage n (the single-index
# notes).
# Variables: data_file, title_text.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set grid lc rgb '#dddddd'
set border lw 1.2
set logscale x
set logscale y
set xlabel 'samples per stage  n'
set ylabel 'test risk  (mean ± 1 s.e.)'
set y2label 'mean alignment  |⟨w_j, μ⟩| / ‖w_j‖'
set y2range [0:1]
set y2tics 0.2
set my2tics 2
set ytics nomirror
set key outside below center vertical Left reverse maxrows 5 noenhanced samplen 2.2 spacing 1.0 width -1 height 0.5
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
set format x '%g'
plot data_file using 'n':'risk':'risk_se' with yerrorlines lw 1.6 dt 1 pt 7 ps 0.6 lc rgb oi_blue title ulabel(1, 'test risk (Monte Carlo)'), \
     data_file using 'n':'gd_risk' with linespoints lw 1.3 dt (8,4) pt 6 ps 0.6 lc rgb oi_vermillion title 'test risk, unclipped GD law', \
     data_file using 'n':'zero_risk' with lines lw 1 dt (10,3) lc rgb oi_grey title 'zero predictor', \
     data_file using 'n':'alignment_mean' axes x1y2 with linespoints lw 1.6 dt 1 pt 5 ps 0.6 lc rgb oi_green title 'alignment after stage 1 (right)', \
     data_file using 'n':'alignment_init_mean' axes x1y2 with lines lw 1.2 dt (2,2) lc rgb oi_green title 'alignment at init (right)'
