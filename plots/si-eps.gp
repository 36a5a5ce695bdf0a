# si-eps.gp — `hdpsgd sim-index --experiment eps`: test risk of the two-stage private network
# against the stage-2 epsilon (the single-index notes; docs/theory.md §6 to §8). Monte Carlo mean ±
# 1 s.e. over the stage-2 runs, the expected risk of the OU law and of unclipped discrete GD, the
# non-private risk (epsilon = inf) and the zero predictor.
# Variables: data_file, title_text, nonpriv (risk at epsilon = inf; < 0 when absent).
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set grid lc rgb '#dddddd'
set border lw 1.2
set logscale xy
set xlabel 'stage-2 ε  (CKS at δ, zCDP accounting)'
set ylabel 'test risk  E(f(x) − f_*(x))²'
set key outside below center vertical Left reverse maxrows 5 noenhanced samplen 2.2 spacing 1.0 height 0.5
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
fin(x) = (x > 0 && x < 1e300) ? x : NaN
plot data_file using (fin(column('epsilon_stage2'))):'risk':'risk_se' with yerrorlines lw 1.6 dt 1 pt 7 ps 0.6 lc rgb oi_blue title ulabel(1, 'Monte Carlo'), \
     data_file using (fin(column('epsilon_stage2'))):'gd_risk' with linespoints lw 1.3 dt (8,4) pt 6 ps 0.6 lc rgb oi_vermillion title ulabel(2, 'unclipped GD law'), \
     data_file using (fin(column('epsilon_stage2'))):'ou_risk' with lines lw 1.3 dt (2,2) lc rgb oi_green title ulabel(3, 'OU at τ = η_a T'), \
     (nonpriv > 0 ? nonpriv : NaN) with lines lw 1 dt (6,2,2,2) lc rgb '#000000' title 'non-private (ε = ∞)', \
     data_file using (fin(column('epsilon_stage2'))):'zero_risk' with lines lw 1 dt (10,3) lc rgb oi_grey title 'zero predictor'
