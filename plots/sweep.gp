# sweep.gp — `hdpsgd plot results.csv --x KEY --y COLUMN [--by KEY]`: a result of a sweep
# against one axis, one curve per value of the other axes (Okabe-Ito line types 1-8).
#
# Variables (set by `hdpsgd plot`, which writes the data from the sweep's results.csv):
#   data_file   CSV group,x,y (rows of a curve in increasing x)
#   ncurves     number of curves; curve i = 0..ncurves-1 has label_<i> its legend text
#   xname, zname  the axis key and the column drawn (axis labels)
#   title_text  the title
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel xname noenhanced
set ylabel zname noenhanced
set grid lc rgb '#e5e5e5'
set key top left opaque noenhanced samplen 2.5 spacing 1.1
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0
sel(i, v) = column('group') == i ? v : NaN
plot for [i=0:ncurves-1] data_file using 'x':(sel(i, column('y'))) with linespoints lt (i + 1) ps 0.6 \
     title ulabel(i + 1, value(sprintf('label_%d', i)))
