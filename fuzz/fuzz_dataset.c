/*
 * fuzz_dataset.c — libFuzzer harness for the data readers of hdpsgd/dataset.h (.npy, IDX,
 * CSV; src/core/dataset_read.c, dataset_csv.c) and the preparation behind them
 * (src/core/dataset.c).
 *
 * The first byte chooses the file's name (its extension is the readers' hint: .npy, .csv,
 * -idx3-ubyte, none) and whether the rest is written gzipped (bit 2); the rest is the file.
 * Invariants (abort = a crash for libFuzzer): a refused file has a non-empty message that
 * names the file, and a status of the enum, and leaves the matrix empty; a read matrix has
 * N >= 2, d >= 1 and finite entries; the labels' reader agrees with the matrix reader on
 * one-column files; small matrices are prepared (centred, scaled, rotated, with their first
 * column as labels) and give finite eigenvalues, decreasing, summing to d (1e-9 relative),
 * or a clean refusal. The sanitizers check the rest (reads past the end, overflows in the
 * sizes the headers announce, leaks).
 * Build and run: fuzz/run.sh.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "hdpsgd/dataset.h"

static char dir[4096];

static void check_error(hdp_status st, const hdp_error *err, const char *name)
{
    if (st != HDP_EINPUT && st != HDP_ENOMEM && st != HDP_ENUMERIC)
        abort();
    if (!err->msg[0] || (st == HDP_EINPUT && !strstr(err->msg, name)))
        abort();
}

static void check_prepared(hdp_matrix *m)
{
    if (m->n * m->d > 4096 || m->d > 32)
        return;
    long n = m->n;
    double *y = malloc((size_t)n * sizeof(double));
    if (!y)
        abort();
    for (long i = 0; i < n; i++)
        y[i] = hdp_matrix_get(m, i, 0);
    long d = m->d;
    hdp_dataset ds;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st = hdp_dataset_prepare(m, y, n, NULL, &ds, &err);
    if (st != HDP_OK) {
        if (st != HDP_EINPUT && st != HDP_ENUMERIC && st != HDP_ENOMEM)
            abort();
        if (!err.msg[0])
            abort();
    } else {
        double sum = 0;
        for (long j = 0; j < d; j++) {
            if (!(isfinite(ds.lambda[j]) && ds.lambda[j] >= 0))
                abort();
            if (j > 0 && ds.lambda[j] > ds.lambda[j - 1])
                abort();
            sum += ds.lambda[j];
        }
        if (!(fabs(sum - (double)d) <= 1e-9 * (double)d))
            abort();
        if (!(isfinite(ds.theta_norm) && isfinite(ds.tau2) && ds.tau2 >= 0))
            abort();
    }
    hdp_dataset_free(&ds);
    free(y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"data.npy", "data.csv", "data-idx3-ubyte", "data"};
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/hdpsgd-fuzz-dataset.XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    if (size < 1)
        return 0;
    int gz = (data[0] >> 2) & 1;
    const char *name = names[data[0] & 3];
    char path[4200];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, gz ? ".gz" : "");
    if (gz) {
        gzFile g = gzopen(path, "wb");
        if (!g)
            abort();
        if (size > 1 && gzwrite(g, data + 1, (unsigned)(size - 1)) != (int)(size - 1))
            abort();
        if (gzclose(g) != Z_OK)
            abort();
    } else {
        FILE *f = fopen(path, "wb");
        if (!f || (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) || fclose(f) != 0)
            abort();
    }
    hdp_matrix m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st = hdp_matrix_read(path, &m, &err);
    double *y = NULL;
    long ny = 0;
    hdp_error lerr;
    hdp_error_clear(&lerr);
    hdp_status lst = hdp_labels_read(path, &y, &ny, &lerr);
    if (st != HDP_OK) {
        check_error(st, &err, name);
        if (m.f32 || m.f64 || m.n || m.d || lst == HDP_OK)
            abort();
    } else {
        if (m.n < 2 || m.d < 1 || (!m.f32) == (!m.f64))
            abort();
        for (long i = 0; i < m.n; i++)
            for (long j = 0; j < m.d; j++)
                if (!isfinite(hdp_matrix_get(&m, i, j)))
                    abort();
        if ((m.d == 1) != (lst == HDP_OK))
            abort();
        for (long i = 0; lst == HDP_OK && i < ny; i++)
            if (y[i] != hdp_matrix_get(&m, i, 0))
                abort();
        check_prepared(&m);
    }
    if (lst != HDP_OK)
        check_error(lst, &lerr, name);
    free(y);
    hdp_matrix_free(&m);
    unlink(path);
    return 0;
}
