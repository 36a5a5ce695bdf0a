# rf-p4.gp — `hdpsgd rf-experiment P4` (seed 003 Fig. 2, fourth panel; THEORY.md 7):
# test loss of DP-GD over the clipping constant C (C_clip = C sqrt(p)) and the training
# time CT = eta T p / d at one p; values above 1.6 get the top colour, as in the seed.
# The cross marks seed 003's scaling C_clip ~ sqrt(p), eta T ~ d/p.
# Variables: data_file (CSV of rf-experiment P4), title_text.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'C = C_{clip} / √p   (log scale)'
set ylabel 'CT = η T p / d   (log scale)'
set cblabel 'test loss (capped at 1.6)'
set cbrange [0.3:1.6]
set palette defined (0.3 '#ffffd9', 0.5 '#c7e9b4', 0.7 '#7fcdbb', 0.9 '#41b6c4', 1.1 '#1d91c0', 1.35 '#225ea8', 1.6 '#081d58')
set format x '10^{%g}'
set format y '10^{%g}'
set size ratio 1
set tics out
set autoscale fix
set key outside below center samplen 1
cap(v) = v > 1.6 ? 1.6 : v
plot data_file using (log10($1)):(log10($2)):(cap($7)) with image notitle, \
     '+' using (0):(0) every ::0::0 with points pt 2 ps 3 lw 3 lc rgb '#000000' title 'C_{clip} = √p, ηT = d/p'
