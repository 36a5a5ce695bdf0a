/* error.c — the one error-reporting path (see hdpsgd/error.h). */
#include "hdpsgd/error.h"

#include <gsl/gsl_errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local const volatile int *thread_cancel;

const volatile int *hdp_cancel_flag_set(const volatile int *flag)
{
    const volatile int *old = thread_cancel;
    thread_cancel = flag;
    return old;
}

int hdp_cancel_requested(void) { return thread_cancel && *thread_cancel; }

void hdp_error_clear(hdp_error *err)
{
    if (!err)
        return;
    err->status = HDP_OK;
    err->msg[0] = '\0';
}

hdp_status hdp_fail(hdp_error *err, hdp_status status, const char *fmt, ...)
{
    if (!err || err->status != HDP_OK)
        return status;
    err->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return status;
}

const char *hdp_status_name(hdp_status status)
{
    switch (status) {
    case HDP_OK: return "ok";
    case HDP_EINPUT: return "bad input";
    case HDP_EIO: return "output error";
    case HDP_ENUMERIC: return "numerical failure";
    case HDP_ENOMEM: return "out of memory";
    case HDP_ECANCELLED: return "cancelled";
    }
    return "unknown status";
}

static pthread_once_t gsl_once = PTHREAD_ONCE_INIT;

static void gsl_quiet_once(void) { gsl_set_error_handler_off(); }

void hdp_gsl_quiet(void) { pthread_once(&gsl_once, gsl_quiet_once); }
