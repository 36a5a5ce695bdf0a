/*
 * threads.h — how many OpenMP threads a parallel region of the library asks for (internal;
 * src/sim/threads.c), the same rule for the Monte Carlo loop (mc.c) and the families'
 * parallel loops (blas_internal.h).
 *
 * A request is at most HDP_THREADS_MAX (4096) whether it comes from an argument or from
 * OMP_NUM_THREADS (threads = 0): above it is bad input. The team asked of OpenMP is then
 * capped by the work items, by omp_get_thread_limit() (OMP_THREAD_LIMIT), to one inside a
 * parallel region that may not nest, and by the threads the process can create right now:
 * libgomp exits the process with status 1 when pthread_create fails (a process or thread
 * limit, RLIMIT_NPROC, or an address-space limit too small for the stacks), so the library
 * first creates the extra threads itself, with OpenMP's stack size (as the program set it:
 * hdp_set_thread_stack_size, hdpsgd/sim.h), and asks only for as
 * many as it could create. Results never depend on the team (runs map to streams and slots
 * by their index), so a smaller team only costs time.
 */
#ifndef HDPSGD_SIM_THREADS_H
#define HDPSGD_SIM_THREADS_H

#include "hdpsgd/error.h"

#define HDP_THREADS_MAX 4096

/* HDP_EINPUT (who names the caller) when threads < 0 or > HDP_THREADS_MAX, or threads = 0
 * and OpenMP's default (OMP_NUM_THREADS) is above HDP_THREADS_MAX. */
hdp_status hdp_threads_check(int threads, const char *who, hdp_error *err);

/* The threads requested: threads (0: OpenMP's default), at most most (the work items, when
 * >= 1), HDP_THREADS_MAX and omp_get_thread_limit(); 1 inside a parallel region that cannot
 * nest. At least 1. Cheap: no thread is created. */
int hdp_threads_request(long most, int threads);

/* hdp_threads_request, further capped by the threads that can be created now (each extra
 * thread is created and joined once): the num_threads to give a parallel region. */
int hdp_threads_team(long most, int threads);

/* 0 when the program forbade pinning threads to CPUs (hdp_set_thread_pinning, hdpsgd/sim.h) */
int hdp_threads_pin_allowed(void);

#endif
