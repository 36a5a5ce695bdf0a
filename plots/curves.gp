# curves.gp — `hdpsgd plot`: any number of the toolkit's risk curves in one figure.
#
# Variables:
#   ode_files     space-separated CSVs of `hdpsgd ode` (column risk; bounds dashed if bounds=1)
#   mc_files      space-separated CSVs of `hdpsgd sim` / `hdpsgd sde` (mean with a 10–90 % band)
#   ode_label_<i>, mc_label_<i>  the legend text of the i-th file of each list (from 1)
#   title_text    the title
#   bounds        1 to draw the ODE bounds
# `hdpsgd plot` sets them, the terminal and the house style (line types 1-8: the Okabe-Ito
# colours with distinct dash types); by hand:
#   gnuplot -e "set terminal pngcairo; set output 'c.png'; ode_files='a.csv'; mc_files='b.csv'" \
#           -e "ode_label_1='ODE'; mc_label_1='MC'; title_text=''; bounds=0" plots/house.gp plots/curves.gp
# File names must not contain spaces (hdpsgd gives the script private copies named
# data1.csv, ...). The row t = 1 (the output theta_n, final
# noise included) is drawn as a marker, the markers of the files side by side at t = 1.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'training time t = k/n'
set ylabel 'excess risk R(t)'
set grid lc rgb '#e5e5e5'
set key outside below center Left reverse noenhanced samplen 2.2 spacing 1.0 height 1 maxcols 1
if (!exists('ode_label_1')) ode_label_1 = 'ODE'
if (!exists('mc_label_1')) mc_label_1 = 'Monte Carlo'
nm = words(mc_files)
no = words(ode_files)
nall = nm + no
set xrange [0:1 + 0.03 * (nall + 1)]
set style fill transparent solid 0.12 noborder
traj(t, v) = t < 0.9999999 ? v : NaN
fin(t, v) = t >= 0.9999999 ? v : NaN
dodge(i) = 1 + 0.03 * i - 0.015
mclab(i) = exists(sprintf('mc_label_%d', i)) ? value(sprintf('mc_label_%d', i)) : word(mc_files, i)
odelab(i) = exists(sprintf('ode_label_%d', i)) ? value(sprintf('ode_label_%d', i)) : word(ode_files, i)
# a band: light fill and thin edges in its colour, so that two bands stay apart; its mean on top
mc_part = nm > 0 ? "for [i=1:nm] word(mc_files,i) using 1:(traj($1,$4)):(traj($1,$6)) with filledcurves lt i notitle, for [i=1:nm] word(mc_files,i) using 1:(traj($1,$4)) with lines lt i lw 0.7 notitle, for [i=1:nm] word(mc_files,i) using 1:(traj($1,$6)) with lines lt i lw 0.7 notitle, for [i=1:nm] word(mc_files,i) using 1:(traj($1,$2)) with lines lt i title mclab(i), for [i=1:nm] word(mc_files,i) using (dodge(i)):(fin($1,$2)):(fin($1,$3)) with yerrorbars lt i dt 1 ps 0.5 notitle" : ""
sep = (nm > 0 && no > 0) ? "," : ""
ode_part = no > 0 ? "for [i=1:no] word(ode_files,i) using 1:(traj($1,$2)) with lines lt nm+i title odelab(i), for [i=1:no] word(ode_files,i) using (dodge(nm+i)):(fin($1,$2)) with points lt nm+i ps 0.5 notitle" : ""
bnd_part = (no > 0 && bounds) ? ", for [i=1:no] word(ode_files,i) using 1:(traj($1,$3)) with lines lt nm+i lw 0.8 dt (3,3) title (i == 1 ? 'ODE bounds (upper, lower)' : ''), for [i=1:no] word(ode_files,i) using 1:(traj($1,$4)) with lines lt nm+i lw 0.8 dt (3,3) notitle" : ""
plot @mc_part @sep @ode_part @bnd_part
