# schedule.gp — `hdpsgd schedule --optimize --figure FIG`: the optimised schedules of
# THEORY.md section 5 at the model's fixed rho, and the risk the ODE of section 3
# predicts for each.
#
# Variables (set before this script):
#   data_file   CSV written by the command: t,eta_<family>,risk_<family>,... (one pair of
#               columns per optimised family; the row t = 1 of risk_* is the output theta_n,
#               final-step noise included)
#   families    space-separated family names, e.g. "output linear-noise optimal pl"
#   final_risks space-separated final risks of the families, in the same order (legend)
#   title_text  the title
# By hand:
#   gnuplot -e "set terminal pngcairo size 1000,900; set output 's.png'" \
#           -e "data_file='s.schedules.csv'; families='output optimal'; final_risks='0.005 0.0025'; title_text='x'" plots/schedule.gp
# two panels: a taller canvas than the default of hdp_plot_draw (same terminal, same font)
set datafile separator ','
set datafile columnheaders
set encoding utf8
set grid lc rgb '#dddddd'
set border lw 1.2
set xrange [0:1.03]
set logscale y
nf = words(families)
# one colour per family, the same in both panels
fam_color(name) = name eq 'output' ? oi_blue : name eq 'linear-noise' ? oi_orange : \
                  name eq 'optimal' ? oi_green : name eq 'pl' ? oi_vermillion : oi_grey
fam_label(name) = name eq 'output' ? 'output perturbation  η̃ = η̃_0' : \
                  name eq 'linear-noise' ? 'linear noise  η̃ = η̃_0 √(1−t)' : \
                  name eq 'optimal' ? 'optimal  η̃ = c_1/(t+a)' : \
                  name eq 'pl' ? 'piecewise linear (non-increasing knots)' : name
traj(t, v) = t < 0.9999999 ? v : NaN
fin(t, v) = t >= 0.9999999 ? v : NaN

set multiplot layout 2,1 title title_text noenhanced font fs_title
set key below maxrows 2 box samplen 2.5 spacing 1.15 width 1
set ylabel 'learning rate  η̃(t)  (step size η_k = η̃(k/n)/n)'
unset xlabel
plot for [i=1:nf] data_file using 1:(column('eta_'.word(families,i))) with lines lw 2.5 \
     lc rgb fam_color(word(families,i)) title fam_label(word(families,i))

set ylabel 'predicted excess risk  R(t)  (ODE)'
set xlabel 'training time t = k/n   (marker at t = 1: the output θ_n, final-step noise included)'
plot for [i=1:nf] data_file using 1:(traj($1, column('risk_'.word(families,i)))) with lines lw 2.5 \
     lc rgb fam_color(word(families,i)) title word(families,i).'  (final risk '.word(final_risks,i).')', \
     for [i=1:nf] data_file using 1:(fin($1, column('risk_'.word(families,i)))) with points pt 7 ps 1.5 \
     lc rgb fam_color(word(families,i)) notitle
unset multiplot
