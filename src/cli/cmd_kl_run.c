/*
 * cmd_kl_run.c — `hdpsgd kl run`: noisy GD on the linearised ReLU network against epochs
 * (Ye et al., Fig. 1), depth (Fig. 2a, 2b) or width (Fig. 2c). The runs are the driver's
 * (hdpsgd/klsweep.h); this file prints the tables and writes the CSV, the JSON and the
 * figures.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plot.h"
#include "kl_cli.h"

static void unstable_message(const hdp_model *m, const hdp_kl_spec *s, double eta_lambda_max,
                             const char *how)
{
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    fprintf(stderr,
            "hdpsgd kl: %s: [kl] eta = %g: %s, depth %d, width %ld: eta lambda_max(K)/n = %.4g >= 2, "
            "noisy GD on the squared loss diverges; use eta < %.3g (or loss = logistic)\n",
            how, kp->eta, hdp_kl_init_name(s->arch.init), s->arch.L, s->arch.m,
            eta_lambda_max, 2.0 * kp->eta / eta_lambda_max);
}

/* ---- --vs epochs ---- */

typedef struct {
    const hdp_model *m;
    const hdp_kl_epochs *ep;
} epochs_ctx;

/* Lemma 3.2 (Ye et al.) beside the linearised network's KL: its constants, the bound and its
 * exponential part at the first and the last epoch, and the last epoch where the exponential
 * part is still below the linear one (docs/theory.md §8.1) */
static void lemma32_print(const hdp_kl_keys *kp, const hdp_kl_epochs *ep)
{
    const long E = kp->epochs;
    printf("Lemma 3.2 (Ye et al., the general bound with its term exponential in T; linearised network, "
           "remove-one, c = 4):\n  %-7s %9s %9s %9s %5s %11s %11s %11s %13s %11s\n", "scheme",
           "beta", "grad0", "diff0", "rank", "KL ep. 1", "bound ep. 1", "exp. part", "log10 bound",
           "exp<lin to");
    for (int k = 0; k < 4; k++) {
        if (!ep->want[k])
            continue;
        const hdp_kl_run_result *r = &ep->res[k];
        long last = 0; /* the last epoch whose exponential part is below the linear part */
        for (long e = 1; e <= E; e++)
            if (r->lemma32_exp[e] < r->lemma32_bound[e] - r->lemma32_exp[e])
                last = e;
        printf("  %-7s %9.4g %9.4g %9.4g %5.0f %11.5g %11.5g %11.5g %13.6g %11ld\n",
               hdp_kl_init_name(k), r->lemma32_beta, r->lemma32_grad0, r->lemma32_diff0,
               r->lemma32_rank, r->kl_mc[1], r->lemma32_bound[1], r->lemma32_exp[1],
               r->lemma32_log10[E], last);
    }
    printf("  log10 bound: at the last epoch (the bound itself overflows a double from e^{(2 + "
           "beta^2) T} > 1e308); exp<lin to: the last epoch where the exponential part is below "
           "the linear one\n");
}

static void epochs_print(const hdp_model *m, const hdp_kl_epochs *ep)
{
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    const long E = kp->epochs, n = kp->n;
    const double T = kp->eta * (double)E;
    const int sq = kp->loss == HDP_KL_SQUARED;
    printf("Noisy GD on the linearised ReLU network (Ye et al., eq. 3, Appendix E): d = %ld, width %ld, "
           "depth %ld, o = %ld, n = %ld, %s loss,\nsigma = %g, eta = %g, %ld epochs (T = %g), %ld "
           "initialisations x %ld noise paths. KL of all iterates for the worst remove-one\n"
           "neighbour, constant c = 4 (Ye et al.'s c = 2 doubles every KL).\n",
           kp->d, kp->width, kp->depth, kp->o, n, hdp_kl_loss_name(kp->loss), kp->sigma,
           kp->eta, E, T, kp->inits, kp->runs);
    printf("  %-7s %11s %10s %10s", "scheme", "KL (MC)", "stderr", "sd(init)");
    if (sq)
        printf(" %11s %7s %11s", "KL exact", "z", "last iter.");
    printf(" %11s %11s %11s %9s %10s %10s %7s\n", "seed c=2", "bound c=4", "bound c=2",
           "delta", "B", "E||J||^2", "secs");
    for (int k = 0; k < 4; k++) {
        if (!ep->want[k])
            continue;
        const hdp_kl_run_result *r = &ep->res[k];
        printf("  %-7s %11.5g %10.3g %10.3g", hdp_kl_init_name(k), r->kl_mc[E], r->kl_mc_se[E],
               r->kl_init_sd[E]);
        if (sq)
            printf(" %11.5g %7.2f %11.5g", r->kl_exact[E],
                   (r->kl_mc[E] - r->kl_exact[E]) / r->kl_mc_se_path[E], r->kl_final[E]);
        printf(" %11.5g %11.5g %11.5g %9.4g %10.5g %10.5g %7.2f\n", HDP_KL_C / HDP_KL_C_SEED * r->kl_mc[E],
               hdp_kl_bound(ep->B[k], T, n, kp->sigma, HDP_KL_C),
               hdp_kl_bound(ep->B[k], T, n, kp->sigma, HDP_KL_C_SEED),
               hdp_kl_pinsker_delta(r->kl_mc[E]), ep->B[k], r->grad2, r->seconds);
    }
    if (sq)
        printf("  z = (MC - exact)/(path stderr); 'last iter.' = exact KL of the law of the last "
               "iterate (<= the KL of all iterates)\n");
    printf("  bound = Corollary 4.2 (|l'| <= 1, e.g. logistic); delta = Pinsker sqrt(KL/2) of the "
           "MC value (c = 4)\n");
    lemma32_print(kp, ep);
    if (ep->relu) {
        printf("The real ReLU network (kl.network = relu; the same data and initialisations, %ld "
               "noise paths each):\n", kp->relu_runs);
        printf("  %-7s %11s %10s %10s %11s %11s %11s %7s\n", "scheme", "KL (MC)", "stderr",
               "sd(init)", "/linearised", "loss", "lin. loss", "secs");
        for (int k = 0; k < 4; k++) {
            if (!ep->want[k])
                continue;
            const hdp_kl_run_result *r = &ep->res_relu[k], *l = &ep->res[k];
            printf("  %-7s %11.5g %10.3g %10.3g %11.4g %11.5g %11.5g %7.2f\n", hdp_kl_init_name(k),
                   r->kl_mc[E], r->kl_mc_se[E], r->kl_init_sd[E], r->kl_mc[E] / l->kl_mc[E],
                   r->train_loss[E], l->train_loss[E], r->seconds);
        }
    }
}

/* the CSV header's columns of every scheme run: t's under <scheme>_, with the real network
 * trelu's under <scheme>_relu_; the line ended */
static void schemes_header(FILE *f, const int *want, int relu, const hdp_field_table *t,
                           const hdp_field_table *trelu)
{
    char pre[32];
    for (int k = 0; k < 4; k++) {
        snprintf(pre, sizeof pre, "%s_", hdp_kl_init_name(k));
        if (want[k])
            hdp_csv_header_in(f, t, pre, "", 0);
        snprintf(pre, sizeof pre, "%s_relu_", hdp_kl_init_name(k));
        if (want[k] && relu)
            hdp_csv_header_in(f, trelu, pre, "", 0);
    }
    fputc('\n', f);
}

static void epochs_table(FILE *f, const void *ctx)
{
    const epochs_ctx *c = ctx;
    const hdp_model *m = c->m;
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    const hdp_kl_epochs *ep = c->ep;
    kl_meta(f, "run --vs epochs: KL of noisy GD against epochs (Ye et al., Fig. 1)", m);
    hdp_csv_header(f, &hdp_kl_epochs_csv_fields, 1);
    schemes_header(f, ep->want, ep->relu, &hdp_kl_epochs_scheme_csv_fields,
                   &hdp_kl_epochs_relu_csv_fields);
    for (long e = 0; e <= kp->epochs; e++) {
        /* each scheme at epoch e: the bound's B, T = eta e */
        hdp_kl_run_scheme ks = {NULL, NULL, e, kp->n, NAN, kp->eta * (double)e, kp->sigma, 0};
        hdp_csv_row(f, &hdp_kl_epochs_csv_fields, &ks, NULL, 1);
        for (int k = 0; k < 4; k++)
            if (ep->want[k]) {
                ks.r = &ep->res[k], ks.B = ep->B[k];
                hdp_csv_row(f, &hdp_kl_epochs_scheme_csv_fields, &ks, NULL, 0);
                ks.r = &ep->res_relu[k];
                if (ep->relu)
                    hdp_csv_row(f, &hdp_kl_epochs_relu_csv_fields, &ks, NULL, 0);
            }
        fputc('\n', f);
    }
}

/* per scheme its KL estimate at the last epoch and spreads (kl_epoch) and its keys, under
 * <scheme>_, then the real network's under <scheme>_relu_ (kl.network = relu), then the run */
static void epochs_json(hdp_json *j, const void *ctx)
{
    const epochs_ctx *c = ctx;
    const hdp_kl_epochs *ep = c->ep;
    const hdp_kl_keys *kp = hdp_kl_keys_of(c->m);
    const long E = kp->epochs;
    hdp_kl_run_scheme lin[4], relu[4];
    const void *r[4], *rl[4], *l[4], *re[4];
    for (int k = 0; k < 4; k++) {
        lin[k] = (hdp_kl_run_scheme){&ep->res[k], NULL, E, kp->n, ep->B[k],
                                     kp->eta * (double)E, kp->sigma, kp->loss == HDP_KL_SQUARED};
        relu[k] = (hdp_kl_run_scheme){&ep->res_relu[k], &ep->res[k], E, kp->n, NAN, NAN,
                                      kp->sigma, 0};
        r[k] = ep->want[k] ? &ep->res[k] : NULL;
        l[k] = ep->want[k] ? &lin[k] : NULL;
        rl[k] = ep->want[k] && ep->relu ? &ep->res_relu[k] : NULL;
        re[k] = ep->want[k] && ep->relu ? &relu[k] : NULL;
    }
#define SCHEMES(list, ctx) &(const cli_json_each){4, kl_json_scheme, list, ctx, 0}
    const cli_json_source src[] = {
        {&hdp_kl_epoch_fields, SCHEMES(r, &E), NULL},
        {&hdp_kl_run_scheme_fields, SCHEMES(l, NULL), NULL},
        {&hdp_kl_epoch_fields, SCHEMES(rl, &E), NULL},
        {&hdp_kl_run_relu_fields, SCHEMES(re, NULL), NULL},
        {&hdp_kl_network_fields, ep->relu ? kp : NULL, NULL},
        {&hdp_kl_run_fields, kp, NULL}, {&hdp_model_seed_fields, c->m, NULL}};
#undef SCHEMES
    cli_json_write(j, cli_find_command("kl"), src, (int)(sizeof src / sizeof *src), c->m);
}

static void epochs_figure(hdp_plot_vars *v, const void *ctx)
{
    const epochs_ctx *c = ctx;
    const hdp_model *m = c->m;
    const int *want = c->ep->want;
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    char title[512], schemes[64];
    kl_schemes_text(want, schemes, sizeof schemes);
    snprintf(title, sizeof title,
             "KL privacy of noisy GD on the %s ReLU network (Ye et al., Fig. 1)\nwidth %ld, "
             "depth %ld, d = %ld, n = %ld, %s loss, σ = %g, η = %g",
             kp->network == HDP_KL_RELU ? "real and the linearised" : "linearised", kp->width, kp->depth, kp->d, kp->n, hdp_kl_loss_name(kp->loss), kp->sigma,
             kp->eta);
    hdp_plot_var_str(v, "schemes", schemes);
    hdp_plot_var_str(v, "title_text", title);
    hdp_plot_var_num(v, "squared", kp->loss == HDP_KL_SQUARED);
    hdp_plot_var_num(v, "relu", kp->network == HDP_KL_RELU);
}

static int run_epochs(const hdp_model *m, int threads, const int *want, const kl_args *a)
{
    hdp_error err;
    hdp_error_clear(&err);
    int rc = 0;
    hdp_kl_epochs ep;
    hdp_status st = hdp_kl_epochs_run(m, want, threads, &ep, &err);
    for (int k = 0; k < 4; k++)
        if (ep.want[k] && ep.res[k].unstable) {
            unstable_message(m, &ep.spec[k], ep.res[k].eta_lambda_max, "error");
            rc = EXIT_NUMERIC;
        }
    if (st != HDP_OK || rc) {
        hdp_kl_epochs_free(&ep);
        return st != HDP_OK ? cli_fail("kl", &err) : rc;
    }
    epochs_print(m, &ep);
    epochs_ctx c = {m, &ep};
    rc = kl_write(a, epochs_table, epochs_json, &c, "kl-epochs", epochs_figure);
    hdp_kl_epochs_free(&ep);
    return rc;
}

/* ---- --vs depth or --vs width: the KL after round(0.4 epochs) and after `epochs` epochs ---- */

/* a warning for an unstable point, the progress on a terminal and a line of the table after
 * each point */
typedef struct {
    const hdp_model *m;
    cli_progress line; /* the points done, on a terminal */
    const hdp_klsweep *sw;
} sweep_out;

static int sweep_line(const char *what, long done, long total, double value, void *user)
{
    (void)what, (void)value;
    sweep_out *o = user;
    const hdp_klsweep *sw = o->sw;
    const long idx = hdp_klsweep_index(sw->want, sw->nx, done);
    const int i = (int)(idx / 4), k = (int)(idx % 4);
    const hdp_klsweep_point *p = &sw->points[idx];
    cli_progress_clear(&o->line);
    if (p->unstable) {
        const hdp_kl_keys *kp = hdp_kl_keys_of(o->m);
        hdp_kl_spec s;
        hdp_kl_spec_at(o->m, (hdp_kl_init_kind)k, sw->by_depth ? sw->xs[i] : kp->depth,
                       sw->by_depth ? kp->width : sw->xs[i], &s);
        unstable_message(o->m, &s, p->eta_lambda_max, "warning (point left out)");
    }
    printf("  %-7s %6ld %12.5g %10.3g %12.5g %10.3g %12.5g %12.5g %7.2f", hdp_kl_init_name(k),
           sw->xs[i], p->kle, p->see, p->kl, p->se, p->bound, p->B, p->seconds);
    if (sw->relu)
        printf(" %12.5g %10.3g %12.5g %10.3g %7.2f", p->rkle, p->rsee, p->rkl, p->rse, p->rseconds);
    printf("\n");
    if (o->line.tty) {
        fflush(stdout); /* the table's line first, when both go to the terminal */
        cli_progress_show(&o->line, (double)done, (double)total, NULL);
    }
    return 0;
}

static void sweep_header(const hdp_model *m, const hdp_klsweep *sw)
{
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    const int by_depth = sw->by_depth;
    printf("Noisy GD on the %s ReLU network against %s (Ye et al., Fig. 2%s): d = %ld, %s %ld, "
           "o = %ld, n = %ld,\n%s loss, sigma = %g, eta = %g, KL after %ld and %ld epochs (T = %g, "
           "%g), %ld initialisations x %ld noise paths; c = 4.\n",
           sw->relu ? "linearised and the real" : "linearised",
           by_depth ? "depth" : "width", by_depth ? "a, 2b" : "c", kp->d,
           by_depth ? "width" : "depth", by_depth ? kp->width : kp->depth, kp->o, kp->n,
           hdp_kl_loss_name(kp->loss), kp->sigma, kp->eta, sw->Ee, sw->E, sw->Te, sw->T,
           kp->inits, kp->runs);
    printf("  %-7s %6s %12s %10s %12s %10s %12s %12s %7s", "scheme", by_depth ? "L" : "m",
           "KL early", "stderr", "KL final", "stderr", "bound c=4", "B", "secs");
    if (sw->relu)
        printf(" %12s %10s %12s %10s %7s", "ReLU early", "stderr", "ReLU final", "stderr", "secs");
    printf("\n");
}

typedef struct {
    const hdp_model *m;
    const hdp_klsweep *sw;
} sweep_ctx;

static void sweep_table(FILE *f, const void *ctx)
{
    const sweep_ctx *c = ctx;
    const hdp_model *m = c->m;
    const hdp_klsweep *sw = c->sw;
    kl_meta(f, sw->by_depth ? "run --vs depth: KL of noisy GD against depth (Ye et al., Fig. 2a, 2b)"
                            : "run --vs width: KL of noisy GD against width (Ye et al., Fig. 2c)", m);
    fprintf(f, "# ; early = after %ld epochs (T = %g), final = after %ld epochs (T = %g)\n", sw->Ee,
            sw->Te, sw->E, sw->T);
    hdp_csv_header(f, sw->by_depth ? &hdp_kl_depth_csv_fields : &hdp_kl_width_csv_fields, 1);
    schemes_header(f, sw->want, sw->relu, &hdp_kl_vs_scheme_csv_fields, &hdp_kl_vs_relu_csv_fields);
    for (int i = 0; i < sw->nx; i++) {
        hdp_csv_row(f, sw->by_depth ? &hdp_kl_depth_csv_fields : &hdp_kl_width_csv_fields,
                    &sw->xs[i], NULL, 1);
        for (int k = 0; k < 4; k++)
            if (sw->want[k]) {
                hdp_csv_row(f, &hdp_kl_vs_scheme_csv_fields, &sw->points[i * 4 + k], NULL, 0);
                if (sw->relu)
                    hdp_csv_row(f, &hdp_kl_vs_relu_csv_fields, &sw->points[i * 4 + k], NULL, 0);
            }
        fputc('\n', f);
    }
}

static void sweep_json(hdp_json *j, const void *ctx)
{
    const sweep_ctx *c = ctx;
    const hdp_klsweep *sw = c->sw;
    hdp_klsweep_scheme sc[4];
    const void *lin[4], *relu[4]; /* per scheme under <scheme>_, then <scheme>_relu_ */
    for (int k = 0; k < 4; k++) {
        sc[k] = (hdp_klsweep_scheme){sw, k};
        lin[k] = sw->want[k] ? &sc[k] : NULL;
        relu[k] = sw->want[k] && sw->relu ? &sc[k] : NULL;
    }
    const cli_json_each by_lin = {4, kl_json_scheme, lin, NULL, 0},
                        by_relu = {4, kl_json_scheme, relu, NULL, 0};
    const cli_json_source src[] = {
        {&hdp_kl_sweep_depth_fields, sw->by_depth ? sw : NULL, NULL},
        {&hdp_kl_sweep_width_fields, sw->by_depth ? NULL : sw, NULL},
        {&hdp_kl_sweep_scheme_fields, &by_lin, NULL}, {&hdp_kl_sweep_relu_fields, &by_relu, NULL},
        {&hdp_kl_sweep_fields, sw, NULL}};
    cli_json_write(j, cli_find_command("kl"), src, (int)(sizeof src / sizeof *src), c->m);
}

static void sweep_figure(hdp_plot_vars *v, const void *ctx)
{
    const sweep_ctx *c = ctx;
    const hdp_model *m = c->m;
    const hdp_klsweep *sw = c->sw;
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    const int by_depth = sw->by_depth;
    char title[512], schemes[64];
    kl_schemes_text(sw->want, schemes, sizeof schemes);
    snprintf(title, sizeof title,
             "KL privacy of noisy GD on the %s ReLU network against %s (Ye et al., Fig. 2)\n"
             "%s %ld, d = %ld, n = %ld, %s loss, σ = %g, η = %g",
             sw->relu ? "real and the linearised" : "linearised", by_depth ? "depth" : "width",
             by_depth ? "width" : "depth", by_depth ? kp->width : kp->depth, kp->d, kp->n, hdp_kl_loss_name(kp->loss),
             kp->sigma, kp->eta);
    hdp_plot_var_str(v, "schemes", schemes);
    hdp_plot_var_str(v, "title_text", title);
    hdp_plot_var_str(v, "xname", by_depth ? "depth" : "width");
    hdp_plot_var_num(v, "epochs_early", (double)sw->Ee);
    hdp_plot_var_num(v, "epochs_final", (double)sw->E);
    hdp_plot_var_num(v, "squared", kp->loss == HDP_KL_SQUARED);
    hdp_plot_var_num(v, "relu", sw->relu);
}

static int run_sweep(const hdp_model *m, int threads, const int *want, int by_depth,
                     const kl_args *a)
{
    long xs[KL_MAX_LIST];
    int nx, rc;
    /* the real network (kl.network = relu) costs p weights per sample: shorter default lists
     * unless --full */
    const int short_lists = hdp_kl_keys_of(m)->network == HDP_KL_RELU && !a->full;
    if (by_depth)
        rc = kl_parse_int_list("depths", a->depths ? a->depths : short_lists ? "2:8:2" : "2:12", 2,
                               HDP_KL_MAX_DEPTH, xs, &nx);
    else
        rc = kl_parse_int_list("widths",
                               a->widths        ? a->widths
                               : short_lists    ? "16,32,64,128,256"
                                                : "16,32,64,128,256,512,1024",
                               1, 100000000, xs, &nx);
    if (rc)
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    /* check every point's spec before anything runs */
    hdp_klsweep sw;
    hdp_status st = hdp_klsweep_plan(m, by_depth, xs, nx, want, &sw, &err);
    if (st == HDP_OK) {
        sweep_out o = {m, {0}, &sw};
        cli_progress_start(&o.line, "kl", "points", 0);
        sweep_header(m, &sw);
        st = hdp_klsweep_run(&sw, m, threads, sweep_line, &o, &err);
        cli_progress_clear(&o.line);
    }
    if (st != HDP_OK) {
        hdp_klsweep_free(&sw);
        return cli_fail("kl", &err);
    }
    sweep_ctx c = {m, &sw};
    rc = kl_write(a, sweep_table, sweep_json, &c, "kl-sweep", sweep_figure);
    hdp_klsweep_free(&sw);
    return rc;
}

int kl_run(const hdp_model *m, int threads, const kl_args *a)
{
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    int by = 0; /* 0 epochs, 1 depth, 2 width */
    if (a->vs) {
        if (!strcasecmp(a->vs, "epochs")) by = 0;
        else if (!strcasecmp(a->vs, "depth")) by = 1;
        else if (!strcasecmp(a->vs, "width")) by = 2;
        else
            return kl_bad("--vs '%s': expected epochs, depth or width", a->vs);
    }
    int want[4], nw, rc;
    if (a->schemes) {
        if ((rc = kl_parse_schemes(a->schemes, want, &nw)))
            return rc;
    } else if (by == 0) {
        for (int k = 0; k < 4; k++)
            want[k] = k == (int)kp->init;
    } else {
        for (int k = 0; k < 4; k++)
            want[k] = 1;
    }
    return by == 0 ? run_epochs(m, threads, want, a) : run_sweep(m, threads, want, by == 1, a);
}
