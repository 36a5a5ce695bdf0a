# rf-run.gp — `hdpsgd plot rf.csv`: the test loss of DP-GD on random features against the
# training time tau = eta * step (mean ± 1 s.e. over the runs), the exact OU expected test loss
# (closed form), the Euler–Maruyama OU path coupled to DP-GD, and the non-private baselines
# (min-norm interpolator, gradient flow) (Bombari-Mondelli; docs/theory.md §7).
# Variables: data_file (CSV of `hdpsgd rf`), title_text.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'training time τ = η · step'
set ylabel 'test loss'
set grid lc rgb '#e5e5e5'
set key outside below center vertical Left reverse maxrows 5 noenhanced samplen 2.2 spacing 1.0 height 0.5
set autoscale xfix
set offsets 0, 0, graph 0.05, graph 0.05
plot data_file using 'tau':'dpgd_test':'dpgd_test_se' with yerrorlines lt 1 ps 0.5 title ulabel(1, 'DP-GD (± s.e.)'), \
     data_file using 'tau':'ou_test' with lines lt 2 title ulabel(2, 'OU process, closed form'), \
     data_file using 'tau':'em_test' with lines lt 3 title ulabel(3, 'OU, Euler–Maruyama (coupled)'), \
     data_file using 'tau':'gf_test' with lines lt 7 lw 1 title 'gradient flow (non-private)', \
     data_file using 'tau':'minnorm_test' with lines lt 8 lw 1 title 'min-norm interpolator'
