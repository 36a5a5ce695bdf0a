# nc-sweep.gp — `hdpsgd nc --sweep flat|perturb|remedy`: the misclassification error of
# NoisyGD on neural-collapse features against the feature dimension p (seed 004; THEORY.md 8).
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
#           plots/nc-sweep.gp
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set grid lc rgb '#dddddd'
set grid mxtics lc rgb '#eeeeee'
set border lw 1.2
set logscale x
set format x '10^{%L}'
set xlabel 'feature dimension  p'
set ylabel 'misclassification error  (mean over noise draws ± 1 s.e.)'
set yrange [0:ymax]
ystep = ymax > 0.6 ? 0.1 : 0.05   # a variable: "set ytics (x)" reads as a tic list
set ytics ystep
# the legend under the plot, clear of the curves and of the axis label
set key at screen 0.5, 0.01 center bottom Left reverse box noenhanced samplen 2.5 spacing 1.1 \
    font fs_small maxrows 6 width 2
set bmargin at screen 0.23
colors = '#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #17becf #bcbd22 #7f7f7f #000000 #aaaaaa'
sel(i, v) = column('curve') == i ? v : NaN
do for [i=0:ncurves-1] {
    dash = value(sprintf('ref_%d', i)) ? 2 : 1   # a variable: "dt (expr)" reads as a dash list
    set style line (i + 1) lc rgb word(colors, i + 1) lw 2 pt 7 ps 0.9 dt dash
}
plot for [i=0:ncurves-1] data_file using 'p':(sel(i, column('error'))):(sel(i, column('stderr'))) \
         with yerrorlines ls (i + 1) title value(sprintf('label_%d', i)), \
     for [i=0:ncurves-1] data_file using 'p':(sel(i, column('exact'))) \
         with lines lw 1.6 dt 3 lc rgb word(colors, i + 1) notitle, \
     chance with lines lw 1.2 dt 4 lc rgb oi_grey title 'chance level 1 − 1/K', \
     NaN with lines lw 1.6 dt 3 lc rgb '#000000' title 'dotted: exact one-step error (THEORY 8)'
