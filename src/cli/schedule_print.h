/*
 * schedule_print.h — the tables `hdpsgd schedule --optimize` prints (internal to the
 * command line): cmd_schedule.c parses, runs and writes; schedule_print.c prints the
 * comparison of the optimised families and, with --refine, the refinement and the
 * closed-form families against its optimum.
 */
#ifndef HDPSGD_SCHEDULE_PRINT_H
#define HDPSGD_SCHEDULE_PRINT_H

#include <stddef.h>

#include "hdpsgd/design.h"

/* The optimised parameters of r in words ("eta0 = ...", "eta at knots: ..."). */

/* The table of the optimised families, the ODE solves and the best (eps: the model's
 * epsilon at delta = privacy.delta, CKS; tune_clip: --tune-clip). */
void schedule_print_comparison(const hdp_model *m, const hdp_design_set *d,
                               const hdp_design_options *opt, double eps, int tune_clip);

/* --refine: the risk at each K, whether it converged, and the closed-form families against
 * the pl optimum; computes on the way the privacy each family needs to match it
 * (hdp_design_rho_equivalent, a failure a warning on stderr) into equiv[]
 * (for the JSON). */
void schedule_print_refine(const hdp_model *m, const hdp_design_set *d,
                           const hdp_design_options *opt, double refine_tol, double eps,
                           hdp_design_equivalent equiv[HDP_FAMILY_COUNT]);

#endif
