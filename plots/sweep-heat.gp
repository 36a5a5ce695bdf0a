# sweep-heat.gp — `hdpsgd plot results.csv --heat --x KEY --by KEY2 --y COLUMN`: a result of
# a sweep over two axes as a heat map on the grid of their values (a colour-blind-safe
# sequential palette, viridis), each cell labelled with its value.
#
# Variables (set by `hdpsgd plot`):
#   data_file   CSV ix,iy,z (the indices of the two axis values and the result)
#   nx, ny      the number of values of each axis
#   xtic_<k>, ytic_<k>      the tic labels of index k (from 0), strings
#   xname, yname, zname     the axes and the column drawn
#   zmid        the middle of the colour range (cell labels dark above it, white below)
#   title_text  the title
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set xlabel xname noenhanced
set ylabel yname noenhanced
set cblabel zname noenhanced
set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')
set xrange [-0.5:nx - 0.5]
set yrange [-0.5:ny - 0.5]
unset mxtics
unset mytics
set xtics ()
set ytics ()
do for [k=0:nx-1] { set xtics add (value(sprintf('xtic_%d', k)) k) }
do for [k=0:ny-1] { set ytics add (value(sprintf('ytic_%d', k)) k) }
set tics out nomirror
set key off
# each cell's value, dark on the light (high) end of the palette, white on the dark end
plot data_file using 'ix':'iy':'z' with image notitle, \
     data_file using 'ix':'iy':(sprintf('%.3g', column('z'))):(column('z') > zmid ? 0 : 0xffffff) \
     with labels font fs_small tc rgb variable notitle
