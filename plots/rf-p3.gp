# rf-p3.gp — `hdpsgd rf-experiment P3` (seed 003 Fig. 2, third panel; THEORY.md 7):
# the runs of P2 against eta T p / d (= CT): with the scalings of seed 003
# (C_clip ~ sqrt(p), eta T ~ d/p) the curves for different p collapse.
# Variables: data_file (CSV of rf-experiment P3), title_text, p_list (the p values).
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'η T p / d'
set ylabel 'test loss  (1/m) Σ_j (φ(x_j)^T θ_T − y_j)^2'
set logscale x
set grid lc rgb '#dddddd'
set key outside below center horizontal maxrows 2 box samplen 2.5 spacing 1.1 width 1
set bmargin 8
sel(p, v) = ($1 == p) ? v : NaN
np = words(p_list)
plot for [i=1:np] data_file using 5:(sel(word(p_list,i)+0, $8)):(sel(word(p_list,i)+0, $9)) with yerrorlines lw 2.5 pt 7 ps 1.1 lc i title sprintf('DP-GD, p = %s', word(p_list,i)), \
     for [i=1:np] data_file using 5:(sel(word(p_list,i)+0, $12)) with lines dt 2 lw 1.5 lc i title sprintf('OU closed form, p = %s', word(p_list,i))
