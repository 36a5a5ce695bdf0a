/*
 * mc_loop.c — the generic run loop of every Monte Carlo in the library (see mc.h, part 1):
 * runs over OpenMP threads, each run's stream and slot a function of its index only, one run
 * at a time or a group of runs stepped together (hdp_mc_loop.run_group), the lowest failing
 * run's error, progress and cancellation, thread placement. Exact bookkeeping, no numerics
 * (mc.c's risk-curve driver is built on it).
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#include "sim/mc.h"
#include "core/check.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/threads.h"

/* ---- thread placement ----
 * Left to itself, the kernel of the VM of bench/RESULTS.md kept the two threads of a
 * Monte Carlo apart badly: two runs on two threads took 25 % longer than two one-thread
 * processes, and pinning (OMP_PROC_BIND=true) removed the difference. So during the runs
 * of a loop that asks for it (the risk-curve driver) each thread is pinned to its own CPU
 * of the process's affinity mask (thread t to the t-th CPU in it) and put back as it was
 * afterwards, unless the program forbade it (hdp_set_thread_pinning, hdpsgd/sim.h: hdpsgd
 * does when the user chose a placement, OMP_PROC_BIND or OMP_PLACES set, or the process runs
 * under MPI, where ranks sharing a machine would pin onto the same CPUs), there is
 * one thread, the loop runs inside the caller's parallel region (its threads are the
 * caller's), or the mask has fewer CPUs than threads. */
static int pin_threads(int nthreads)
{
    if (nthreads < 2 || omp_in_parallel() || !hdp_threads_pin_allowed())
        return 0;
    cpu_set_t allowed;
    if (pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) != 0)
        return 0;
    return CPU_COUNT(&allowed) >= nthreads;
}

/* Pin the calling thread to the tid-th CPU of *allowed; the old mask in *saved.
 * Returns 1 when pinned (the caller then restores *saved). */
static int pin_self(int tid, const cpu_set_t *allowed, cpu_set_t *saved)
{
    if (pthread_getaffinity_np(pthread_self(), sizeof *saved, saved) != 0)
        return 0;
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, allowed))
            continue;
        if (seen++ == tid) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
        }
    }
    return 0;
}

/* ---- 1. the generic run loop ---- */

int hdp_mc_loop_threads(long runs, int threads) { return hdp_threads_request(runs, threads); }

/* bytes rounded up to whole cache lines */
static size_t cache_lines(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

/* a zeroed block of head bytes and then the arrays a[0..n), each on its own cache lines; at[i]
 * receives array i's offset. NULL when out of memory or when the size overflows. */
static char *block_alloc(size_t head, const hdp_mc_array *a, size_t n, size_t *at)
{
    size_t total = cache_lines(head);
    for (size_t i = 0; i < n; i++) {
        if (a[i].count > (SIZE_MAX - 64 - total) / a[i].size)
            return NULL;
        at[i] = total;
        total += cache_lines(a[i].count * a[i].size);
    }
    char *w = aligned_alloc(64, total);
    if (w)
        memset(w, 0, total);
    return w;
}

void *hdp_mc_ws_alloc(size_t size, const hdp_mc_array *arrays, size_t count)
{
    size_t at[HDP_MC_BLOCK_MAX];
    char *w = count <= HDP_MC_BLOCK_MAX ? block_alloc(size, arrays, count, at) : NULL;
    for (size_t i = 0; w && i < count; i++)
        if (arrays[i].count) {
            void *p = w + at[i]; /* stored by memcpy: the fields are double *, float *, long * */
            memcpy(w + arrays[i].offset, &p, sizeof p);
        }
    return w;
}

void *hdp_mc_vecs(const hdp_mc_vec *v, size_t n)
{
    hdp_mc_array a[HDP_MC_BLOCK_MAX] = {{0, 0, 0}};
    size_t at[HDP_MC_BLOCK_MAX];
    for (size_t i = 0; i < n && i < HDP_MC_BLOCK_MAX; i++)
        a[i] = (hdp_mc_array){0, v[i].count ? v[i].count : 1, sizeof(double)};
    char *w = n <= HDP_MC_BLOCK_MAX ? block_alloc(0, a, n, at) : NULL;
    for (size_t i = 0; w && i < n; i++)
        *v[i].p = (double *)(void *)(w + at[i]);
    return w;
}

/* the lowest failing run a thread saw (run = runs: none) */
typedef struct {
    long run;
    hdp_error err;
} loop_failure;

/* the state the threads share during a loop */
typedef struct {
    const hdp_mc_loop *L;
    int nthreads;         /* the team asked for */
    int team;             /* the team OpenMP gave (<= nthreads: OMP_DYNAMIC, nesting) */
    hdp_xoshiro *streams; /* [runs] or NULL */
    void **ws;            /* [nthreads], the first team used */
    loop_failure *fail;   /* [nthreads], the first team used */
    long stop;            /* runs above this are skipped: the lowest failing run so far */
    long done;            /* finished runs (progress) */
    int stopped;          /* the progress callback asked to stop */
    int working;          /* threads that have their workspace and take runs */
    long next;            /* the next run index to start */
    int pin;
    cpu_set_t allowed;
} loop_state;

/* whether run r is still to run: no run below it failed, the loop not cancelled */
static int loop_admit(loop_state *s, long r)
{
    const hdp_mc_loop *L = s->L;
    long stop;
#pragma omp atomic read
    stop = s->stop;
    if (r > stop)
        return 0; /* a run below failed: this one's result would not be used */
    int stopped;
#pragma omp atomic read
    stopped = s->stopped;
    if ((L->cancel && *L->cancel) || stopped)
        return 0; /* cancelled: the runs not yet started are skipped */
    return 1;
}

/* after run r in thread tid: a failure lowers s->stop and is kept when it is the thread's
 * lowest; a success is reported to the progress callback */
static void loop_done(loop_state *s, int tid, long r, hdp_status st, const hdp_error *e)
{
    const hdp_mc_loop *L = s->L;
    if (st != HDP_OK) {
#pragma omp critical(hdp_mc_loop_stop)
        {
            if (r < s->stop) {
#pragma omp atomic write
                s->stop = r;
            }
        }
        loop_failure *f = &s->fail[tid];
        if (r < f->run) {
            f->run = r;
            f->err = *e;
            if (f->err.status == HDP_OK) /* a run that forgot its message */
                hdp_fail(&f->err, st, "%s: run %ld failed (%s)", L->name ? L->name : "Monte Carlo",
                         r, hdp_status_name(st));
        }
        return;
    }
    if (L->progress) {
#pragma omp critical(hdp_mc_progress)
        {
            if (L->progress(L->name, ++s->done, L->runs, NAN, L->progress_user)) {
#pragma omp atomic write
                s->stopped = 1;
            }
        }
    }
}

static void *loop_slot(const loop_state *s, long r)
{
    return s->L->slots ? (char *)s->L->slots + (size_t)r * s->L->slot_size : NULL;
}

/* Run r in thread tid. */
static void loop_one(loop_state *s, int tid, long r, hdp_error *e)
{
    const hdp_mc_loop *L = s->L;
    if (!loop_admit(s, r))
        return;
    hdp_error_clear(e);
    hdp_status st = L->run(L->ctx, r, s->ws[tid], s->streams ? &s->streams[r] : NULL,
                           loop_slot(s, r), e);
    loop_done(s, tid, r, st, e);
}

/* The count runs from position j of the order together in thread tid (those still to run;
 * alone when one is left) */
static void loop_group(loop_state *s, int tid, long j, int count, hdp_error *e)
{
    const hdp_mc_loop *L = s->L;
    long r[HDP_MC_GROUP_MAX];
    hdp_xoshiro *streams[HDP_MC_GROUP_MAX];
    void *slots[HDP_MC_GROUP_MAX];
    int m = 0;
    for (int q = 0; q < count; q++) {
        long rq = L->order ? L->order[j + q] : j + q;
        if (!loop_admit(s, rq))
            continue;
        r[m] = rq;
        streams[m] = s->streams ? &s->streams[rq] : NULL;
        slots[m++] = loop_slot(s, rq);
    }
    if (m == 1)
        loop_one(s, tid, r[0], e);
    if (m < 2)
        return;
    for (int q = 1; q < m; q++) /* the group's lowest run first (order may permute them) */
        if (r[q] < r[0]) {
            long tr = r[0];
            hdp_xoshiro *ts = streams[0];
            void *tp = slots[0];
            r[0] = r[q], streams[0] = streams[q], slots[0] = slots[q];
            r[q] = tr, streams[q] = ts, slots[q] = tp;
        }
    hdp_error_clear(e);
    hdp_status st = L->run_group(L->ctx, r, m, s->ws[tid], streams, slots, e);
    for (int q = 0; q < m && (st == HDP_OK || q == 0); q++)
        loop_done(s, tid, r[q], st, e);
}

/* the runs a thread takes at once: the loop's group, fewer when the runs per thread are
 * fewer (no thread left idle for want of runs) */
static int loop_take(const hdp_mc_loop *L, int team)
{
    if (!L->run_group || L->group <= 1)
        return 1;
    long per = L->runs / (team > 0 ? team : 1);
    long g = L->group < HDP_MC_GROUP_MAX ? L->group : HDP_MC_GROUP_MAX;
    return (int)(per < 1 ? 1 : per < g ? per : g);
}

/* The parallel region: each thread allocates its workspace, then takes runs in order of
 * the run index (a shared counter: dynamic scheduling, one run at a time). OpenMP may give
 * fewer threads than asked for (OMP_DYNAMIC, OMP_THREAD_LIMIT, a call from inside the
 * caller's parallel region), and a thread whose workspace cannot be allocated (glibc gives
 * each thread an arena of 64 MB of address space: many threads under `ulimit -v`) takes no
 * run: the threads that have one run them all. None: HDP_ENOMEM (s->working = 0). */
static void loop_parallel(loop_state *s)
{
    const hdp_mc_loop *L = s->L;
#pragma omp parallel num_threads(s->nthreads)
    {
        int tid = omp_get_thread_num();
#pragma omp master
        s->team = omp_get_num_threads();
        const int take = loop_take(s->L, omp_get_num_threads());
        cpu_set_t saved;
        int pinned = s->pin && pin_self(tid, &s->allowed, &saved);
        s->ws[tid] = L->ws_alloc ? L->ws_alloc(L->ctx) : NULL;
        if (!L->ws_alloc || s->ws[tid]) {
#pragma omp atomic update
            s->working++;
            hdp_error e;
            for (;;) {
                long j;
#pragma omp atomic capture
                {
                    j = s->next;
                    s->next += take;
                }
                if (j >= L->runs)
                    break;
                if (take == 1)
                    loop_one(s, tid, L->order ? L->order[j] : j, &e);
                else
                    loop_group(s, tid, j, (int)(L->runs - j < take ? L->runs - j : take), &e);
            }
        }
        if (pinned)
            pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    }
}

hdp_status hdp_mc_loop_run(const hdp_mc_loop *L, hdp_error *err)
{
    HDP_REQUIRE(err, L);
    HDP_REQUIRE(err, L->run);
    const char *name = L->name ? L->name : "Monte Carlo";
    if (L->runs < 1)
        return hdp_fail(err, HDP_EINPUT, "%s: runs = %ld: need at least one run", name, L->runs);
    const long runs = L->runs;
    loop_state s;
    memset(&s, 0, sizeof s);
    s.L = L;
    if (hdp_threads_check(L->threads, name, err) != HDP_OK)
        return HDP_EINPUT;
    s.nthreads = hdp_threads_team(runs, L->threads);
    s.stop = runs;
    hdp_status st = HDP_OK;
    s.ws = calloc((size_t)s.nthreads, sizeof *s.ws);
    s.fail = calloc((size_t)s.nthreads, sizeof *s.fail);
    if (L->first)
        s.streams = malloc(sizeof *s.streams * (size_t)runs);
    if (!s.ws || !s.fail || (L->first && !s.streams)) {
        st = hdp_fail(err, HDP_ENOMEM, "%s: out of memory for %ld runs", name, runs);
        goto done;
    }
    for (int t = 0; t < s.nthreads; t++)
        s.fail[t].run = runs; /* none failed */
    /* run r's stream: the first stream jumped r times (2^128 outputs apart) */
    if (s.streams) {
        s.streams[0] = *L->first;
        for (long r = 1; r < runs; r++) {
            s.streams[r] = s.streams[r - 1];
            hdp_xoshiro_jump(&s.streams[r]);
        }
    }
    hdp_gsl_quiet(); /* GSL's error handler off for the workspaces and the runs */
    s.pin = L->pin && pin_threads(s.nthreads);
    CPU_ZERO(&s.allowed);
    if (s.pin)
        pthread_getaffinity_np(pthread_self(), sizeof s.allowed, &s.allowed);
    loop_parallel(&s);
    if (L->team)
        *L->team = s.working;
    if (!s.working) {
        if (L->ws_bytes > 0)
            st = hdp_fail(err, HDP_ENOMEM,
                          "%s: out of memory for the workspace of a thread (about %.3g MB)",
                          name, L->ws_bytes / 1e6);
        else
            st = hdp_fail(err, HDP_ENOMEM, "%s: out of memory for the workspace of a thread",
                          name);
        goto done;
    }
    const loop_failure *first_fail = NULL;
    for (int t = 0; t < s.team; t++)
        if (s.fail[t].run < runs && (!first_fail || s.fail[t].run < first_fail->run))
            first_fail = &s.fail[t];
    if (first_fail)
        st = hdp_fail(err, first_fail->err.status, "%s", first_fail->err.msg);
    else if ((L->cancel && *L->cancel) || s.stopped)
        st = hdp_fail(err, HDP_ECANCELLED, "%s: cancelled before the end of its %ld runs", name,
                      runs);
done:
    for (int t = 0; s.ws && t < s.nthreads; t++)
        if (s.ws[t] && L->ws_free)
            L->ws_free(s.ws[t]);
    free(s.ws);
    free(s.fail);
    free(s.streams);
    return st;
}
