# si-align.gp — `hdpsgd sim-index --experiment align`: histograms of the neuron alignments
# |<w_j, mu>|/||w_j|| at initialisation, after stage 1 without noise and with the model's
# sigma_W (the single-index notes). Variables: data_file, title_text.
set datafile separator ','
set datafile columnheaders
set encoding utf8
set title title_text noenhanced font fs_title
set grid ytics lc rgb '#dddddd'
set border lw 1.2
set xlabel 'alignment  |⟨w_j, μ⟩| / ‖w_j‖'
set ylabel 'neurons'
set xrange [0:1]
set yrange [0:*]
set style fill transparent solid 0.4 border
set boxwidth 0.04 absolute
set key outside below center vertical Left reverse maxrows 5 noenhanced samplen 2.2 spacing 1.0 height 0.5
plot data_file using 'bin_mid':'init' with boxes dt 1 lc rgb oi_grey title ulabel(1, 'W_0 (random directions)'), \
     data_file using 'bin_mid':'stage1_noiseless' with boxes dt 1 lc rgb oi_blue title ulabel(2, 'stage 1, σ_W = 0'), \
     data_file using 'bin_mid':'stage1_private' with boxes dt 1 lc rgb oi_orange title ulabel(3, 'stage 1, private σ_W')
