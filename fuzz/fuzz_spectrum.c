/*
 * fuzz_spectrum.c — libFuzzer harness for spectrum files and the eigenvalue binning
 * (src/model.c's file reader, src/spectrum.c): the input is turned into a spectrum file,
 * loaded as data.spectrum = file, built, and binned with hdp_spectrum_bin_log for
 * several m.
 *
 * Two ways to read the input, chosen by its first byte:
 *   even  the rest is the spectrum file as text (comments, blanks, junk, long lines);
 *   odd   the rest is a recipe for spectra with many exact duplicates and values on bin
 *         edges: byte pairs (k, r) give r + 1 copies of s 10^(-k/q) for a scale s and a
 *         step q taken from the second and third bytes — with q dividing the log range
 *         into whole bins, most values sit exactly on a bin edge.
 * Invariants (abort = a crash for libFuzzer): a refused file has a non-empty message and
 * a status of the enum; a built spectrum has d >= 1 eigenvalues, finite, >= 0, mean 1,
 * decreasing; binning gives 1 <= bins <= 2m + 1 nodes, finite and >= 0, with weights
 * that sum to 1 (1e-9); hdp_spectrum_bin_log(…, 0, …) is refused. The sanitizers check
 * the rest (the heap overflow of issue 18 was a write past the 2m + 1 nodes).
 * Build and run: fuzz/run.sh.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hdpsgd/model.h"
#include "hdpsgd/spectrum.h"

static char dir[4096], path[4200];

static void setup(void)
{
    if (dir[0])
        return;
    snprintf(dir, sizeof dir, "/tmp/hdpsgd-fuzz-spectrum.XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(path, sizeof path, "%s/spectrum.txt", dir);
}

static void check_error(hdp_status st, const hdp_error *err)
{
    if (st != HDP_EINPUT && st != HDP_ENOMEM && st != HDP_ENUMERIC && st != HDP_EIO)
        abort();
    if (!err->msg[0])
        abort();
}

/* odd first byte: duplicates and edge values */
static void write_recipe(FILE *f, const uint8_t *data, size_t size)
{
    double scale = size > 1 ? ldexp(1.0 + data[1] / 256.0, (int)(data[1] % 64) - 32) : 1.0;
    double q = size > 2 ? (double)(1 + data[2] % 16) : 1.0;
    for (size_t i = 3; i + 1 < size; i += 2) {
        int k = data[i] % 64, r = data[i + 1] % 64;
        double v = scale * pow(10.0, -(double)k / q);
        for (int c = 0; c <= r; c++)
            fprintf(f, "%.17g\n", v);
    }
}

static void check_bins(hdp_spectrum *s)
{
    static const long ms[] = {1, 2, 3, 7, 8, 16, 64};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        hdp_error err;
        hdp_error_clear(&err);
        hdp_status st = hdp_spectrum_bin_log(s, ms[i], &err);
        if (st != HDP_OK) {
            check_error(st, &err);
            continue;
        }
        if (s->m < 1 || s->m > 2 * ms[i] + 1)
            abort();
        double w = 0;
        for (long j = 0; j < s->m; j++) {
            if (!(isfinite(s->bin_lambda[j]) && s->bin_lambda[j] >= 0 && s->bin_weight[j] >= 0))
                abort();
            w += s->bin_weight[j];
        }
        if (!(fabs(w - 1.0) <= 1e-9))
            abort();
    }
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_spectrum_bin_log(s, 0, &err) != HDP_EINPUT)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size > 0 && data[0] % 2 == 1)
        write_recipe(f, data, size);
    else if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1)
        abort();
    if (fclose(f) != 0)
        abort();

    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m);
    char set[4300];
    snprintf(set, sizeof set, "data.spectrum_file=%s", path);
    hdp_status st = hdp_model_set(&m, "data.spectrum=file", &err);
    if (st == HDP_OK)
        st = hdp_model_set(&m, set, &err);
    if (st == HDP_OK)
        st = hdp_model_finalize(&m, &err);
    if (st != HDP_OK) {
        check_error(st, &err);
        hdp_model_free(&m);
        return 0;
    }
    hdp_spectrum s;
    memset(&s, 0, sizeof s);
    st = hdp_spectrum_build(&m, &s, &err);
    if (st != HDP_OK) {
        check_error(st, &err);
    } else {
        if (s.d < 1)
            abort();
        double sum = 0;
        for (long j = 0; j < s.d; j++) {
            if (!(isfinite(s.lambda[j]) && s.lambda[j] >= 0))
                abort();
            if (j > 0 && s.lambda[j] > s.lambda[j - 1])
                abort();
            sum += s.lambda[j];
        }
        if (!(fabs(sum / (double)s.d - 1.0) <= 1e-9))
            abort();
        check_bins(&s);
    }
    hdp_spectrum_free(&s);
    hdp_model_free(&m);
    return 0;
}
