# validate.gp — the validator's figure: the ODE prediction (THEORY 3) against the
# Monte Carlo of DP-SGD (THEORY 1) and the homogenized SDE (THEORY 4).
#
# Variables (set before this script):
#   ode_file     CSV of `hdpsgd ode`   (t,risk,risk_upper,risk_lower,...)
#   sim_file     CSV of `hdpsgd sim`   (t,mean,stderr,q10,q50,q90,clipped_fraction)
#   sde_file     CSV of `hdpsgd sde`, or '' for none
#   title_text   the title (the model's key parameters)
#   show_bounds  1 to draw the bounds R_upper, R_lower (spectra with Sigma != I)
# `hdpsgd validate --figure F` sets them and the terminal; by hand:
#   gnuplot -e "set terminal pngcairo size 1000,680; set output 'v.png'" \
#           -e "ode_file='v.ode.csv'; sim_file='v.sim.csv'; sde_file='v.sde.csv'" \
#           -e "title_text='my model'; show_bounds=1" plots/validate.gp
# Rows with t < 1 are the trajectory; the row t = 1 is the output theta_n,
# final-step noise included, drawn as a separate marker.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font ',12'
set xlabel 'training time t = k/n  (fraction of the single pass over the n samples)'
set ylabel 'excess risk  R_{exc}(θ_k) = ½ ‖Σ^{1/2}(θ_k − θ^*)‖²'
set grid lc rgb '#dddddd'
set key outside below center horizontal maxcols 2 box samplen 2.5 spacing 1.1 width 2
set bmargin 9
set xrange [0:1.03]
set border lw 1.2
set style fill transparent solid 0.35 noborder
traj(t, v) = t < 0.9999999 ? v : NaN
fin(t, v) = t >= 0.9999999 ? v : NaN
bounds_part = show_bounds ? \
  sprintf(", '%s' using 1:(traj($1,$3)) with lines dt 2 lw 1.5 lc rgb '#7f7f7f' title 'ODE bounds R_{upper}, R_{lower}', '%s' using 1:(traj($1,$4)) with lines dt 2 lw 1.5 lc rgb '#7f7f7f' notitle", ode_file, ode_file) : ""
sde_part = strlen(sde_file) > 0 ? \
  sprintf(", '%s' using 1:(traj($1,$2)) with lines lw 2 dt 4 lc rgb '#2ca02c' title 'homogenized SDE mean (Euler–Maruyama)', '%s' using 1:(fin($1,$2)) with points pt 9 ps 1.8 lc rgb '#2ca02c' notitle", sde_file, sde_file) : ""
plot sim_file using 1:(traj($1,$4)):(traj($1,$6)) with filledcurves lc rgb '#6baed6' title 'Monte Carlo 10–90 % of runs', \
     sim_file using 1:(traj($1,$2)) with lines lw 2.5 lc rgb '#08519c' title 'Monte Carlo mean (DP-SGD)', \
     ode_file using 1:(traj($1,$2)) with lines lw 2 lc rgb '#d62728' title 'ODE prediction R(t)' \
     @bounds_part @sde_part, \
     sim_file using 1:(fin($1,$2)):(fin($1,$3)) with yerrorbars pt 7 ps 1.4 lw 1.5 lc rgb '#08519c' title 'final iterate θ_n (Monte Carlo ± stderr)', \
     ode_file using 1:(fin($1,$2)) with points pt 5 ps 1.5 lc rgb '#d62728' title 'final iterate θ_n (ODE + final noise)'
