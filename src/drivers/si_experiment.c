/*
 * si_experiment.c — the sim-index experiments driver (hdpsgd/siexp.h): risk against the
 * stage-2 epsilon and against n (points on the grid runner), and the alignment histograms.
 * Prints nothing.
 */
#include "hdpsgd/siexp.h"
#include "core/check.h"

#include <math.h>
#include <string.h>

#include "hdpsgd/grid.h"

static const double eps_targets[] = {0.25, 0.5, 1, 2, 4, 8, 16, 32, INFINITY};
static const long n_values[] = {500, 1000, 2000, 4000, 8000};

typedef struct {
    const hdp_model *m;
    hdp_siexp *xp;
    int threads;
    hdp_si_problem *pb; /* eps: the one problem */
} run_ctx;

static void row_of(hdp_siexp_row *row, const hdp_si_problem *pb, const hdp_si_result *r)
{
    row->hp = pb->hp;
    row->risk = r->risk_mean;
    row->risk_se = r->risk_se;
    row->ou_risk = pb->ou_risk;
    row->gd_risk = pb->gd_risk;
    row->zero_risk = pb->zero_risk;
    row->clipped = r->clipped;
    row->align_mean = pb->align_mean;
    row->align0_mean = pb->align0_mean;
    row->clipped1 = pb->clipped1;
}

static hdp_status eps_job(void *user, long i, void *unused, hdp_error *err)
{
    (void)unused;
    run_ctx *c = user;
    hdp_siexp_row *row = &c->xp->rows[i];
    row->epsilon = eps_targets[i];
    hdp_si_result r;
    hdp_status st;
    if (c->xp->spec.k.epsilon_total > 0) {
        /* the total budget: stage 1's noise changes with it, so a new problem (same data) */
        hdp_si_spec s = c->xp->spec;
        s.k.epsilon_total = eps_targets[i];
        hdp_si_problem_free(c->pb);
        st = hdp_si_problem_build(&s, c->m, c->pb, err);
    } else {
        st = hdp_si_set_epsilon(c->pb, eps_targets[i], err);
    }
    if (st == HDP_OK)
        st = hdp_si_stage2(c->pb, hdp_si_keys_of(c->m)->runs, c->threads, &r, err);
    if (st != HDP_OK)
        return st;
    row_of(row, c->pb, &r);
    if (i == 0)
        c->xp->meta_hp = c->pb->hp;
    if (isinf(eps_targets[i]))
        c->xp->nonpriv = r.risk_mean;
    hdp_si_result_free(&r);
    return HDP_OK;
}

static hdp_status n_job(void *user, long i, void *unused, hdp_error *err)
{
    (void)unused;
    run_ctx *c = user;
    hdp_siexp_row *row = &c->xp->rows[i];
    hdp_si_spec s = c->xp->spec;
    s.k.n = row->n = n_values[i];
    hdp_si_problem pb;
    hdp_si_result r;
    hdp_status st = hdp_si_problem_build(&s, c->m, &pb, err);
    if (st == HDP_OK)
        st = hdp_si_stage2(&pb, hdp_si_keys_of(c->m)->runs, c->threads, &r, err);
    if (st == HDP_OK) {
        row_of(row, &pb, &r);
        if (i == 0)
            c->xp->meta_hp = pb.hp;
        hdp_si_result_free(&r);
    }
    hdp_si_problem_free(&pb);
    return st;
}

/* histograms of |<w_j, mu>|/||w_j|| at W_0, at sigma_W = 0, at the model's sigma_W */
static hdp_status align(const hdp_model *m, hdp_siexp *xp, hdp_error *err)
{
    hdp_si_spec *spec = &xp->spec;
    if (!hdp_model_key_given(m, "si", "p"))
        spec->k.p = 512;
    hdp_si_spec s0 = *spec;
    s0.k.sigma_W = 0;
    hdp_si_problem a, b;
    memset(&b, 0, sizeof b);
    hdp_status st = hdp_si_problem_build(&s0, m, &a, err);
    if (st == HDP_OK)
        st = hdp_si_problem_build(spec, m, &b, err);
    if (st == HDP_OK) {
        const double *al[3] = {a.align0, a.align, b.align};
        for (int c = 0; c < 3; c++)
            for (long j = 0; j < spec->k.p; j++) {
                int k = (int)(al[c][j] * HDP_SIEXP_BINS);
                xp->hist[c][k >= HDP_SIEXP_BINS ? HDP_SIEXP_BINS - 1 : k]++;
                xp->means[c] += al[c][j] / (double)spec->k.p;
            }
        xp->meta_hp = b.hp;
    }
    hdp_si_problem_free(&a);
    hdp_si_problem_free(&b);
    return st;
}

hdp_status hdp_siexp_run(const hdp_model *m, hdp_siexp_kind kind, int threads, hdp_siexp *xp,
                         hdp_error *err)
{
    HDP_ZERO(xp);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, xp);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    xp->kind = kind;
    xp->runs = hdp_si_keys_of(m)->runs;
    xp->nonpriv = NAN;
    hdp_si_spec_from_model(m, &xp->spec);
    if (kind == HDP_SIEXP_ALIGN)
        return align(m, xp, err);
    run_ctx c = {m, xp, threads, NULL};
    hdp_grid_spec g = {.user = &c};
    hdp_si_problem pb;
    memset(&pb, 0, sizeof pb);
    hdp_status st = HDP_OK;
    if (kind == HDP_SIEXP_EPS) {
        st = hdp_si_problem_build(&xp->spec, m, &pb, err);
        c.pb = &pb;
        g.count = (long)(sizeof eps_targets / sizeof eps_targets[0]);
        g.job = eps_job;
    } else {
        g.count = (long)(sizeof n_values / sizeof n_values[0]);
        g.job = n_job;
    }
    xp->nrows = (int)g.count;
    if (st == HDP_OK) {
        st = hdp_grid_each(&g, err);
    }
    if (kind == HDP_SIEXP_EPS) {
        xp->last_hp = pb.hp;
        xp->last_align_mean = pb.align_mean;
        hdp_si_problem_free(&pb);
    }
    return st;
}
