/*
 * threads.c — the team a parallel region of the library asks OpenMP for (see threads.h).
 */
#include "sim/threads.h"

#include <ctype.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>

hdp_status hdp_threads_check(int threads, const char *who, hdp_error *err)
{
    if (threads < 0 || threads > HDP_THREADS_MAX)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: threads = %d: expected 0 (OpenMP's default, one per core) to %d",
                        who, threads, HDP_THREADS_MAX);
    if (threads == 0 && omp_get_max_threads() > HDP_THREADS_MAX)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: OMP_NUM_THREADS asks for %d threads: at most %d are accepted", who,
                        omp_get_max_threads(), HDP_THREADS_MAX);
    return HDP_OK;
}

int hdp_threads_request(long most, int threads)
{
    long t = threads > 0 ? threads : omp_get_max_threads();
    if (most >= 1 && t > most)
        t = most;
    if (t > HDP_THREADS_MAX)
        t = HDP_THREADS_MAX;
    long limit = omp_get_thread_limit();
    if (limit >= 1 && t > limit)
        t = limit;
    /* inside a region that may not nest, OpenMP gives a team of one */
    if (omp_in_parallel() && omp_get_active_level() >= omp_get_max_active_levels())
        t = 1;
    return t < 1 ? 1 : (int)t;
}

/* ---- the process-wide settings the program makes from its environment (hdpsgd/sim.h):
 * written before a long call, read during it ---- */
static size_t stack_size; /* OpenMP's per-thread stack (OMP_STACKSIZE); 0: the default */
static int pin_allowed = 1;

void hdp_set_thread_stack_size(size_t bytes)
{
    stack_size = bytes;
}

void hdp_set_thread_pinning(int allow)
{
    pin_allowed = allow != 0;
}

int hdp_threads_pin_allowed(void)
{
    return pin_allowed;
}

/* OMP_STACKSIZE's syntax: a size with an optional B, K, M or G suffix, K when none
 * (OpenMP's rule); 0 when NULL or unreadable (then the default stack, as libgomp) */
size_t hdp_stack_size_parse(const char *s)
{
    if (!s)
        return 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    unsigned shift = 10;
    switch (toupper((unsigned char)*end)) {
    case 'B': shift = 0; end++; break;
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    default: break;
    }
    if (end == s || v == 0 || v > (~0ULL >> (shift + 1)))
        return 0;
    return (size_t)(v << shift);
}

/* the probe's threads wait here until released, so that all of them live at once */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int release;
} probe_gate;

static void *probe_wait(void *arg)
{
    probe_gate *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->release)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

/* how many of want - 1 extra threads can live at once, plus the calling one */
static int creatable(int want)
{
    if (want <= 1)
        return 1;
    pthread_t *ids = malloc(sizeof *ids * (size_t)(want - 1));
    if (!ids)
        return 1;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (stack_size)
        pthread_attr_setstacksize(&attr, stack_size);
    probe_gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    int made = 0;
    while (made < want - 1 && pthread_create(&ids[made], &attr, probe_wait, &g) == 0)
        made++;
    pthread_mutex_lock(&g.lock);
    g.release = 1;
    pthread_cond_broadcast(&g.cond);
    pthread_mutex_unlock(&g.lock);
    for (int i = 0; i < made; i++)
        pthread_join(ids[i], NULL);
    pthread_attr_destroy(&attr);
    free(ids);
    return made + 1;
}

int hdp_threads_team(long most, int threads)
{
    return creatable(hdp_threads_request(most, threads));
}
