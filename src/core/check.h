/*
 * check.h — argument checks at the entry of the library's public functions (internal).
 *
 * The contract (hdpsgd.h): a public function that returns an hdp_status refuses a NULL
 * pointer argument with HDP_EINPUT and a message naming the function and the argument;
 * its output struct, when given, is zeroed first, so that the matching *_free is safe
 * after any failure. Functions that return a number give NaN (or 0 for counts) for a NULL
 * pointer, void functions do nothing, *_free functions accept NULL and half-built objects.
 * Functions that need a finalized model call hdp_model_check (model.h).
 */
#ifndef HDPSGD_CHECK_H
#define HDPSGD_CHECK_H

#include <string.h>

#include "hdpsgd/error.h"

/* return HDP_EINPUT from the calling function when p is NULL */
#define HDP_REQUIRE(err, p) HDP_REQUIRE_FOR(__func__, err, p)

/* the same, the message naming the public function who (a helper checking for it) */
#define HDP_REQUIRE_FOR(who, err, p)                                                         \
    do {                                                                                     \
        if (!(p))                                                                            \
            return hdp_fail((err), HDP_EINPUT, "%s: the argument '%s' is NULL", (who), #p);  \
    } while (0)

/* zero an output struct when it is given */
#define HDP_ZERO(p)                                                                          \
    do {                                                                                     \
        if (p)                                                                               \
            memset((p), 0, sizeof *(p));                                                     \
    } while (0)

#endif
