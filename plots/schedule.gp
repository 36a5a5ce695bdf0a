# schedule.gp — `hdpsgd schedule --optimize --figure FIG`: the optimised schedules of
# docs/theory.md §5 at the model's fixed rho, and the risk the ODE of section 3
# predicts for each.
#
# Variables (set before this script):
#   data_file   CSV written by the command: t,eta_<family>,risk_<family>,... (one pair of
#               columns per optimised family; the row t = 1 of risk_* is the output theta_n,
#               final-step noise included)
#   families    space-separated family names, e.g. "output linear-noise inverse-time pl"
#   final_risks space-separated final risks of the families, in the same order (legend)
#   title_text  the title
# By hand:
#   gnuplot -e "set terminal pngcairo size 1000,900; set output 's.png'" \
#           -e "data_file='s.schedules.csv'; families='output inverse-time'; final_risks='0.005 0.0025'; title_text='x'" plots/house.gp plots/schedule.gp
# two panels: a taller canvas than the default of hdp_plot_draw (same terminal, same font)
set datafile separator ','
set datafile columnheaders
set encoding utf8
set grid lc rgb '#e5e5e5'
set xrange [0:1.04]
set xtics 0.2
set logscale y
set format y '10^{%L}'
nf = words(families)
# one colour, dash type and point per family, the same in both panels (Okabe-Ito)
fam_lt(name) = name eq 'output' ? 1 : name eq 'linear-noise' ? 5 : name eq 'inverse-time' ? 3 : \
               name eq 'pl' ? 2 : 8
fam_label(name) = name eq 'output' ? 'output  η̃_0' : \
                  name eq 'linear-noise' ? 'linear noise  η̃_0 √(1−t)' : \
                  name eq 'inverse-time' ? 'inverse-time  c_1/(t+a)' : \
                  name eq 'pl' ? 'piecewise linear' : name
traj(t, v) = t < 0.9999999 ? v : NaN
fin(t, v) = t >= 0.9999999 ? v : NaN
# two panels sharing t, the legend under both (each entry with the family's final risk)
top = strlen(title_text) > 0 ? 0.84 : 0.97
set multiplot layout 2,1 title title_text noenhanced font fs_title \
    margins 0.2, 0.96, 0.26, top spacing 0, 0.035
set key off
set ylabel 'learning rate η̃(t)'
set format x ''
fig_shared_x = 1
plot for [i=1:nf] data_file using 1:(column('eta_'.word(families,i))) with lines lt fam_lt(word(families,i))
set format x '%g'
fig_shared_x = 0
set ylabel 'predicted risk R(t)'
set xlabel 'training time t = k/n  (dot: output θ_n)'
set key at screen 0.1, 0.005 left bottom Left reverse maxcols 1 samplen 2.5 spacing 1.0 noenhanced
plot for [i=1:nf] data_file using 1:(traj($1, column('risk_'.word(families,i)))) with lines \
     lt fam_lt(word(families,i)) title ulabel(i, fam_label(word(families,i))).' — final risk '.word(final_risks,i) enhanced, \
     for [i=1:nf] data_file using (1.02):(fin($1, column('risk_'.word(families,i)))) with points pt 7 ps 0.6 \
     lc rgb word('#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #999999', fam_lt(word(families,i))) notitle
unset multiplot
