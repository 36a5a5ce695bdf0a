/*
 * cmd_nc.c — `hdpsgd nc`: NoisyGD / NoisySGD on neural-collapse features (seed 004;
 * THEORY.md 6 and 8; the library is hdpsgd/nc.h).
 *
 *   hdpsgd nc [MODEL.ini] ...            one Monte Carlo run of the [nc] model, with the exact
 *                                        one-step error where it applies;
 *   hdpsgd nc --exact ...                the exact one-step error only (quadrature);
 *   hdpsgd nc --sweep flat|perturb|remedy  the error against the feature dimension p for a
 *                                        set of curves (below), a CSV and a gnuplot figure
 *                                        (plots/nc-sweep.gp).
 * Every sweep point has its own random stream (sim.seed mixed with the curve and the p
 * index through splitmix64), so points are independent and the CSV is the same for any
 * --threads. Every point's spec is checked before anything runs; outputs are written
 * after the computation (atomically).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/output.h"
#include "io/plot.h"
#include "cli.h"
#include "hdpsgd/nc.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"

static const char *json_path, *csv_path, *figure_path, *sweep_name, *ps_opt;
static int exact_only;
static long draws_opt;
static cli_mc_args mc;

const cli_opt nc_opts[] = {
    {"draws", 0, OPT_LONG, &draws_opt, "N",
     "Monte Carlo draws (overrides nc.draws; --sweep: default 400 per point)"},
    {"threads", 0, OPT_LONG, &mc.threads, "T",
     "OpenMP threads (default 0 = one per core); results do not depend on it"},
    {"seed", 0, OPT_STRING, &mc.seed, "S", "base seed, unsigned 64-bit (overrides sim.seed)"},
    {"exact", 0, OPT_FLAG, &exact_only, NULL,
     "only the exact one-step error (quadrature, no Monte Carlo)"},
    {"sweep", 0, OPT_STRING, &sweep_name, "NAME", "error against p: flat | perturb | remedy"},
    {"ps", 0, OPT_STRING, &ps_opt, "LIST",
     "--sweep: comma-separated p values (default 10,30,100,300,1000,3000,10000)"},
    {"output", 'o', OPT_OUTPUT, &csv_path, "FILE.csv",
     "CSV, one row per run (--sweep: default nc-NAME.csv)"},
    {"figure", 'f', OPT_FIGURE, &figure_path, "FIG",
     "--sweep: the figure, PNG/PDF/SVG by extension (default nc-NAME.png)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "JSON summary"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* ---- one point: spec, problem, Monte Carlo (or the exact error only) ---- */

typedef struct {
    int curve;
    hdp_nc_spec spec;
    hdp_nc_result res;
    double exact;
    double offset_norm, pca_alignment;
} nc_point;

static hdp_status run_point(nc_point *pt, int threads, int exact_alone, hdp_error *err)
{
    hdp_nc_problem pb;
    hdp_status st = hdp_nc_problem_alloc(&pt->spec, &pb, err);
    if (st != HDP_OK)
        return st;
    pt->offset_norm = pb.offset_norm;
    pt->pca_alignment = pb.P ? pb.pca_alignment : NAN;
    if (exact_alone) {
        memset(&pt->res, 0, sizeof pt->res);
        pt->res.sigma = pb.sigma;
        pt->res.rho_total = (double)pt->spec.steps * pt->spec.rho;
        pt->res.epsilon = hdp_zcdp_epsilon_cks(pt->res.rho_total, pt->spec.delta);
        pt->res.error_mean = pt->res.error_stderr = NAN;
        st = hdp_nc_exact_error(&pb, &pt->exact, err);
        pt->res.exact_error = pt->exact;
    } else {
        st = hdp_nc_run(&pb, threads, &pt->res, err);
        pt->exact = pt->res.exact_error;
    }
    hdp_nc_problem_free(&pb);
    return st;
}

/* |error - exact| / stderr: NaN without an exact value or when the draws all gave the same
 * error (a vanishing standard error) */
static double zscore(const hdp_nc_result *r, double exact)
{
    if (isnan(exact) || !(r->error_stderr > 1e-12))
        return NAN;
    return fabs(r->error_mean - exact) / r->error_stderr;
}

static void csv_header(FILE *f)
{
    fprintf(f, "curve,name,p,K,n,loss,init,steps,eta,batch,perturbation,beta,remedy,imbalance,G,"
               "rho,rho_total,epsilon,delta,sigma,draws,error,stderr,exact,z_exact,"
               "clipped_fraction,max_clipped_norm,offset_norm,pca_alignment,seconds\n");
}

static void csv_row(FILE *f, const char *name, const nc_point *pt)
{
    const hdp_nc_spec *s = &pt->spec;
    const hdp_nc_result *r = &pt->res;
    double z = zscore(r, pt->exact);
    char em[40], es[40], ex[40], zz[40], pa[40];
    fprintf(f, "%d,%s,%ld,%ld,%ld,%s,%s,%ld,%.10g,%ld,%s,%.10g,%s,%.10g,%.10g,%.10g,%.10g,%.10g,"
               "%.10g,%.10g,%ld,%s,%s,%s,%s,%.6g,%.10g,%.10g,%s,%.4g\n",
            pt->curve, name, s->p, s->K, s->n, hdp_nc_loss_name(s->loss), hdp_nc_init_name(s->init),
            s->steps, s->eta, s->batch, hdp_nc_perturbation_name(s->perturbation), s->beta,
            hdp_nc_remedy_name(s->remedy), s->imbalance, s->G, s->rho, r->rho_total, r->epsilon,
            s->delta, r->sigma, r->draws, hdp_csv_field(em, sizeof em, "%.10g", r->error_mean),
            hdp_csv_field(es, sizeof es, "%.6g", r->error_stderr),
            hdp_csv_field(ex, sizeof ex, "%.10g", pt->exact), hdp_csv_field(zz, sizeof zz, "%.4g", z),
            r->clipped_fraction, r->max_clipped_norm, pt->offset_norm,
            hdp_csv_field(pa, sizeof pa, "%.6g", pt->pca_alignment), r->seconds);
}

static void meta(FILE *f, const char *what, const hdp_model *m)
{
    fprintf(f, "# hdpsgd %s nc: %s (seed 004; THEORY.md 6, 8)\n", hdp_version_string(), what);
    fprintf(f, "# rho is zCDP per step (seed 004's rho = rho_z); rho_total = steps rho; epsilon by "
               "Canonne-Kamath-Steinke at delta\n");
    fprintf(f, "# error = mean over draws of the exact test error of the trained model; exact = "
               "the one-step closed form (an empty field where it does not apply); z_exact = "
               "|error - exact| / stderr\n");
    hdp_model_write_meta(m, f);
}

/* ---- the single run ---- */

static const char *pert_text(const hdp_nc_spec *s)
{
    switch (s->perturbation) {
    case HDP_NC_PERT_NONE: return "none (perfect collapse)";
    case HDP_NC_PERT_TEST_OFFSET: return "fixed test offset v, ||v||_inf = beta";
    case HDP_NC_PERT_ADVERSARIAL: return "adversarial test perturbation, ||v||_inf <= beta";
    case HDP_NC_PERT_STOCHASTIC: return "stochastic test noise +-beta per coordinate";
    case HDP_NC_PERT_TRAIN_OFFSET: return "fixed training offset v, ||v||_inf = beta";
    case HDP_NC_PERT_BOTH: return "the same fixed offset v on training and test features";
    case HDP_NC_PERT_PER_SAMPLE: return "per-sample training noise +-beta per coordinate";
    }
    return "?";
}

static void print_point(const nc_point *pt, int exact_alone)
{
    const hdp_nc_spec *s = &pt->spec;
    const hdp_nc_result *r = &pt->res;
    long nk[1000];
    hdp_nc_class_sizes(s->K, s->n, s->imbalance, nk);
    printf("NoisyGD on neural-collapse features (seed 004; THEORY.md 8)\n");
    printf("  features   K = %ld classes, ETF in R^p, p = %ld; n = %ld samples (%s: class 1 "
           "has %ld, class %ld has %ld)\n",
           s->K, s->p, s->n, s->imbalance > 0 ? "imbalanced" : "balanced", nk[0], s->K,
           nk[s->K - 1]);
    printf("  training   %s, loss %s, init %s, T = %ld step%s, eta = %g, G = %g\n",
           s->batch ? "NoisySGD" : "NoisyGD (full batch)", hdp_nc_loss_name(s->loss),
           hdp_nc_init_name(s->init), s->steps, s->steps == 1 ? "" : "s", s->eta, s->G);
    if (s->batch)
        printf("             batches of %ld samples, step eta/b\n", s->batch);
    printf("  perturbed  %s%s", pert_text(s), s->perturbation ? "" : "\n");
    if (s->perturbation)
        printf(", beta = %g (||v||_2 = %.4g)\n", s->beta,
               pt->offset_norm > 0 ? pt->offset_norm : s->beta * sqrt((double)s->p));
    printf("  remedy     %s", hdp_nc_remedy_name(s->remedy));
    if (s->remedy == HDP_NC_REMEDY_PCA)
        printf(" (%ld public samples; alignment with span(M): %.4f)", s->public_samples,
               pt->pca_alignment);
    printf("\n  privacy    rho = %g zCDP per step (seed 004's rho; rho_z in privacy.h terms) x %ld "
           "= %g-zCDP: (epsilon, delta) = (%.4g, %g) by CKS; noise sigma = G/sqrt(2 rho) = %.6g\n",
           s->rho, s->steps, r->rho_total, r->epsilon, s->delta, r->sigma);
    if (!exact_alone) {
        printf("  Monte Carlo  %ld draws: error %.6f +- %.6f (range %.3g .. %.3g), %.2f s on %d "
               "thread%s\n",
               r->draws, r->error_mean, r->error_stderr, r->error_min, r->error_max, r->seconds,
               r->threads, r->threads == 1 ? "" : "s");
        printf("  clipping   %.4g of the per-sample gradients clipped; largest clipped norm %.6g "
               "(G = %g)\n",
               r->clipped_fraction, r->max_clipped_norm, s->G);
    }
    if (isnan(pt->exact))
        printf("  exact      no closed form here (it needs one full-batch step from W = 0 and a "
               "deterministic training and test set)\n");
    else if (exact_alone)
        printf("  exact      one-step error %.10g\n", pt->exact);
    else
        printf("  exact      one-step error %.10g; Monte Carlo - exact = %+.3g (%.2f standard "
               "errors)\n",
               pt->exact, r->error_mean - pt->exact, zscore(r, pt->exact));
}

static void write_json(FILE *f, const nc_point *pt, int exact_alone)
{
    const hdp_nc_spec *s = &pt->spec;
    const hdp_nc_result *r = &pt->res;
    hdp_json j;
    hdp_json_begin(&j, f);
    hdp_json_int(&j, "K", s->K);
    hdp_json_int(&j, "p", s->p);
    hdp_json_int(&j, "n", s->n);
    hdp_json_num(&j, "imbalance", s->imbalance);
    hdp_json_str(&j, "loss", hdp_nc_loss_name(s->loss));
    hdp_json_str(&j, "init", hdp_nc_init_name(s->init));
    hdp_json_int(&j, "steps", s->steps);
    hdp_json_num(&j, "eta", s->eta);
    hdp_json_int(&j, "batch", s->batch);
    hdp_json_str(&j, "perturbation", hdp_nc_perturbation_name(s->perturbation));
    hdp_json_num(&j, "beta", s->beta);
    hdp_json_str(&j, "remedy", hdp_nc_remedy_name(s->remedy));
    hdp_json_num(&j, "G", s->G);
    hdp_json_num(&j, "rho", s->rho);
    hdp_json_num(&j, "rho_total", r->rho_total);
    hdp_json_num(&j, "delta", s->delta);
    hdp_json_num(&j, "epsilon", r->epsilon);
    hdp_json_num(&j, "sigma", r->sigma);
    hdp_json_num(&j, "exact_error", pt->exact);
    if (!exact_alone) {
        hdp_json_int(&j, "draws", r->draws);
        hdp_json_num(&j, "error_mean", r->error_mean);
        hdp_json_num(&j, "error_stderr", r->error_stderr);
        hdp_json_num(&j, "error_min", r->error_min);
        hdp_json_num(&j, "error_max", r->error_max);
        hdp_json_num(&j, "z_exact", zscore(r, pt->exact));
        hdp_json_num(&j, "clipped_fraction", r->clipped_fraction);
        hdp_json_num(&j, "max_clipped_norm", r->max_clipped_norm);
        hdp_json_int(&j, "threads", r->threads);
        hdp_json_num(&j, "seconds", r->seconds);
    }
    hdp_json_num(&j, "offset_norm", pt->offset_norm);
    hdp_json_num(&j, "pca_alignment", pt->pca_alignment);
    hdp_json_uint(&j, "seed", s->seed);
    hdp_json_end(&j);
}

/* Write the CSV (rows of pts) and the JSON, all or nothing. */
static hdp_status write_outputs(const char *what, const hdp_model *m, const char *const *names,
                                const nc_point *pts, long count, const char *json_text,
                                hdp_error *err)
{
    hdp_outfile files[2];
    memset(files, 0, sizeof files);
    int nf = 0;
    hdp_status st = HDP_OK;
    if (csv_path) {
        st = hdp_out_open(&files[nf], csv_path, err);
        if (st == HDP_OK) {
            meta(files[nf].f, what, m);
            csv_header(files[nf].f);
            for (long i = 0; i < count; i++)
                csv_row(files[nf].f, names[pts[i].curve], &pts[i]);
            nf++;
        }
    }
    if (st == HDP_OK && json_path) {
        st = hdp_out_open(&files[nf], json_path, err);
        if (st == HDP_OK) {
            fputs(json_text, files[nf].f);
            nf++;
        }
    }
    if (st == HDP_OK && nf > 0)
        st = hdp_out_commit_all(files, nf, err);
    for (int i = 0; i < 2; i++)
        hdp_out_abort(&files[i]);
    return st;
}

/* The first key that keeps the exact one-step error from applying (hdp_nc_exact_applies). */
static hdp_status exact_not_applicable(const hdp_model *m, const hdp_nc_spec *s, hdp_error *err)
{
    const char *how = "(drop --exact for the Monte Carlo)";
    if (s->steps != 1)
        return hdp_model_fail_key(m, "nc", "steps", err,
                                  "steps = %ld: the exact error is for one NoisyGD step %s",
                                  s->steps, how);
    if (s->init != HDP_NC_INIT_ZERO)
        return hdp_model_fail_key(m, "nc", "init", err,
                                  "init = %s: the exact error starts from W = 0 %s",
                                  hdp_nc_init_name(s->init), how);
    if (s->batch != 0)
        return hdp_model_fail_key(m, "nc", "batch", err,
                                  "batch = %ld: the exact error is for full-batch NoisyGD %s",
                                  s->batch, how);
    return hdp_model_fail_key(m, "nc", "perturbation", err,
                              "perturbation = %s is random (or adversarial): the exact error "
                              "needs none, test-offset, train-offset or both %s",
                              hdp_nc_perturbation_name(s->perturbation), how);
}

static int single(hdp_model *m, const hdp_nc_spec *s)
{
    hdp_error err;
    hdp_error_clear(&err);
    nc_point pt;
    memset(&pt, 0, sizeof pt);
    pt.spec = *s;
    if (exact_only && !hdp_nc_exact_applies(s)) {
        exact_not_applicable(m, s, &err);
        return cli_fail("nc", &err);
    }
    hdp_status st = run_point(&pt, cli_mc_threads(&mc), exact_only, &err);
    if (st != HDP_OK)
        return cli_fail("nc", &err);
    char *json_text = NULL;
    size_t json_len = 0;
    FILE *jf = open_memstream(&json_text, &json_len);
    if (!jf) {
        hdp_fail(&err, HDP_ENOMEM, "out of memory");
        return cli_fail("nc", &err);
    }
    write_json(jf, &pt, exact_only);
    fclose(jf);
    const char *names[] = {"single"};
    st = write_outputs(exact_only ? "the exact one-step error" : "one Monte Carlo run", m, names,
                       &pt, 1, json_text, &err);
    free(json_text);
    if (st != HDP_OK)
        return cli_fail("nc", &err);
    print_point(&pt, exact_only);
    return 0;
}

/* ---- the sweeps over p ---- */

#define NC_MAX_CURVES 12
#define NC_MAX_PS 64

typedef struct {
    const char *name;   /* the CSV's name column */
    char label[160];    /* the legend */
    char sets[5][80];   /* nc.key=value overrides of the base model */
    int nsets;
    int reference;      /* 1: drawn dashed, as the unremedied reference */
} nc_curve;

/* a NULL-terminated list of key=value strings of [nc] */
#define SETS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void curve(nc_curve *c, const char *name, int reference, const char *label,
                  const char *const *sets)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->reference = reference;
    snprintf(c->label, sizeof c->label, "%s", label);
    for (int i = 0; sets[i] && c->nsets < 5; i++)
        snprintf(c->sets[c->nsets++], sizeof c->sets[0], "nc.%s", sets[i]);
}

/* The fixed curves of the perturb and remedy sweeps: name, reference, legend, [nc] keys. */
typedef struct {
    const char *name;
    int reference;
    const char *label;
    const char *sets[4];
} curve_row;

static const curve_row perturb_rows[] = {
    {"none", 0, "none: perfect collapse", {"perturbation=none", "remedy=none"}},
    {"test-offset", 0, "fixed test offset", {"perturbation=test-offset", "remedy=none"}},
    {"adversarial", 0, "adversarial test perturbation",
     {"perturbation=adversarial", "remedy=none"}},
    {"stochastic", 0, "stochastic test noise ±β", {"perturbation=stochastic", "remedy=none"}},
    {"train-offset", 0, "fixed training offset", {"perturbation=train-offset", "remedy=none"}},
    {"both", 0, "same offset on training and test", {"perturbation=both", "remedy=none"}},
    {"both-imbalanced", 0, "offset on both, imbalanced α = 0.3",
     {"perturbation=both", "remedy=none", "imbalance=0.3"}},
    {"per-sample", 0, "per-sample training noise ±β", {"perturbation=per-sample", "remedy=none"}},
};

static const curve_row remedy_rows[] = {
    {"train-offset+center", 0, "training offset + centring",
     {"perturbation=train-offset", "remedy=center"}},
    {"both+center", 0, "offset on both + centring", {"perturbation=both", "remedy=center"}},
    {"both-imbalanced+center", 0, "offset on both, α = 0.3, + centring",
     {"perturbation=both", "remedy=center", "imbalance=0.3"}},
    {"test-offset+pca", 0, "test offset + PCA", {"perturbation=test-offset", "remedy=pca"}},
    {"stochastic+pca", 0, "stochastic test noise + PCA", {"perturbation=stochastic", "remedy=pca"}},
    {"adversarial+pca", 0, "adversarial + PCA", {"perturbation=adversarial", "remedy=pca"}},
    {"per-sample+pca", 0, "per-sample training noise + PCA",
     {"perturbation=per-sample", "remedy=pca"}},
    {"both", 1, "offset on both, no remedy", {"perturbation=both", "remedy=none"}},
    {"per-sample", 1, "per-sample noise, no remedy", {"perturbation=per-sample", "remedy=none"}},
};

static int from_rows(const curve_row *rows, int count, const hdp_model *m, nc_curve *cv)
{
    for (int i = 0; i < count; i++) {
        const char *sets[5] = {rows[i].sets[0], rows[i].sets[1], rows[i].sets[2], rows[i].sets[3],
                               NULL};
        curve(&cv[i], rows[i].name, rows[i].reference, rows[i].label, sets);
        if (!strcmp(rows[i].name, "per-sample+pca")) { /* its limit is the public sample size */
            size_t len = strlen(cv[i].label);
            snprintf(cv[i].label + len, sizeof cv[i].label - len, " (%ld public samples)",
                     m->nc_public_samples);
        }
    }
    return count;
}

/* The curves of each sweep (see the help). Returns the count, 0 for an unknown name. */
static int sweep_curves(const char *name, const hdp_model *m, nc_curve *cv)
{
    if (!strcmp(name, "perturb"))
        return from_rows(perturb_rows, (int)(sizeof perturb_rows / sizeof perturb_rows[0]), m, cv);
    if (!strcmp(name, "remedy"))
        return from_rows(remedy_rows, (int)(sizeof remedy_rows / sizeof remedy_rows[0]), m, cv);
    if (strcmp(name, "flat"))
        return 0;
    /* flat: perfect collapse under the changes that seed 004 says do not matter */
    const double eta = m->nc_eta;
    char eta100[80], eta5[80], batch[80], label[160];
    snprintf(eta100, sizeof eta100, "eta=%.17g", eta / 100);
    snprintf(eta5, sizeof eta5, "eta=%.17g", eta / 5);
    snprintf(batch, sizeof batch, "batch=%ld", m->nc_n / 2 > 0 ? m->nc_n / 2 : 1);
    int n = 0;
    snprintf(label, sizeof label, "NoisyGD, cross-entropy, η = %g", eta);
    curve(&cv[n++], "ce", 0, label, SETS("loss=ce", "perturbation=none", "remedy=none"));
    snprintf(label, sizeof label, "η = %g", eta / 100);
    curve(&cv[n++], "eta", 0, label,
          SETS("loss=ce", "perturbation=none", "remedy=none", eta100));
    curve(&cv[n++], "squared", 0, "squared loss",
          SETS("loss=squared", "perturbation=none", "remedy=none"));
    curve(&cv[n++], "imbalance", 0, "imbalanced classes: α = 0.3",
          SETS("loss=ce", "perturbation=none", "remedy=none", "imbalance=0.3"));
    snprintf(label, sizeof label, "NoisyGD, T = 5 steps, η = %g (5ρ-zCDP)", eta / 5);
    curve(&cv[n++], "steps", 0, label,
          SETS("loss=ce", "perturbation=none", "remedy=none", "steps=5", eta5));
    snprintf(label, sizeof label, "NoisySGD, batch n/2, T = 5, η = %g (5ρ-zCDP)", eta);
    curve(&cv[n++], "sgd", 0, label,
          SETS("loss=ce", "perturbation=none", "remedy=none", "steps=5", batch));
    curve(&cv[n++], "gaussian", 0, "Gaussian initialisation N(0, 1)",
          SETS("loss=ce", "perturbation=none", "remedy=none", "init=gaussian"));
    return n;
}

/* --ps: comma-separated integers >= 2, increasing. Returns the count or -1 (message printed). */
static int parse_ps(const char *text, long *ps)
{
    int n = 0;
    const char *c = text;
    while (*c) {
        char *end;
        errno = 0;
        long v = strtol(c, &end, 10);
        if (end == c || errno || (*end && *end != ',') || v < 2 || v > 100000000L ||
            (n > 0 && v <= ps[n - 1]) || n == NC_MAX_PS) {
            fprintf(stderr,
                    "hdpsgd nc: error: --ps '%s': expected up to %d increasing integers >= 2 "
                    "separated by commas (for example 10,100,1000)\n",
                    text, NC_MAX_PS);
            return -1;
        }
        ps[n++] = v;
        c = *end ? end + 1 : end;
    }
    if (n == 0) {
        fprintf(stderr, "hdpsgd nc: error: --ps is empty\n");
        return -1;
    }
    return n;
}

/* max over p of |e_p - e_first| / sqrt(se_p^2 + se_first^2): the flatness statistic */
static double flat_z(const nc_point *pts, int np)
{
    double z = 0;
    for (int i = 1; i < np; i++) {
        double d = fabs(pts[i].res.error_mean - pts[0].res.error_mean);
        double se = sqrt(pts[i].res.error_stderr * pts[i].res.error_stderr +
                         pts[0].res.error_stderr * pts[0].res.error_stderr);
        if (se > 0)
            z = fmax(z, d / se);
        else if (d > 0)
            z = INFINITY;
    }
    return z;
}

static int sweep(hdp_model *m, const hdp_nc_spec *base)
{
    hdp_error err;
    hdp_error_clear(&err);
    nc_curve cv[NC_MAX_CURVES];
    int nc = sweep_curves(sweep_name, m, cv);
    if (nc == 0) {
        fprintf(stderr, "hdpsgd nc: error: --sweep '%s': expected flat, perturb or remedy\n",
                sweep_name);
        return EXIT_BAD_INPUT;
    }
    long ps[NC_MAX_PS];
    int np = parse_ps(ps_opt ? ps_opt : "10,30,100,300,1000,3000,10000", ps);
    if (np < 0)
        return EXIT_BAD_INPUT;
    long draws = hdp_model_key_given(m, "nc", "draws") ? m->nc_draws : 400;
    /* every point's spec, checked before anything runs */
    nc_point *pts = calloc((size_t)(nc * np), sizeof *pts);
    hdp_model *mc_model = malloc(sizeof *mc_model);
    if (!pts || !mc_model) {
        free(pts);
        free(mc_model);
        hdp_fail(&err, HDP_ENOMEM, "out of memory");
        return cli_fail("nc", &err);
    }
    int rc = 0;
    for (int c = 0; c < nc && !rc; c++) {
        *mc_model = *m; /* a shallow copy: only the [nc] keys change, nothing is freed */
        hdp_nc_spec s;
        hdp_status st = HDP_OK;
        for (int k = 0; k < cv[c].nsets && st == HDP_OK; k++)
            st = hdp_model_set(mc_model, cv[c].sets[k], &err);
        for (int i = 0; i < np && st == HDP_OK; i++) {
            mc_model->nc_p = ps[i];
            st = hdp_nc_spec_from_model(mc_model, &s, &err);
            if (st != HDP_OK && strstr(err.msg, "[nc] p:")) {
                hdp_error_clear(&err);
                hdp_fail(&err, HDP_EINPUT, "--ps: p = %ld: %s", ps[i],
                         "every p of the sweep must be >= nc.K (the ETF needs p >= K) and keep "
                         "the stored features below 2e8 numbers");
            }
            if (st == HDP_OK) {
                s.draws = draws;
                /* an independent stream per point: splitmix64 of the seed, curve and p index */
                uint64_t x = (uint64_t)base->seed ^ ((uint64_t)(c + 1) << 40) ^ (uint64_t)(i + 1);
                s.seed = hdp_splitmix64_next(&x);
                pts[c * np + i].curve = c;
                pts[c * np + i].spec = s;
            }
        }
        if (st != HDP_OK) {
            fprintf(stderr, "hdpsgd nc: curve '%s' of --sweep %s:\n", cv[c].name, sweep_name);
            rc = cli_fail("nc", &err);
        }
    }
    free(mc_model);
    if (rc) {
        free(pts);
        return rc;
    }
    char default_csv[128], default_fig[128];
    snprintf(default_csv, sizeof default_csv, "nc-%s.csv", sweep_name);
    snprintf(default_fig, sizeof default_fig, "nc-%s.png", sweep_name);
    if (!csv_path) csv_path = default_csv;
    if (!figure_path) figure_path = default_fig;
    struct stat sb;
    if (!strcmp(csv_path, "-") || (stat(csv_path, &sb) == 0 && !S_ISREG(sb.st_mode))) {
        fprintf(stderr, "hdpsgd nc: error: -o %s: --sweep writes its CSV to a regular file (the "
                        "figure is drawn from it); nothing was run\n", csv_path);
        free(pts);
        return EXIT_BAD_INPUT;
    }

    int threads = cli_mc_threads(&mc);
    double total_seconds = 0;
    for (int k = 0; k < nc * np; k++) {
        nc_point *pt = &pts[k];
        hdp_status st = run_point(pt, threads, 0, &err);
        if (st != HDP_OK) {
            free(pts);
            return cli_fail("nc", &err);
        }
        total_seconds += pt->res.seconds;
        fprintf(stderr, "hdpsgd nc --sweep %s: [%d/%d] %-22s p = %-6ld error %.4f +- %.4f",
                sweep_name, k + 1, nc * np, cv[pt->curve].name, pt->spec.p, pt->res.error_mean,
                pt->res.error_stderr);
        if (!isnan(pt->exact))
            fprintf(stderr, " (exact %.4f)", pt->exact);
        fprintf(stderr, "  %.2f s\n", pt->res.seconds);
    }
    /* JSON: per curve the flatness statistic and the growth from the first to the last p */
    char *json_text = NULL;
    size_t json_len = 0;
    FILE *jf = open_memstream(&json_text, &json_len);
    const char *names[NC_MAX_CURVES];
    for (int c = 0; c < nc; c++)
        names[c] = cv[c].name;
    if (jf) {
        hdp_json j;
        hdp_json_begin(&j, jf);
        hdp_json_str(&j, "sweep", sweep_name);
        hdp_json_int(&j, "curves", nc);
        hdp_json_int(&j, "points", np);
        hdp_json_int(&j, "p_first", ps[0]);
        hdp_json_int(&j, "p_last", ps[np - 1]);
        hdp_json_int(&j, "draws", draws);
        hdp_json_num(&j, "rho", base->rho);
        hdp_json_num(&j, "delta", base->delta);
        hdp_json_num(&j, "epsilon_per_step", hdp_zcdp_epsilon_cks(base->rho, base->delta));
        for (int c = 0; c < nc; c++) {
            char key[128];
            const nc_point *row = pts + c * np;
            snprintf(key, sizeof key, "%s_error_first", cv[c].name);
            hdp_json_num(&j, key, row[0].res.error_mean);
            snprintf(key, sizeof key, "%s_error_last", cv[c].name);
            hdp_json_num(&j, key, row[np - 1].res.error_mean);
            snprintf(key, sizeof key, "%s_flat_z", cv[c].name);
            hdp_json_num(&j, key, flat_z(row, np));
            snprintf(key, sizeof key, "%s_max_z_exact", cv[c].name);
            double zx = NAN;
            for (int i = 0; i < np; i++) {
                double z = zscore(&row[i].res, row[i].exact);
                if (!isnan(z)) zx = isnan(zx) ? z : fmax(zx, z);
            }
            hdp_json_num(&j, key, zx);
        }
        hdp_json_num(&j, "seconds", total_seconds);
        hdp_json_end(&j);
        fclose(jf);
    }
    /* the CSV and the JSON to their temporary files, the figure from the CSV's temporary file,
     * then publish the two files: nothing is published unless all three were made */
    hdp_outfile files[2];
    memset(files, 0, sizeof files);
    int nf = 0;
    hdp_status st = jf ? hdp_out_open(&files[nf], csv_path, &err)
                       : hdp_fail(&err, HDP_ENOMEM, "out of memory");
    if (st == HDP_OK) {
        char what[96];
        snprintf(what, sizeof what, "--sweep %s: misclassification error against p", sweep_name);
        meta(files[nf].f, what, m);
        csv_header(files[nf].f);
        for (long k = 0; k < (long)nc * np; k++)
            csv_row(files[nf].f, names[pts[k].curve], &pts[k]);
        nf++;
        if (fflush(files[0].f) != 0)
            st = hdp_fail(&err, HDP_EIO, "%s: cannot write: %s", csv_path, strerror(errno));
    }
    if (st == HDP_OK && json_path) {
        st = hdp_out_open(&files[nf], json_path, &err);
        if (st == HDP_OK)
            fputs(json_text, files[nf++].f);
    }
    free(json_text);
    if (st == HDP_OK) {
        char assign[8192] = "", title[512], buf[64];
        double eps = hdp_zcdp_epsilon_cks(base->rho, base->delta);
        const char *what_sweep =
            !strcmp(sweep_name, "flat")      ? "perfect collapse: the error does not depend on p"
            : !strcmp(sweep_name, "perturb") ? "perturbed features: the dimension comes back"
                                             : "remedies: centring and PCA";
        snprintf(title, sizeof title,
                 "NoisyGD on neural-collapse features (seed 004): %s\n"
                 "K = %ld, n = %ld, G = %g, ρ = %g zCDP per step → (ε, δ) = (%.3g, %g) per step; "
                 "β = %g; %ld draws per point",
                 what_sweep, base->K, base->n, base->G, base->rho, eps, base->delta, base->beta,
                 draws);
        hdp_plot_assign(assign, sizeof assign, "data_file",
                        files[0].direct ? files[0].path : files[0].tmp);
        hdp_plot_assign(assign, sizeof assign, "title_text", title);
        for (int c = 0; c < nc; c++) {
            snprintf(buf, sizeof buf, "label_%d", c);
            hdp_plot_assign(assign, sizeof assign, buf, cv[c].label);
            size_t len = strlen(assign);
            snprintf(assign + len, sizeof assign - len, "ref_%d=%d\n", c, cv[c].reference);
        }
        size_t len = strlen(assign);
        double top = 0; /* the error axis: up to the highest point, at most 1 */
        for (long k = 0; k < (long)nc * np; k++)
            top = fmax(top, fmax(pts[k].res.error_mean + pts[k].res.error_stderr,
                                 isnan(pts[k].exact) ? 0 : pts[k].exact));
        double ymax = fmin(1.04, fmax(0.1, 1.3 * top + 0.02));
        snprintf(assign + len, sizeof assign - len, "ncurves=%d\nchance=%.17g\nymax=%.6g\n", nc,
                 1.0 - 1.0 / (double)base->K, ymax);
        st = hdp_plot_draw("nc-sweep", figure_path, assign, &err);
    }
    if (st == HDP_OK)
        st = hdp_out_commit_all(files, nf, &err);
    for (int i = 0; i < 2; i++)
        hdp_out_abort(&files[i]);
    free(pts);
    if (st != HDP_OK)
        return cli_fail("nc", &err);
    fprintf(stderr, "hdpsgd nc --sweep %s: %.1f s of Monte Carlo -> %s, %s%s%s\n",
            sweep_name, total_seconds, csv_path, figure_path, json_path ? ", " : "",
            json_path ? json_path : "");
    return 0;
}

int cmd_nc(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("nc");
    cli_common common;
    json_path = csv_path = figure_path = sweep_name = ps_opt = NULL;
    exact_only = 0;
    draws_opt = CLI_NOT_GIVEN;
    cli_mc_args_reset(&mc);
    int rc = cli_parse(cmd, argc, argv, &common);
    if (rc)
        return rc;
    if (common.help) {
        cli_print_help(cmd, stdout);
        return 0;
    }
    if (draws_opt != CLI_NOT_GIVEN && draws_opt < 1) {
        fprintf(stderr, "hdpsgd nc: error: --draws %ld: expected an integer >= 1\n", draws_opt);
        return EXIT_BAD_INPUT;
    }
    if (sweep_name && exact_only) {
        fprintf(stderr, "hdpsgd nc: error: --exact and --sweep exclude each other\n");
        return EXIT_BAD_INPUT;
    }
    if (!sweep_name && (ps_opt || figure_path)) {
        fprintf(stderr, "hdpsgd nc: error: --%s needs --sweep\n", ps_opt ? "ps" : "figure");
        return EXIT_BAD_INPUT;
    }
    char draws_set[64];
    if (draws_opt != CLI_NOT_GIVEN) {
        if ((rc = cli_add_set("nc", &common, draws_set, sizeof draws_set, "nc.draws=%ld",
                              draws_opt)))
            return rc;
    }
    if ((rc = cli_mc_args_apply("nc", &mc, &common)))
        return rc;
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_nc_spec s;
    if (hdp_nc_spec_from_model(&m, &s, &err) != HDP_OK) {
        hdp_model_free(&m);
        return cli_fail("nc", &err);
    }
    rc = sweep_name ? sweep(&m, &s) : single(&m, &s);
    hdp_model_free(&m);
    return rc;
}
