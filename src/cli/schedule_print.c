/*
 * schedule_print.c — the tables of `hdpsgd schedule --optimize` (schedule_print.h): the
 * comparison of the optimised families and, with --refine, the refinement and the
 * closed-form families against the pl optimum. cmd_schedule.c parses, runs and writes.
 */
#include <math.h>
#include <stdio.h>

#include "schedule_print.h"
#include "hdpsgd/privacy.h"

void schedule_print_comparison(const hdp_model *m, const hdp_design_set *d,
                               const hdp_design_options *opt, double eps, int tune_clip)
{
    const hdp_design_result *res = d->res;
    const int *done = d->done;
    const int best = d->best;
    printf("model: %s; d = %ld, n = %ld (gamma = %.4g), c = %g, rho = %g (epsilon = %.4g at "
           "delta = %.3g, CKS)\n",
           m->source, m->d, m->n, m->gamma, m->c, m->rho, eps, m->delta);
    printf("objective: the ODE's final-iterate excess risk R(1) + 2 c^2 gamma^2 eta~(1)^2/rho^2 "
           "(docs/theory.md §3) at fixed rho%s\n\n",
           tune_clip ? ", jointly over the clipping constant c" : "");
    printf("  %-13s %14s %9s %9s %8s  %s\n", "family", "final risk", "epsilon", "ODE solves",
           tune_clip ? "c" : "", "optimised parameters");
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        if (!done[f])
            continue;
        char desc[1024], cbuf[32] = "";
        hdp_design_describe(&res[f], desc, sizeof desc);
        if (tune_clip)
            snprintf(cbuf, sizeof cbuf, "%.4g", res[f].c);
        printf("  %-13s %14.8g %9.4g %10ld %8s  %s%s\n", hdp_design_family_name(f),
               res[f].final_risk, eps, res[f].ode_solves, cbuf, desc, f == best ? "   <- best" : "");
    }
    const hdp_design_result *b = &res[best];
    if (opt->method == HDP_DESIGN_SIMPLEX)
        printf("\nODE solves: %ld in %.3g s, %.0f per second (search: Nelder-Mead on the ODE solver, 2 output "
               "points, rtol %g; the winners re-solved at the model's [ode] settings)\n",
               d->solves, d->seconds, d->seconds > 0 ? (double)d->solves / d->seconds : 0.0,
               fmax(opt->search_rtol, m->rtol));
    else
        printf("\nODE solves: %ld in %.3g s, %.0f per second (search: BFGS on the exact gradient of "
               "the Runge-Kutta discretisation, a solve with its gradient counted once; the winners "
               "re-solved at the model's [ode] settings)\n",
               d->solves, d->seconds, d->seconds > 0 ? (double)d->solves / d->seconds : 0.0);
    printf("best: %s, final risk %.8g; as a table of %ld knots (piecewise linear): %.8g (%+.2g %%)\n",
           hdp_design_family_name(best), b->final_risk, b->table_len, b->table_final_risk,
           100.0 * (b->table_final_risk / b->final_risk - 1.0));
    if (tune_clip)
        printf("joint optimum of the clipping constant: c = %.6g (model: %g)\n", b->c, m->c);
}

void schedule_print_refine(const hdp_model *m, const hdp_design_set *d,
                           const hdp_design_options *opt, double refine_tol, double eps,
                           hdp_design_equivalent equiv[HDP_FAMILY_COUNT])
{
    const hdp_design_result *res = d->res, *pl = &d->res[HDP_FAMILY_PL];
    double delta = m->delta;
    printf("\nrefine (pl, tolerance %g): search risk", refine_tol);
    for (int l = 0; l < pl->levels; l++)
        printf("%s K = %d: %.10g", l ? ";" : "", pl->level_knots[l], pl->level_risk[l]);
    int lv = pl->levels - 1;
    int conv = lv > 0 && fabs(pl->level_risk[lv - 1] - pl->level_risk[lv]) <=
                             refine_tol * fabs(pl->level_risk[lv]);
    printf("\n%s at K = %d knots: final risk %.10g\n",
           conv ? "converged" : "NOT converged (the knot limit came first)", pl->knots,
           pl->final_risk);
    printf("\nthe closed-form families against it (each optimised at the model's rho; "
           "epsilon-equivalent: the privacy it needs to reach the optimal risk, CKS at delta = %.3g)\n",
           delta);
    printf("  %-13s %14s %10s %12s %12s\n", "family", "final risk", "excess", "rho needed",
           "epsilon");
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        if (f == HDP_FAMILY_PL || !d->done[f])
            continue;
        double rho_eq = NAN;
        long sv = 0;
        hdp_error e2;
        hdp_error_clear(&e2);
        if (hdp_design_rho_equivalent(m, f, opt, pl->final_risk, &rho_eq, &sv, &e2) != HDP_OK)
            fprintf(stderr, "hdpsgd schedule: warning: %s: %s\n", hdp_design_family_name(f), e2.msg);
        double eps_eq = isfinite(rho_eq) ? hdp_zcdp_epsilon_cks(0.5 * rho_eq * rho_eq, delta)
                                         : rho_eq;
        equiv[f].rho = rho_eq;
        equiv[f].epsilon = eps_eq;
        printf("  %-13s %14.8g %9.3f%% %12.6g %12.6g\n", hdp_design_family_name(f),
               res[f].final_risk, 100.0 * (res[f].final_risk / pl->final_risk - 1.0), rho_eq,
               eps_eq);
    }
    printf("  %-13s %14.8g %9.3f%% %12.6g %12.6g\n", "pl (optimum)", pl->final_risk, 0.0, m->rho,
           eps);
}
