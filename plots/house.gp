# house.gp — the house style of every figure, run by hdpsgd before a figure's script (after
# the terminal and fig_font, the font size in points): a colour-blind-safe palette (Okabe and
# Ito) with a distinct dash type and point per line type, the same colours by name for the
# scripts that colour by meaning, font sizes relative to the figure's, minor tics (the values
# between the decades of a logarithmic axis), and the tic lists of a logarithmic axis over
# few decades. To run a script by hand:
#   gnuplot -e "set terminal pdfcairo size 3.4in,2.6in font 'Sans,8' fontscale 0.75; set output 'f.pdf'" \
#           -e "fig_font = 8" plots/house.gp -e "data_file='x.csv'; title_text=''" plots/rates.gp
set encoding utf8
if (!exists('fig_font')) fig_font = 8
fs_title = sprintf(',%g', fig_font + 1)
fs_small = sprintf(',%g', fig_font - 1)
set linetype 1 lc rgb '#0072B2' lw 1.6 dt 1 pt 7
set linetype 2 lc rgb '#D55E00' lw 1.6 dt 2 pt 5
set linetype 3 lc rgb '#009E73' lw 1.6 dt 4 pt 9
set linetype 4 lc rgb '#CC79A7' lw 1.6 dt 5 pt 13
set linetype 5 lc rgb '#E69F00' lw 1.6 dt (8,3,2,3,2,3) pt 11
set linetype 6 lc rgb '#56B4E9' lw 1.6 dt 3 pt 6
set linetype 7 lc rgb '#000000' lw 1.6 dt (12,4) pt 4
set linetype 8 lc rgb '#999999' lw 1.6 dt (2,2) pt 8
set linetype cycle 8
oi_blue = '#0072B2'; oi_vermillion = '#D55E00'; oi_green = '#009E73'
oi_purple = '#CC79A7'; oi_orange = '#E69F00'; oi_sky = '#56B4E9'
oi_black = '#000000'; oi_grey = '#999999'; oi_yellow = '#F0E442'
set mxtics
set mytics
set tics scale 0.8, 0.45
set border lw 1
set key noautotitle
# labelled tics at 1, 2, 5 x 10^k within [lo, hi] (a logarithmic axis over few decades)
fig_lt1(v, lo, hi) = (v >= lo * 0.999 && v <= hi * 1.001) ? sprintf('"%g" %.10g, ', v, v) : ''
fig_ltd(e, lo, hi) = fig_lt1(10.0**e, lo, hi).fig_lt1(2 * 10.0**e, lo, hi).fig_lt1(5 * 10.0**e, lo, hi)
fig_ltr(e, e1, lo, hi) = e > e1 ? '' : fig_ltd(e, lo, hi).fig_ltr(e + 1, e1, lo, hi)
fig_lts(s) = strlen(s) > 2 ? s[1:strlen(s) - 2] : ''
fig_logtics(lo, hi) = fig_lts(fig_ltr(floor(log10(lo)), floor(log10(hi)), lo, hi))
# a script that uses user labels gets ulabel(i, default) from hdpsgd; by hand, the default
if (!exists('user_nlabels')) ulabel(i, def) = def
