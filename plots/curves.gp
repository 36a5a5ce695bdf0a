# curves.gp — `hdpsgd plot`: any number of the toolkit's risk curves in one figure.
#
# Variables:
#   files         space-separated CSVs, in the order given: `hdpsgd ode` (t,risk,risk_upper,
#                 risk_lower,...), `hdpsgd sim` / `hdpsgd sde` (t,mean,stderr,q10,q50,q90,...)
#   kinds         a word per file: o (ODE), m (Monte Carlo), s (SDE)
#   ode_idx, mc_idx  the numbers (from 1) of the ODE files and of the Monte Carlo/SDE files
#   colour_<i>    the house line type of file i (its colour); label_<i> its legend text
#   title_text    the title
#   bounds        1 to draw the ODE bounds
# `hdpsgd plot` sets them, the terminal and the house style (plots/house.gp); by hand:
#   gnuplot -e "set terminal pngcairo; set output 'c.png'; files='a.csv b.csv'; kinds='o m'" \
#           -e "ode_idx='1'; mc_idx='2'; colour_1=2; colour_2=1; label_1='ODE'" \
#           -e "label_2='MC'; title_text=''; bounds=0" plots/house.gp plots/curves.gp
# File names must not contain spaces (hdpsgd gives the script private copies named
# data1.csv, ...). ODE curves are dashed, Monte Carlo means solid over a light 10-90 % band,
# SDE means dotted; the row t = 1 (the output theta_n, final noise included) is drawn as a
# marker at t = 1 (the files' side by side, 0.02 apart). The legend lists the files in the order given.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'training time t = k/n'
set ylabel 'excess risk R(t)'
set grid lc rgb '#e5e5e5'
set key outside below center Left reverse noenhanced samplen 2.2 spacing 1.0 height 1 maxcols 1
nall = words(files)
# the markers of the files side by side about t = 1, 0.02 apart, so that none hides another
dodge(i) = 1 + 0.02 * (i - (nall + 1) / 2.0)
set xrange [0:1.03 + 0.01 * nall]
set style fill transparent solid 0.12 noborder
traj(t, v) = t < 0.9999999 ? v : NaN
fin(t, v) = t >= 0.9999999 ? v : NaN
lc_(i) = value(sprintf('colour_%d', i))
lab(i) = exists(sprintf('label_%d', i)) ? value(sprintf('label_%d', i)) : word(files, i)
dsh(i) = word(kinds, i) eq 'o' ? 2 : (word(kinds, i) eq 's' ? 3 : 1)
f(s) = word(files, int(s))
# the parts as macros that name the variables (never their values); a band: light fill and
# thin edges in its colour, so that two bands stay apart; its mean on top
mc_part = words(mc_idx) > 0 ? "for [s in mc_idx] f(s) using 1:(traj($1,$4)):(traj($1,$6)) with filledcurves lt lc_(int(s)) notitle, for [s in mc_idx] f(s) using 1:(traj($1,$4)) with lines lt lc_(int(s)) lw 0.7 dt 1 notitle, for [s in mc_idx] f(s) using 1:(traj($1,$6)) with lines lt lc_(int(s)) lw 0.7 dt 1 notitle, for [s in mc_idx] f(s) using 1:(traj($1,$2)) with lines lt lc_(int(s)) dt dsh(int(s)) notitle, for [s in mc_idx] f(s) using (dodge(int(s))):(fin($1,$2)):(fin($1,$3)) with yerrorbars lt lc_(int(s)) pt 7 ps 0.5 notitle" : ""
sep = (words(mc_idx) > 0 && words(ode_idx) > 0) ? "," : ""
ode_part = words(ode_idx) > 0 ? "for [s in ode_idx] f(s) using 1:(traj($1,$2)) with lines lt lc_(int(s)) dt 2 notitle, for [s in ode_idx] f(s) using (dodge(int(s))):(fin($1,$2)) with points lt lc_(int(s)) pt 5 ps 0.5 notitle" : ""
bnd_part = (words(ode_idx) > 0 && bounds) ? ", for [s in ode_idx] f(s) using 1:(traj($1,$3)) with lines lt lc_(int(s)) lw 0.8 dt (3,3) notitle, for [s in ode_idx] f(s) using 1:(traj($1,$4)) with lines lt lc_(int(s)) lw 0.8 dt (3,3) notitle" : ""
# the key, in the order of the files, then the bounds and the markers
keys = ", for [i=1:nall] keyentry with lines lt lc_(i) dt dsh(i) title lab(i)"
keys = keys.((words(ode_idx) > 0 && bounds) ? ", keyentry with lines lc rgb '#444444' lw 0.8 dt (3,3) title 'ODE bounds (upper, lower)'" : "")
keys = keys.", keyentry with points pt 7 ps 0.5 lc rgb '#444444' title 'markers at t = 1: the output (final iterate)'"
plot @mc_part @sep @ode_part @bnd_part @keys
