/*
 * design_table.c — the best schedule of a design as a table file (schedule.kind = table): the
 * one writer of the format, for `hdpsgd schedule --optimize -o` and the handle's design record
 * (the Python package's DesignResult.to_table).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/schema.h"
#include "hdpsgd/design.h"
#include "hdpsgd/privacy.h"
#include "core/build_version.h"

void hdp_design_describe(const hdp_design_result *r, char *buf, size_t size)
{
    if (!buf || size == 0)
        return;
    buf[0] = '\0';
    if (!r)
        return;
    switch (r->family) {
    case HDP_FAMILY_OUTPUT: snprintf(buf, size, "eta0 = %.6g", r->eta0); break;
    case HDP_FAMILY_LINEAR_NOISE: snprintf(buf, size, "eta0 = %.6g", r->eta0); break;
    case HDP_FAMILY_OPTIMAL:
        snprintf(buf, size, "c1 = %.6g, a = %.6g (c2 = %.6g, c3 = %.6g)", r->c1, r->a, r->c2, r->c3);
        break;
    case HDP_FAMILY_PL: {
        size_t used = (size_t)snprintf(buf, size, "eta at knots:");
        for (int i = 0; i < r->knots && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, " %.4g", r->knot_eta[i]);
        break;
    }
    default: buf[0] = '\0';
    }
}

void hdp_design_write_table(FILE *f, const hdp_model *m, const hdp_design_result *b,
                            const char *use)
{
    static const char *const core_only[] = {NULL};
    char desc[1024];
    hdp_design_describe(b, desc, sizeof desc);
    double delta = m->delta;
    double eps = hdp_zcdp_epsilon_cks(0.5 * m->rho * m->rho, delta);
    fprintf(f, "# ; hdpsgd %s schedule --optimize: the best schedule found on the risk ODE "
               "(docs/theory.md §3, §5)\n",
            hdp_build_version);
    char cb[40], rb[40];
    fprintf(f, "# ; model: %s; family %s: %s; clip.c = %s\n", m->source,
            hdp_design_family_name(b->family), desc, hdp_format_exact(b->c, cb, sizeof cb));
    fprintf(f, "# ; privacy.rho = %s (unchanged: epsilon = %.6g at delta = %.3g, CKS)\n",
            hdp_format_exact(m->rho, rb, sizeof rb), eps, delta);
    if (b->unconverged)
        fprintf(f, "# ; UNCONVERGED: the search was stopped early; this is the best schedule found "
                   "so far (search risk %.10g)\n",
                b->search_risk);
    if (isnan(b->final_risk))
        fprintf(f, "# ; ODE final risk: not yet solved at the model's settings (a finished "
                   "refine level of %ld knots, not the converged optimum)\n",
                b->table_len);
    else
        fprintf(f, "# ; ODE final risk: family %.10g, this table (piecewise linear, %ld knots) %.10g\n",
                b->final_risk, b->table_len, b->table_final_risk);
    if (use)
        fprintf(f, "# ; use: %s\n", use);
    fprintf(f, "# ; the model it was optimised for:\n");
    hdp_model_write_meta_sections(m, f, core_only);
    fprintf(f, "# ; t eta\n");
    for (long i = 0; i < b->table_len; i++)
        fprintf(f, "%.17g %.17g\n", b->table_t[i], b->table_eta[i]);
}
