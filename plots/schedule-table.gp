# schedule-table.gp — `hdpsgd plot best.tab`: a table schedule, the file `schedule --optimize -o`
# writes (two columns t, eta~ separated by blanks, '#' comment lines), as eta~(t) through its
# knots (docs/theory.md §5).
# Variables: data_file, title_text.
set datafile separator whitespace
set encoding utf8
set title title_text noenhanced font fs_title
set grid lc rgb '#e5e5e5'
set logscale y
set xrange [0:1]
set xtics 0.2
set xlabel 'training time t = k/n'
set ylabel 'learning rate η̃(t)'
set key top right opaque samplen 2.5
plot data_file using 1:2 with linespoints lt 1 dt 1 ps 0.5 title ulabel(1, 'η̃(t), linear between the knots')
