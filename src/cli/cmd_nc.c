/*
 * cmd_nc.c — `hdpsgd nc`: NoisyGD / NoisySGD on neural-collapse features (the NC paper;
 * docs/theory.md §6 and §8; the library is hdpsgd/nc.h).
 *
 *   hdpsgd nc [MODEL.ini] ...            one Monte Carlo run of the [nc] model, with the exact
 *                                        one-step error where it applies;
 *   hdpsgd nc --exact ...                the exact one-step error only (quadrature);
 *   hdpsgd nc --sweep flat|perturb|remedy|frame|projection  the error against p for a
 *                                        set of curves (below), a CSV and a gnuplot figure
 *                                        (plots/nc-sweep.gp): cmd_nc_sweep.c.
 * The points are the driver's (hdpsgd/ncsweep.h). Every sweep point has its own random stream (sim.seed mixed with the curve and the p
 * index through splitmix64), so points are independent and the CSV is the same for any
 * --threads. Every point's spec is checked before anything runs; outputs are written
 * after the computation (atomically).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "nc_cli.h"
#include "hdpsgd/privacy.h"

static nc_args args;
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
    {"sweep", 0, OPT_STRING, &args.sweep, "NAME",
     "error against p: flat | perturb | remedy | frame | projection"},
    {"ps", 0, OPT_STRING, &args.ps, "LIST",
     "--sweep: comma-separated p values (default 10,30,100,300,1000,3000,10000; frame: 5K..500K)"},
    {"output", 'o', OPT_OUTPUT, &args.csv, "FILE.csv",
     "CSV, one row per run (--sweep: default nc-NAME.csv)"},
    {"figure", 'f', OPT_FIGURE, &args.figure, "FIG",
     "--sweep: the figure, .png, .pdf, .svg, .eps or .tex (default nc-NAME.png)"},
    {"json", 0, OPT_OUTPUT, &args.json, "FILE.json", "JSON summary"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help nc` (the command table in main.c points here) */
const char nc_usage[] = "[MODEL.ini]";
const char nc_help[] =
    "When is the private error of last-layer fine-tuning independent of the feature dimension\n"
    "p, and when do perturbations bring p back (the NC paper; docs/theory.md §6, §8; the [nc]\n"
    "keys of `hdpsgd keys`). Features: the K-simplex ETF M_k in R^p (||M_k|| = 1, supported on\n"
    "the first K-1 coordinates); n samples in total (nc.imbalance = alpha: class 1 gets\n"
    "round(alpha n)).\n"
    "Training: nc.steps steps of NoisyGD (batch = 0: W <- W - eta (sum_i clip(g_i) + xi)) or\n"
    "NoisySGD (batch = b: a uniform batch of b samples and step eta/b), xi ~ N(0, sigma^2 I),\n"
    "sigma^2 = G^2/(2 rho), clip(g) = min(1, G/||g||) g (the NC paper writes max, which never\n"
    "clips); loss ce | logistic (K = 2, one vector theta) | squared; init zero | gaussian.\n"
    "PRIVACY: nc.rho is zCDP PER STEP as in the NC paper (the rho_z of `hdpsgd privacy`, not the\n"
    "rho of [privacy]); T steps are (T rho)-zCDP, reported as (epsilon, nc.delta) by CKS.\n"
    "Perturbations (nc.perturbation; l_inf size nc.beta; v = beta times fixed random signs):\n"
    "  test-offset  test features M_c + v     adversarial   the worst ||v||_inf <= beta against W\n"
    "  stochastic   test M_c + fresh +-beta   train-offset  training features M_k + v\n"
    "  both         M + v in training and test per-sample   training M_k + fresh +-beta noise\n"
    "Remedies (nc.remedy): center (training and test features each minus their mean; the mean\n"
    "is treated as public), pca (project on the top K-1 principal directions of the centred\n"
    "second moment of nc.public_samples public samples drawn like the training features),\n"
    "projection (on e_1..e_{K-1} + Delta, ||Delta||_inf = nc.projection_beta). nc.frame_classes =\n"
    "K0 > K: the classes are K vertices of the K0-simplex ETF.\n"
    "A single run makes nc.draws draws of the noise (and of the random perturbations); the test\n"
    "error of each draw is exact (stochastic: nc.test_samples random test points per class). It\n"
    "also gives the exact one-step error 1 - E_Z prod_j Phi(Z + (mu_c - mu_j)/(sigma ||z_c||)) when\n"
    "it applies (one full-batch step from W = 0, deterministic training and test features): for\n"
    "perfect collapse and balanced classes 1 - E[Phi(Z + n/((K-1) sigma))^(K-1)], i.e.\n"
    "Phi(-n/(sqrt2 sigma)) for K = 2 and Phi(-n/(2 sigma)) for the logistic model (Theorems 4\n"
    "and 5: docs/theory.md §8.3). --exact gives\n"
    "only that (exit status 2 naming the key when it does not apply). In the JSON null means\n"
    "not applicable. -o writes the run as one CSV row (columns as below).\n"
    "--sweep NAME runs its curves at every p of --ps (default 10,30,...,10000) with 400 draws per\n"
    "point unless nc.draws or --draws is given, each point on its own stream, and writes the CSV\n"
    "(-o, default nc-NAME.csv: curve,name,p,K,n,loss,init,steps,eta,batch,perturbation,beta,\n"
    "remedy,imbalance,G,rho,rho_total,epsilon,delta,sigma,draws,error,stderr,exact,z_exact,\n"
    "clipped_fraction,max_clipped_norm,offset_norm,pca_alignment,seconds) and the figure\n"
    "(--figure, default nc-NAME.png; plots/nc-sweep.gp):\n"
    "  flat     perfect collapse: ce at eta, eta/100, squared loss, imbalance 0.3, 5 steps,\n"
    "           NoisySGD (batch n/2, 5 steps), Gaussian init: all flat in p;\n"
    "  perturb  none, test-offset, adversarial, stochastic, train-offset, both, both with\n"
    "           imbalance 0.3, per-sample: the error grows with p;\n"
    "  remedy   centring against the offsets, PCA against test and per-sample noise, with two\n"
    "           unremedied curves dashed; PCA against per-sample noise fails once p is\n"
    "           comparable to m/((K-1) beta^2), m public samples (docs/theory.md §8.3);\n"
    "  frame    Theorem 4: K0 = K, 2K, 5K, p (--ps from 5K); projection: Theorem 5 (nc.K = 2),\n"
    "           per-sample noise, beta_0 = 1/p, 0.1, 0, and no remedy.\n"
    "The sweep's JSON has per curve <name>_error_first, <name>_error_last, <name>_flat_z (max over\n"
    "p of |e_p - e_first| / combined standard error) and <name>_max_z_exact. Each takes under a\n"
    "minute.";

void nc_csv_header(FILE *f)
{
    hdp_csv_header_line(f, &hdp_nc_csv_fields);
}

void nc_csv_row(FILE *f, const char *name, const hdp_nc_point *pt)
{
    hdp_csv_line(f, &hdp_nc_csv_fields, pt, name);
}

void nc_meta(FILE *f, const char *what, const hdp_model *m)
{
    fprintf(f, "# ; hdpsgd %s nc: %s (the NC paper; docs/theory.md §6, §8)\n", hdp_version_string(), what);
    fprintf(f, "# ; rho is zCDP per step (the NC paper's rho = rho_z); rho_total = steps rho; epsilon by "
               "Canonne-Kamath-Steinke at delta\n");
    fprintf(f, "# ; error = mean over draws of the exact test error of the trained model; exact = "
               "the one-step closed form (an empty field where it does not apply); z_exact = "
               "|error - exact| / stderr\n");
    hdp_model_write_meta_sections(m, f, cli_model_sections("nc"));
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

static void print_point(const hdp_nc_point *pt, int exact_alone)
{
    const hdp_nc_spec *s = &pt->spec;
    const hdp_nc_result *r = &pt->res;
    long nk[1000];
    hdp_nc_class_sizes(s->K, s->n, s->imbalance, nk);
    printf("NoisyGD on neural-collapse features (the NC paper; docs/theory.md §8)\n");
    printf("  features   K = %ld classes, %ld-simplex ETF in R^p, p = %ld; n = %ld samples (%s: "
           "class 1 has %ld, class %ld has %ld)\n",
           s->K, s->frame_classes > 0 ? s->frame_classes : s->K, s->p, s->n, s->imbalance > 0 ? "imbalanced" : "balanced", nk[0], s->K,
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
    if (s->remedy == HDP_NC_REMEDY_PROJECTION)
        printf(" on e_1 .. e_{K-1} + Delta, ||Delta||_inf = beta_0 = %g", s->projection_beta);
    printf("\n  privacy    rho = %g zCDP per step (the NC paper's rho; rho_z in privacy.h terms) x %ld "
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
    if (isnan(pt->exact) && hdp_nc_exact_applies(s))
        printf("  exact      no closed form here (Theorem 5's needs G >= the largest possible "
               "per-sample gradient norm ||r|| (a + beta (a + (p-1) beta_0)), and at most 1e8 "
               "terms)\n");
    else if (isnan(pt->exact))
        printf("  exact      no closed form here (it needs one full-batch step from W = 0 and a "
               "deterministic training and test set)\n");
    else if (exact_alone)
        printf("  exact      one-step error %.10g\n", pt->exact);
    else
        printf("  exact      one-step error %.10g; Monte Carlo - exact = %+.3g (%.2f standard "
               "errors)\n",
               pt->exact, r->error_mean - pt->exact, hdp_nc_point_z(pt));
}

static void write_json(FILE *f, const hdp_model *m, const hdp_nc_point *pt, int exact_alone)
{
    const cli_json_source src[] = { /* the tables of its JSON (main.c) and what they read */
        {&hdp_nc_spec_fields, pt, NULL}, {&hdp_nc_fields, pt, NULL},
        {&hdp_nc_draws_fields, exact_alone ? NULL : pt, NULL}, {&hdp_nc_problem_fields, pt, NULL},
        {&hdp_nc_seed_fields, pt, NULL}};
    cli_json_file(f, "nc", src, (int)(sizeof src / sizeof *src), m);
}

/* Write the CSV (rows of pts) and the JSON, all or nothing. */
static hdp_status write_outputs(const char *what, const hdp_model *m, const char *const *names,
                                const hdp_nc_point *pts, long count, const char *json_text,
                                hdp_error *err)
{
    hdp_outset out;
    hdp_outset_init(&out, err);
    FILE *f = hdp_outset_add(&out, args.csv);
    if (f) {
        nc_meta(f, what, m);
        nc_csv_header(f);
        for (long i = 0; i < count; i++)
            nc_csv_row(f, names[pts[i].curve], &pts[i]);
    }
    if ((f = hdp_outset_add(&out, args.json)))
        fputs(json_text, f);
    return hdp_outset_commit(&out);
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
    hdp_nc_point pt;
    memset(&pt, 0, sizeof pt);
    pt.spec = *s;
    if (exact_only && !hdp_nc_exact_applies(s)) {
        exact_not_applicable(m, s, &err);
        return cli_fail("nc", &err);
    }
    hdp_status st = hdp_nc_point_run(&pt, cli_mc_threads(&mc), exact_only, &err);
    if (st == HDP_OK && exact_only && isnan(pt.exact)) { /* Theorem 5's case, clipping possible */
        hdp_model_fail_key(m, "nc", "G", &err,
                           "G = %g: Theorem 5's exact error needs G at least the largest possible "
                           "per-sample gradient norm ||r|| (a + beta (a + (p-1) beta_0)) (no "
                           "clipping) and at most 1e8 terms in its sum: raise nc.G or lower "
                           "nc.beta, nc.projection_beta or nc.p", s->G);
        return cli_fail("nc", &err);
    }
    if (st != HDP_OK)
        return cli_fail("nc", &err);
    char *json_text = NULL;
    size_t json_len = 0;
    FILE *jf = open_memstream(&json_text, &json_len);
    if (!jf) {
        hdp_fail(&err, HDP_ENOMEM, "out of memory");
        return cli_fail("nc", &err);
    }
    write_json(jf, m, &pt, exact_only);
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

int cmd_nc(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("nc");
    cli_common common;
    memset(&args, 0, sizeof args);
    exact_only = 0;
    draws_opt = CLI_NOT_GIVEN;
    cli_mc_args_reset(&mc);
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    if (args.sweep && exact_only)
        return cli_bad("nc", "--exact and --sweep exclude each other");
    if (!args.sweep && (args.ps || args.figure))
        return cli_bad("nc", "--%s needs --sweep", args.ps ? "ps" : "figure");
    if (draws_opt != CLI_NOT_GIVEN &&
        (rc = cli_add_with_long("nc", &common, "--draws", "nc.draws", draws_opt)))
        return rc;
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
    rc = args.sweep ? nc_sweep(&m, &s, &args, cli_mc_threads(&mc)) : single(&m, &s);
    hdp_model_free(&m);
    return rc;
}
