/* clip_fit.c — the cost of fitting the clipping factors once per model (hdp_clip_tabulate,
 * docs/theory.md §2.3), for the "fit under 50 ms" target of issue 31.
 * Usage: bench_clip_fit [KEY=VALUE ...]   (model overrides, e.g. data.noise=laplace)
 * Prints one line of JSON: the fit's CPU seconds (of the calling thread) and wall seconds, best
 * of 7 fits (each at a clipping constant 1e-13 apart, so that none is read from the cache of
 * fits), with its pieces, evaluations and tail. */
#include <stdio.h>
#include <time.h>

#include "hdpsgd/clip.h"
#include "hdpsgd/model.h"

static double now(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m);
    for (int i = 1; i < argc; i++)
        if (hdp_model_set(&m, argv[i], &err) != HDP_OK) {
            fprintf(stderr, "bench_clip_fit: %s\n", err.msg);
            return 2;
        }
    if (hdp_model_finalize(&m, &err) != HDP_OK) {
        fprintf(stderr, "bench_clip_fit: %s\n", err.msg);
        return 2;
    }
    hdp_noise_law law;
    hdp_noise_law_of_model(&m, &law);
    double cpu = 1e300, wall = 1e300;
    hdp_clip_table_info info = {0};
    for (int rep = 0; rep < 7; rep++) {
        hdp_clip *clip = hdp_clip_alloc_law(&law, m.c * (1 + 1e-13 * rep));
        if (!clip) {
            fprintf(stderr, "bench_clip_fit: out of memory\n");
            return 4;
        }
        double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
        hdp_status st = hdp_clip_tabulate(clip, hdp_clip_range(&m), &err);
        double c1 = now(CLOCK_THREAD_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
        hdp_clip_table_get(clip, &info);
        hdp_clip_free(clip);
        if (st != HDP_OK) {
            fprintf(stderr, "bench_clip_fit: %s\n", err.msg);
            return 4;
        }
        cpu = c1 - c0 < cpu ? c1 - c0 : cpu;
        wall = w1 - w0 < wall ? w1 - w0 : wall;
    }
    printf("{\"noise\": \"%s\", \"cpu_seconds\": %.6f, \"wall_seconds\": %.6f, \"pieces\": %zu, "
           "\"direct_pieces\": %zu, \"evaluations\": %ld, \"tail\": %.3g, \"failed\": %d}\n",
           hdp_noise_name(m.noise), cpu, wall, info.pieces, info.direct, info.evaluations,
           info.tail, info.failed);
    hdp_model_free(&m);
    return 0;
}
