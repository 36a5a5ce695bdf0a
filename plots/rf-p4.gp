# rf-p4.gp — `hdpsgd rf-experiment P4` (Bombari-Mondelli, Fig. 2, fourth panel; docs/theory.md §7):
# test loss of DP-GD over the clipping constant C (C_clip = C sqrt(p)) and the training
# time CT = eta T p / d at one p; values above 1.6 get the top colour, as in the paper.
# The cross marks Bombari-Mondelli's scaling C_clip ~ sqrt(p), eta T ~ d/p.
# Variables: data_file (CSV of rf-experiment P4), title_text.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'C = C_{clip} / √p'
set ylabel 'CT = η T p / d'
set cblabel 'test loss (≤ 1.6)'
set cbrange [0.3:1.6]
set palette defined (0.3 '#fde725', 0.6 '#5ec962', 0.9 '#21918c', 1.25 '#3b528b', 1.6 '#440154')
set format x '10^{%g}'
set format y '10^{%g}'
set tics out
set xtics 1
set ytics 1
set rmargin 9
set autoscale fix
set key outside below center samplen 1
unset mxtics
unset mytics
cap(v) = v > 1.6 ? 1.6 : v
plot data_file using (log10($1)):(log10($2)):(cap($7)) with image notitle, \
     '+' using (0):(0) every ::0::0 with points pt 2 ps 1.5 lw 2 lc rgb '#ffffff' title 'C_{clip} = √p, ηT = d/p'
