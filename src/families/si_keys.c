/*
 * si_keys.c — the [si] section of the model files: two-stage private training on a
 * single-index target (the single-index notes; docs/theory.md §8; hdpsgd/si.h). Its keys, the names
 * of its enum, the sizes that finalize checks, and the accessor hdp_si_keys_of. Prefactors multiply
 * the single-index notes' scalings (Assumption 4), exponent eps_n. Registered in families.c.
 */
#include "families/sections.h"
#include "hdpsgd/si.h"

#include <math.h>

static const char *const si_stage2_names[] = {"gd", "ou", NULL};

const char *hdp_si_stage2_name(hdp_si_stage2_kind k) { return si_stage2_names[k]; }

/* Products of sizes that size one allocation (core/schema.h). */
static hdp_status si_finalize(hdp_model *m, hdp_error *err)
{
    const hdp_si_keys *q = hdp_si_keys_of(m);
    double cells;
    double sn = (double)q->n, sd = (double)q->d, sp = (double)q->p;
    double st = (double)q->test_size;
    /* each message names the larger of d and p and the matrix it sizes */
    if ((cells = sn * fmax(sd, sp)) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "si", "n", sn, sd > sp ? "si.d" : "si.p", fmax(sd, sp), cells,
                                 sd > sp ? "the data matrix (n x d)" : "the feature matrix (n x p)",
                                 err);
    if ((cells = st * fmax(sd, sp)) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "si", "test_size", st, sd > sp ? "si.d" : "si.p",
                                 fmax(sd, sp), cells,
                                 sd > sp ? "the test data (test_size x d)"
                                         : "the test features (test_size x p)",
                                 err);
    if ((cells = sp * sd) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "si", "p", sp, "si.d", sd, cells, "the first layer (d x p)",
                                 err);
    if ((cells = sp * sp) > HDP_MODEL_MAX_CELLS)
        return hdp_model_fail_key(m, "si", "p", err,
                                  "p = %.0f needs the feature Gram matrix (p x p) of %.3g numbers, "
                                  "more than the %.0e accepted (%.1f GB): make p smaller",
                                  sp, cells, HDP_MODEL_MAX_CELLS, HDP_MODEL_MAX_CELLS * 8 / 1e9);
    return HDP_OK;
}

/* the rows of the list in hdpsgd/si.h, hdp_si_section and hdp_si_keys_of */
#define HDP_SECTION_KEYS hdp_si_keys
HDP_SECTION_DEFINE(si, HDP_SI_KEYS, si_finalize)
