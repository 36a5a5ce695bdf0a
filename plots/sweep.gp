# sweep.gp — `hdpsgd plot results.csv --x KEY --y COLUMN[,COLUMN...] [--by KEY]`: results of a
# sweep against one axis, one colour per curve (a value of the other axes; Okabe-Ito line
# types 1-8), one line per column in that colour: a column with a standard-error column
# (sim_final_risk: sim_final_stderr) solid with error bars, the others (the ODE) dashed.
#
# Variables (set by `hdpsgd plot`, which writes the data from the sweep's results.csv):
#   data_file   CSV group,x,y1,e1,y2,e2,... (rows of a curve in increasing x; e empty: no bar)
#   ncurves     number of curves; curve i = 0..ncurves-1 has label_<i> its legend text
#   ny          number of columns; column j = 1..ny: ylab_<j> its legend text, dash_<j> its
#               dash type, ptype_<j> its point type
#   err_cols, line_cols  the columns (numbers j) with error bars and without
#   legend_mode 0 none (one series), 1 the columns, 2 the curves, 3 both apart
#   xname, zname  the axis labels
#   title_text  the title
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel xname noenhanced
set ylabel zname noenhanced
set grid lc rgb '#e5e5e5'
set key top left opaque noenhanced samplen 2.5 spacing 1.1
if (legend_mode == 0) { set key off }
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0
set errorbars small
sel(i, j) = column('group') == i ? column(sprintf('y%d', j)) : NaN
err(j) = column(sprintf('e%d', j))
dash(j) = value(sprintf('dash_%d', j))
ptype(j) = value(sprintf('ptype_%d', j))
ylab(j) = value(sprintf('ylab_%d', j))
clab(i) = value(sprintf('label_%d', i))
ctitle(i, j) = legend_mode == 1 ? ylab(j) : (legend_mode == 2 ? ulabel(i + 1, clab(i)) : '')
keys_part = legend_mode == 3 ? \
  ", for [i=0:ncurves-1] keyentry with lines lt (i + 1) dt 1 title ulabel(i + 1, clab(i))" : ""
if (legend_mode == 3 && words(line_cols) > 0) { keys_part = keys_part.", for [s in line_cols] keyentry with linespoints lc rgb '#444444' dt dash(int(s)) pt ptype(int(s)) ps 0.6 title ylab(int(s))" }
if (legend_mode == 3 && words(err_cols) > 0) { keys_part = keys_part.", for [s in err_cols] keyentry with linespoints lc rgb '#444444' dt 1 pt ptype(int(s)) ps 0.6 title ylab(int(s))" }
# the parts as macros that name the variables (never their values); a part without columns
# is left out (gnuplot's "for [s in '']" would run once)
line_part = words(line_cols) > 0 ? \
  "for [i=0:ncurves-1] for [s in line_cols] data_file using 'x':(sel(i, int(s))) with linespoints lt (i + 1) dt dash(int(s)) pt ptype(int(s)) ps 0.6 title ctitle(i, int(s))" : ""
err_part = words(err_cols) > 0 ? \
  "for [i=0:ncurves-1] for [s in err_cols] data_file using 'x':(sel(i, int(s))):(err(int(s))) with yerrorlines lt (i + 1) dt 1 pt ptype(int(s)) ps 0.6 title ctitle(i, int(s))" : ""
sep = (words(line_cols) > 0 && words(err_cols) > 0) ? "," : ""
plot @line_part @sep @err_part @keys_part
