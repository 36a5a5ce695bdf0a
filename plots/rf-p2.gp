# rf-p2.gp — `hdpsgd rf-experiment P2` (Bombari-Mondelli, Fig. 2, second panel; docs/theory.md §7):
# test loss of DP-GD against the number of steps T at C_clip = C sqrt(p) and a fixed
# eta, one curve per p (solid); dashed: the unclipped OU process's expected test loss
# at tau = eta T with the same sigma (closed form). The optimal T falls as p grows.
# Variables: data_file (CSV of rf-experiment P2), title_text, p_list (the p values).
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'DP-GD steps T  (σ calibrated to (ε, δ) for each T)'
set ylabel 'test loss'
set logscale x
set format x '10^{%L}'
set grid lc rgb '#e5e5e5'
set key outside below center Left reverse maxcols 2 samplen 2.5 spacing 1.0 height 0.5
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
sel(p, v) = ($1 == p) ? v : NaN
np = words(p_list)
# solid with error bars: DP-GD; dashed in the same colour: the OU closed form
plot for [i=1:np] data_file using 3:(sel(word(p_list,i)+0, $8)):(sel(word(p_list,i)+0, $9)) with yerrorlines lt i dt 1 ps 0.5 title ulabel(i, sprintf('p = %s', word(p_list,i))), \
     for [i=1:np] data_file using 3:(sel(word(p_list,i)+0, $12)) with lines lt i dt (8,4) lw 1.2 notitle, \
     NaN with lines dt (8,4) lw 1.2 lc rgb '#444444' title 'OU closed form'
