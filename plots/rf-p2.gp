# rf-p2.gp — `hdpsgd rf-experiment P2` (seed 003 Fig. 2, second panel; THEORY.md 7):
# test loss of DP-GD against the number of steps T at C_clip = C sqrt(p) and a fixed
# eta, one curve per p (solid); dashed: the unclipped OU process's expected test loss
# at tau = eta T with the same sigma (closed form). The optimal T falls as p grows.
# Variables: data_file (CSV of rf-experiment P2), title_text, p_list (the p values).
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel 'DP-GD steps T  (σ calibrated to (ε, δ) for each T)'
set ylabel 'test loss  (1/m) Σ_j (φ(x_j)^T θ_T − y_j)^2'
set logscale x
set grid lc rgb '#dddddd'
set key outside below center horizontal maxrows 2 box samplen 2.5 spacing 1.1 width 1
set bmargin 8
sel(p, v) = ($1 == p) ? v : NaN
np = words(p_list)
plot for [i=1:np] data_file using 3:(sel(word(p_list,i)+0, $8)):(sel(word(p_list,i)+0, $9)) with yerrorlines lw 2.5 pt 7 ps 1.1 lc i title sprintf('DP-GD, p = %s', word(p_list,i)), \
     for [i=1:np] data_file using 3:(sel(word(p_list,i)+0, $12)) with lines dt 2 lw 1.5 lc i title sprintf('OU closed form, p = %s', word(p_list,i))
