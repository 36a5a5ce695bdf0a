# nc-sweep.gp — `hdpsgd nc --sweep flat|perturb|remedy`: the misclassification error of
# NoisyGD on neural-collapse features against the feature dimension p (the NC paper;
# docs/theory.md §8).
# Each curve is the Monte Carlo mean over the noise draws with ±1 standard error; where the
# exact one-step error applies it is drawn dotted in the curve's colour.
#
# Variables (set before this script):
#   data_file   CSV written by the command (columns curve, p, error, stderr, exact, ...)
#   title_text  the title (two lines)
#   ncurves     number of curves; curve i = 0..ncurves-1 has
#   label_<i>   its legend text and
#   ref_<i>     1 when it is an unremedied reference (dashed)
#   chance      the error of guessing, 1 - 1/K
#   ymax        top of the error axis
# By hand:
#   gnuplot -e "set terminal pngcairo size 1000,760; set output 'x.png'" \
#           -e "data_file='nc-flat.csv'; title_text='x'; ncurves=1; label_0='a'; ref_0=0; chance=0.9; ymax=1" \
#           plots/house.gp plots/nc-sweep.gp
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set grid lc rgb '#e5e5e5'
set grid mxtics lc rgb '#f2f2f2'
set logscale x
set format x '10^{%L}'
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0
set xlabel 'feature dimension p'
set ylabel 'misclassification error'
set yrange [0:ymax]
ystep = ymax > 0.6 ? 0.2 : 0.1   # a variable: "set ytics (x)" reads as a tic list
set ytics ystep
# the legend under the plot, two columns
set key outside below center vertical Left reverse noenhanced samplen 2.2 spacing 1.0 maxrows 20 height 0.5
# Okabe-Ito colours, then the same colours with a dash: 16 curves stay apart
colors = '#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #999999'
sel(i, v) = column('curve') == i ? v : NaN
do for [i=0:ncurves-1] {
    dash = value(sprintf('ref_%d', i)) ? 2 : (i < 8 ? 1 : 4)   # a variable: "dt (expr)" reads as a dash list
    set style line (i + 1) lc rgb word(colors, i % 8 + 1) lw 1.5 pt (i < 8 ? 7 : 5) ps 0.5 dt dash
}
plot for [i=0:ncurves-1] data_file using 'p':(sel(i, column('error'))):(sel(i, column('stderr'))) \
         with yerrorlines ls (i + 1) title ulabel(i + 1, value(sprintf('label_%d', i))), \
     for [i=0:ncurves-1] data_file using 'p':(sel(i, column('exact'))) \
         with lines lw 1.2 dt (1,2) lc rgb word(colors, i % 8 + 1) notitle, \
     chance with lines lw 1 dt (6,3) lc rgb '#666666' title 'chance 1 − 1/K', \
     NaN with lines lw 1.2 dt (1,2) lc rgb '#000000' title 'exact one-step error'
