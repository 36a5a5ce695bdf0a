# curves.gp — `hdpsgd plot`: any number of the toolkit's risk curves in one figure.
#
# Variables:
#   ode_files   space-separated CSVs of `hdpsgd ode` (column risk; bounds dashed if bounds=1)
#   mc_files    space-separated CSVs of `hdpsgd sim` / `hdpsgd sde` (mean with a 10–90 % band)
#   title_text  the title
#   bounds      1 to draw the ODE bounds
#   logy        1 for a logarithmic risk axis
# File names must not contain spaces. The row t = 1 (the output theta_n, final
# noise included) is drawn as a marker.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font ',12'
set xlabel 'training time t = k/n  (fraction of the single pass over the n samples)'
set ylabel 'excess risk  R_{exc} = ½ ‖Σ^{1/2}(θ − θ^*)‖²'
set grid lc rgb '#dddddd'
set key top right box opaque samplen 2.5 spacing 1.15 noenhanced
set xrange [0:1.03]
if (logy) set logscale y
set style fill transparent solid 0.25 noborder
traj(t, v) = t < 0.9999999 ? v : NaN
fin(t, v) = t >= 0.9999999 ? v : NaN
nm = words(mc_files)
no = words(ode_files)
mc_part = nm > 0 ? "for [i=1:nm] word(mc_files,i) using 1:(traj($1,$4)):(traj($1,$6)) with filledcurves lc i notitle, for [i=1:nm] word(mc_files,i) using 1:(traj($1,$2)) with lines lw 2.5 lc i title word(mc_files,i).' (mean, 10–90 %)', for [i=1:nm] word(mc_files,i) using 1:(fin($1,$2)):(fin($1,$3)) with yerrorbars pt 7 ps 1.3 lc i notitle" : ""
sep = (nm > 0 && no > 0) ? "," : ""
ode_part = no > 0 ? "for [i=1:no] word(ode_files,i) using 1:(traj($1,$2)) with lines lw 2 dt 1 lc nm+i title word(ode_files,i).' (ODE)', for [i=1:no] word(ode_files,i) using 1:(fin($1,$2)) with points pt 5 ps 1.3 lc nm+i notitle" : ""
bnd_part = (no > 0 && bounds) ? ", for [i=1:no] word(ode_files,i) using 1:(traj($1,$3)) with lines dt 2 lc nm+i notitle, for [i=1:no] word(ode_files,i) using 1:(traj($1,$4)) with lines dt 2 lc nm+i notitle" : ""
plot @mc_part @sep @ode_part @bnd_part
