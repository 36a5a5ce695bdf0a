/*
 * dataset_internal.h — what the readers of hdpsgd/dataset.h share (internal): the CSV reader
 * (dataset_csv.c) that hdp_matrix_read (dataset_read.c) hands a file without binary magic.
 */
#ifndef HDPSGD_CORE_DATASET_INTERNAL_H
#define HDPSGD_CORE_DATASET_INTERNAL_H

#include "hdpsgd/dataset.h"

/* The largest CSV text, decompressed (2 GiB). */
#define HDP_DATASET_MAX_TEXT (2LL << 30)

/* Read a CSV file (gzipped or not) into *m as doubles, or fail with HDP_EINPUT naming the
 * file, its line and column. */
hdp_status hdp_csv_read(const char *path, hdp_matrix *m, hdp_error *err);

/* zlib's message (gzerror) without the file name it may start with */
const char *hdp_zlib_msg(const char *msg, const char *path);

#endif
