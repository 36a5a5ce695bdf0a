# kl-bound.gp — `hdpsgd kl bound --figure FIG`: the gradient-norm constant B of Ye et al.
# (eq. 7, = E||df/dW||^2 at ||x||^2 = d, Lemma C.3) against depth (left, width fixed) and
# width (right, depth fixed) for the four initialisations of Table 1; the right axis of each
# panel reads the same curves as the KL bound of Corollary 4.2 with the settled constant
# c = 4, B T / (n^2 sigma^2) (the paper's c = 2 doubles it).
#
# Variables (set before this script):
#   data_file     CSV written by the command: axis,depth,width,B_<s>,...,kl_<s>,...
#   schemes       space-separated scheme names, e.g. "lecun he ntk xavier"
#   kl_per_B      the bound per unit of B, T / (n^2 sigma^2)
#   fixed_width, fixed_depth   the width of the left panel and the depth of the right one
#   title_text    the title
# By hand:
#   gnuplot -e "set terminal pngcairo size 1500,820; set output 'b.png'" \
#           -e "data_file='b.csv'; schemes='lecun he ntk xavier'; kl_per_B=0.005" \
#           -e "fixed_width=256; fixed_depth=6; title_text='x'" plots/house.gp plots/kl-bound.gp
set datafile separator ','
set datafile columnheaders
set encoding utf8
set grid lc rgb '#dddddd'
set border lw 1.2
set logscale y
set format y '10^{%L}'
set logscale y2
set format y2 '10^{%L}'
set ytics nomirror
set y2tics
set my2tics
set ylabel 'B  (eq. 7)'
set y2label 'KL bound B T/(n²σ²)'
ns = words(schemes)
# one colour and point per initialisation (Okabe-Ito); the kind of curve by its dash
sch_color(s) = s eq 'lecun' ? oi_blue : s eq 'he' ? oi_vermillion : s eq 'ntk' ? oi_purple : \
               s eq 'xavier' ? oi_green : oi_grey
sch_point(s) = s eq 'lecun' ? 7 : s eq 'he' ? 5 : s eq 'ntk' ? 9 : s eq 'xavier' ? 13 : 1
sch_label(s) = s eq 'lecun' ? 'LeCun' : s eq 'he' ? 'He' : s eq 'ntk' ? 'NTK' : \
               s eq 'xavier' ? 'Xavier' : s
pos(v) = v > 0 ? v : NaN
on_axis(name, v) = strcol(1) eq name ? v : NaN
# the right axis is the left one times kl_per_B: the same range on both, from the data
# (gnuplot's 'set link' does not take a logarithmic axis)
array ylo[2]
array yhi[2]
do for [a=1:2] {
  ylo[a] = 1e300
  yhi[a] = -1e300
  do for [i=1:ns] {
    stats data_file using (on_axis(a == 1 ? 'depth' : 'width', column('B_'.word(schemes,i)))) nooutput
    ylo[a] = STATS_min < ylo[a] ? STATS_min : ylo[a]
    yhi[a] = STATS_max > yhi[a] ? STATS_max : yhi[a]
  }
  ylo[a] = ylo[a] / 2
  yhi[a] = yhi[a] * 2
}
top = strlen(title_text) > 0 ? 0.76 : 0.9
set multiplot layout 1,2 title title_text noenhanced font fs_title margins 0.08, 0.92, 0.24, top spacing 0.19, 0
set key at screen 0.5, 0.005 center bottom vertical maxrows 1 samplen 2.5 spacing 1.0 width 1
set title sprintf('(a) against depth L, width m = %d', fixed_width) font fs_title
set xlabel 'depth L'
set xtics 2
set yrange [ylo[1]:yhi[1]]
set y2range [ylo[1] * kl_per_B:yhi[1] * kl_per_B]
plot for [i=1:ns] data_file using (on_axis('depth', column('depth'))):(column('B_'.word(schemes,i))) \
       with linespoints pt sch_point(word(schemes,i)) ps 0.6 lw 1.6 dt i lc rgb sch_color(word(schemes,i)) title ulabel(i, sch_label(word(schemes,i)))
set key off
set title sprintf('(b) against width m, depth L = %d', fixed_depth) font fs_title
set xlabel 'hidden width m'
set logscale x 2
set xtics auto
set format x '%g'
set yrange [ylo[2]:yhi[2]]
set y2range [ylo[2] * kl_per_B:yhi[2] * kl_per_B]
plot for [i=1:ns] data_file using (on_axis('width', column('width'))):(column('B_'.word(schemes,i))) \
       with linespoints pt sch_point(word(schemes,i)) ps 0.6 lw 1.6 dt i lc rgb sch_color(word(schemes,i)) title ulabel(i, sch_label(word(schemes,i)))
unset multiplot
