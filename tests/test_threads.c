/* test_threads.c — the Monte Carlo under the teams OpenMP really gives (issue 29): called
 * from inside the caller's parallel region (nesting off: a team of one where two were asked
 * for; nesting on: a team of its own), from several of the caller's threads at once, and the
 * thread-count rules of sim/threads.h (the 4096 cap, OMP_THREAD_LIMIT, the probe of the
 * threads that can be created). Every result is compared bit for bit with the serial call. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/sim.h"
#include "sim/mc.h"
#include "sim/threads.h"
#include "testutil.h"

typedef hdp_status (*mc_fn)(const hdp_model *, const hdp_mc_options *, hdp_mc_result *,
                            hdp_error *);

static hdp_status run_mc(mc_fn fn, const hdp_model *m, int threads, hdp_mc_result *r,
                         hdp_error *err)
{
    hdp_mc_options opt;
    hdp_mc_options_from_model(m, &opt);
    opt.runs = 9;
    opt.threads = threads;
    hdp_error_clear(err);
    return fn(m, &opt, r, err);
}

static int same_result(const hdp_mc_result *a, const hdp_mc_result *b)
{
    size_t bytes = sizeof(double) * (size_t)a->points;
    return a->points == b->points && !memcmp(a->mean, b->mean, bytes) &&
           !memcmp(a->stderr_, b->stderr_, bytes) && !memcmp(a->q10, b->q10, bytes) &&
           !memcmp(a->q50, b->q50, bytes) && !memcmp(a->q90, b->q90, bytes) &&
           !memcmp(a->clipped, b->clipped, bytes) && a->final_jump_mean == b->final_jump_mean;
}

/* sim and sde called by every thread of a parallel region of the caller's, with nesting off
 * (levels = 1: OpenMP gives each call a team of one, the case that failed as "out of memory")
 * and on (levels = 2): the same bits as the serial call, in every thread. */
static void inside_parallel_region(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.d=30", "data.n=400", "ode.points=6", NULL);
    mc_fn fns[2] = {hdp_sim_run, hdp_sde_run};
    int saved = omp_get_max_active_levels();
    for (int f = 0; f < 2; f++) {
        hdp_mc_result serial;
        hdp_error err;
        assert_int_equal(run_mc(fns[f], &m, 1, &serial, &err), HDP_OK);
        for (int levels = 1; levels <= 2; levels++) {
            omp_set_max_active_levels(levels);
            int status[2] = {-1, -1}, same[2] = {0, 0}, team[2] = {0, 0};
            static char msg[2][sizeof(hdp_error){0}.msg];
#pragma omp parallel num_threads(2)
            {
                int t = omp_get_thread_num();
                if (t < 2) {
                    hdp_mc_result r;
                    hdp_error e;
                    status[t] = run_mc(fns[f], &m, 2, &r, &e);
                    snprintf(msg[t], sizeof msg[t], "%s", e.msg);
                    same[t] = status[t] == HDP_OK && same_result(&r, &serial);
                    team[t] = r.threads;
                    hdp_mc_result_free(&r);
                }
            }
            for (int t = 0; t < 2; t++) {
                if (status[t] != HDP_OK)
                    print_error("levels %d thread %d: %s\n", levels, t, msg[t]);
                assert_int_equal(status[t], HDP_OK);
                assert_true(same[t]);
                /* nesting off: a team of one, reported as such; on: at most the two asked */
                if (levels == 1)
                    assert_int_equal(team[t], 1);
                assert_true(team[t] >= 1 && team[t] <= 2);
            }
        }
        hdp_mc_result_free(&serial);
    }
    omp_set_max_active_levels(saved);
    hdp_model_free(&m);
}

/* The generic loop inside a region that cannot nest: one thread runs all, the workspaces of
 * that team only (was: "out of memory for the workspaces of 3 threads"). */
static hdp_status one_run(const void *c, long r, void *ws, hdp_xoshiro *g, void *slot,
                          hdp_error *err)
{
    (void)c;
    (void)err;
    if (!ws)
        return HDP_ENOMEM;
    ((double *)slot)[0] = (double)r + hdp_xoshiro_double(g);
    return HDP_OK;
}

static void *ws_alloc(const void *c)
{
    (void)c;
    return malloc(8);
}

static void loop_team_of_one(void **state)
{
    (void)state;
    enum { RUNS = 11 };
    double want[RUNS], got[RUNS];
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, 5, 1);
    int team = 0;
    hdp_mc_loop loop = {.name = "t", .runs = RUNS, .threads = 3, .ws_alloc = ws_alloc,
                        .ws_free = free, .run = one_run, .first = &first, .slots = want,
                        .slot_size = sizeof(double), .team = &team};
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_mc_loop_run(&loop, &err), HDP_OK);
    int saved = omp_get_max_active_levels(), st = -1;
    omp_set_max_active_levels(1);
    loop.slots = got;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        {
            hdp_error e;
            hdp_error_clear(&e);
            st = hdp_mc_loop_run(&loop, &e);
        }
    }
    omp_set_max_active_levels(saved);
    assert_int_equal(st, HDP_OK);
    assert_int_equal(team, 1);
    assert_memory_equal(got, want, sizeof want);
}

/* Groups of runs (hdp_mc_loop.group, run_group): every run once, with its own stream and
 * slot, the same values as one run at a time for 1, 2 and 13 threads, in order and reversed;
 * groups of 2..group runs (one at a time when the runs per thread are fewer than two); a
 * failing group reports its lowest run's error. */
static int group_sizes[8];
static hdp_status group_run(const void *c, const long *r, int count, void *ws,
                            hdp_xoshiro *const *g, void *const *slot, hdp_error *err)
{
    (void)c;
    if (!ws)
        return HDP_ENOMEM;
    if (count < 2 || count > 3)
        return hdp_fail(err, HDP_EINPUT, "group of %d", count);
#pragma omp atomic update
    group_sizes[count]++;
    for (int q = 0; q < count; q++) {
        if (r[q] == 6 && c)
            return hdp_fail(err, HDP_ENUMERIC, "run 6 failed in a group from %ld", r[0]);
        if (q > 0 && r[q] <= r[0])
            return hdp_fail(err, HDP_EINPUT, "not the group's lowest run first");
        ((double *)slot[q])[0] = (double)r[q] + hdp_xoshiro_double(g[q]);
    }
    return HDP_OK;
}

static void loop_groups(void **state)
{
    (void)state;
    enum { RUNS = 13 };
    double want[RUNS], got[RUNS];
    long reversed[RUNS];
    for (int r = 0; r < RUNS; r++)
        reversed[r] = RUNS - 1 - r;
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, 7, 2);
    hdp_mc_loop loop = {.name = "t", .runs = RUNS, .threads = 1, .ws_alloc = ws_alloc,
                        .ws_free = free, .run = one_run, .first = &first, .slots = want,
                        .slot_size = sizeof(double)};
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_mc_loop_run(&loop, &err), HDP_OK);
    loop.group = 3;
    loop.run_group = group_run;
    loop.slots = got;
    const int threads[3] = {1, 2, 13};
    for (int o = 0; o < 2; o++)
        for (int t = 0; t < 3; t++) {
            memset(group_sizes, 0, sizeof group_sizes);
            memset(got, 0, sizeof got);
            loop.threads = threads[t];
            loop.order = o ? reversed : NULL;
            hdp_error_clear(&err);
            hdp_status st = hdp_mc_loop_run(&loop, &err);
            if (st != HDP_OK)
                print_error("%s\n", err.msg);
            assert_int_equal(st, HDP_OK);
            assert_memory_equal(got, want, sizeof want);
            if (threads[t] == 13) /* one run per thread: no group */
                assert_int_equal(group_sizes[2] + group_sizes[3], 0);
            else
                assert_true(group_sizes[2] + group_sizes[3] > 0);
        }
    /* a failure inside a group: the loop's error is the group's */
    int fail = 1;
    loop.ctx = &fail;
    loop.order = NULL;
    loop.threads = 2;
    hdp_error_clear(&err);
    assert_int_equal(hdp_mc_loop_run(&loop, &err), HDP_ENUMERIC);
    assert_non_null(strstr(err.msg, "run 6 failed"));
}

/* One cap, 4096, for an argument and for OMP_NUM_THREADS's default; the request is capped
 * by the work items; the probe gives at least one thread and at most the request. */
static void thread_counts(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_threads_check(4096, "t", &err), HDP_OK);
    assert_int_equal(hdp_threads_check(4097, "t", &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "4096"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_threads_check(-1, "t", &err), HDP_EINPUT);
    hdp_model m;
    make_model(&m, "data.d=10", "data.n=50", "ode.points=3", NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.threads = 100000;
    hdp_mc_result r;
    hdp_error_clear(&err);
    assert_int_equal(hdp_sim_run(&m, &opt, &r, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "4096"));
    hdp_mc_result_free(&r);
    hdp_model_free(&m);
    assert_int_equal(hdp_threads_request(3, 8), 3);
    assert_int_equal(hdp_threads_request(0, 5000), 4096);
    int t = hdp_threads_team(0, 4);
    assert_true(t >= 1 && t <= 4);
    omp_set_num_threads(5000); /* as OMP_NUM_THREADS=5000 */
    hdp_error_clear(&err);
    assert_int_equal(hdp_threads_check(0, "t", &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "OMP_NUM_THREADS"));
    omp_set_num_threads(2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(inside_parallel_region),
        cmocka_unit_test(loop_groups),
        cmocka_unit_test(loop_team_of_one),
        cmocka_unit_test(thread_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
