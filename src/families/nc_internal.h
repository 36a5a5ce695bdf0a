/*
 * nc_internal.h — what the files of the neural-collapse family (nc_spec.c, nc_problem.c,
 * nc_train.c, nc_exact.c) share among themselves; internal.
 */
#ifndef HDPSGD_NC_INTERNAL_H
#define HDPSGD_NC_INTERNAL_H

#include "hdpsgd/nc.h"
#include "hdpsgd/rng.h"

/* len signs +-beta from the stream, 64 per output (bit j of an output gives entry j)
 * (nc_problem.c) */
void hdp_nc_fill_signs(hdp_xoshiro *g, double beta, double *out, long len);

/* the residual of the loss at scores sc for a sample of class k (Kout entries) (nc_exact.c) */
void hdp_nc_residual(hdp_nc_loss_kind loss, long K, long k, const double *sc, double *r);

#endif
