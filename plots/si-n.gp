# si-n.gp — `hdpsgd sim-index --experiment n`: test risk (left axis, log) and mean neuron
# alignment |<w_j, mu>|/||w_j|| (right axis) against the samples per stage n (seed 002).
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
set y2tics 0.1
set ytics nomirror
set key bottom left box opaque noenhanced font fs_small spacing 1.2
plot data_file using 'n':'risk':'risk_se' with yerrorlines lw 2 pt 7 lc rgb oi_blue title 'test risk (Monte Carlo)', \
     data_file using 'n':'gd_risk' with linespoints lw 1.5 dt 2 pt 6 lc rgb oi_vermillion title 'test risk, unclipped GD law', \
     data_file using 'n':'zero_risk' with lines lw 1.2 dt 5 lc rgb oi_grey title 'zero predictor', \
     data_file using 'n':'alignment_mean' axes x1y2 with linespoints lw 2 pt 5 lc rgb oi_green title 'alignment after stage 1 (right)', \
     data_file using 'n':'alignment_init_mean' axes x1y2 with lines lw 1.2 dt 3 lc rgb oi_green title 'alignment at init (right)'
