# validate.gp — the validator's figure: the ODE prediction (docs/theory.md §3) against the
# Monte Carlo of DP-SGD (docs/theory.md §1) and the homogenized SDE (docs/theory.md §4).
#
# Variables (set before this script):
#   ode_file     CSV of `hdpsgd ode`   (t,risk,risk_upper,risk_lower,...)
#   sim_file     CSV of `hdpsgd sim`   (t,mean,stderr,q10,q50,q90,clipped_fraction)
#   sde_file     CSV of `hdpsgd sde`, or '' for none
#   title_text   the title (the model's key parameters)
#   show_bounds  1 to draw the bounds R_upper, R_lower, 0 not, -1 each unless it leaves the
#                data's range (the ODE curve, the 10-90 % band) by more than that range's span:
#                then it is left out and the key says so, with its extreme value
# `hdpsgd validate --figure F` sets them, the terminal and the house style (plots/house.gp).
# Rows with t < 1 are the trajectory; the row t = 1 is the output theta_n, final-step noise
# included, drawn as markers side by side (ODE, Monte Carlo, SDE) so that none hides another.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'training time t = k/n'
set ylabel 'excess risk R(t)'
set grid lc rgb '#e5e5e5'
set key outside below center Left reverse maxcols 1 samplen 2.2 spacing 1.0 height 1
set xrange [0:1.1]
set xtics 0.2
set style fill transparent solid 0.22 noborder
# hdpsgd defines ulabel (--label) and user_nlabels; exists() sees variables, not functions
if (!exists('user_nlabels')) ulabel(i, def) = def
traj(t, v) = t < 0.9999999 ? v : NaN
fin(t, v) = t >= 0.9999999 ? v : NaN
# show_bounds = -1: a bound is left out when it passes the data's range [lo, hi] by more than hi - lo
show_up = show_bounds != 0; show_lo = show_bounds != 0
if (show_bounds < 0) {
  stats sim_file using (traj($1,$4)):(traj($1,$6)) nooutput prefix 'fq'
  stats ode_file using (traj($1,$2)):(traj($1,$3)) nooutput prefix 'fr'
  stats ode_file using (traj($1,$4)) nooutput prefix 'fl'
  lo = fq_min_x < fr_min_x ? fq_min_x : fr_min_x; hi = fq_max_y > fr_max_x ? fq_max_y : fr_max_x
  show_up = fr_max_y <= 2 * hi - lo; show_lo = fl_min >= 2 * lo - hi
}
bname = show_up && show_lo ? 'ODE bounds R_{upper}, R_{lower}' : (show_up ? 'ODE upper bound R_{upper}' : 'ODE lower bound R_{lower}')
hid(w, v) = sprintf('R_{%s} hidden (to %.2g; --bounds)', w, v)
# the optional parts, as macros that name the variables (never their values)
bounds_part = (show_up ? ", ode_file using 1:(traj($1,$3)) with lines dt (3,3) lw 1 lc rgb oi_grey title bname" : "") . \
  (show_lo ? ", ode_file using 1:(traj($1,$4)) with lines dt (3,3) lw 1 lc rgb oi_grey title (show_up ? '' : bname)" : "") . \
  (show_bounds < 0 && !show_up ? ", keyentry with lines dt (3,3) lc rgb '#cccccc' title hid('upper', fr_max_y)" : "") . \
  (show_bounds < 0 && !show_lo ? ", keyentry with lines dt (3,3) lc rgb '#cccccc' title hid('lower', fl_min)" : "")
sde_part = strlen(sde_file) > 0 ? \
  ", sde_file using 1:(traj($1,$2)) with lines lw 1.8 dt (1,1.5) lc rgb oi_green title ulabel(3, 'homogenized SDE mean'), sde_file using (1.075):(fin($1,$2)):(fin($1,$3)) with yerrorbars pt 9 ps 0.6 lw 1.2 lc rgb oi_green notitle" : ""
plot sim_file using 1:(traj($1,$4)):(traj($1,$6)) with filledcurves dt 1 lc rgb oi_sky title 'Monte Carlo 10–90 % of runs', \
     sim_file using 1:(traj($1,$2)) with lines lw 1.8 dt 1 lc rgb oi_blue title ulabel(2, 'Monte Carlo mean (DP-SGD)'), \
     ode_file using 1:(traj($1,$2)) with lines lw 1.5 dt (6,3) lc rgb oi_vermillion title ulabel(1, 'ODE prediction R(t)') \
     @bounds_part @sde_part, \
     sim_file using (1.045):(fin($1,$2)):(fin($1,$3)) with yerrorbars pt 7 ps 0.55 lw 1.2 lc rgb oi_blue notitle, \
     ode_file using (1.015):(fin($1,$2)) with points pt 5 ps 0.5 lc rgb oi_vermillion notitle, \
     NaN with points pt 5 ps 0.5 lc rgb '#444444' title 'markers right of t = 1: output θ_n'
