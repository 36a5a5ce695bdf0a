/*
 * cmd_rf_experiment.c — `hdpsgd rf-experiment P1|P2|P3|P4`: the random-features
 * experiments of seed 003's Fig. 2 (THEORY.md section 7), each a CSV and a gnuplot
 * figure (plots/rf-p1.gp ... rf-p4.gp).
 *
 *   P1  test loss against p: DP-GD (best of a small (C, CT) grid at every p) and the
 *       min-norm interpolator (non-private GD's limit), double descent with its peak at p = n.
 *   P2  test loss against T at C = dpgd.C for several p, with a fixed eta; with the OU
 *       closed form and gradient flow at tau = eta T for reference.
 *   P3  the same runs against eta T p / d (= CT): the curves collapse.
 *   P4  test loss over (C, CT) at p = rf.p: a heat map.
 * DP-GD runs in the coordinates of the modes (hdp_rf_dpgd_final: the same algorithm at
 * O(n min(n, p)) per step). The model supplies d, n, test size, activation, target,
 * epsilon, delta and eta; the grids are below (reduced by default, --full for denser ones).
 * Every configuration has its own random stream (the data stream jumped 1 + index times),
 * so the CSV is the same for any --threads.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/output.h"
#include "io/plot.h"
#include "cli.h"
#include "hdpsgd/rf.h"
#include "rf_cli.h"

static const char *out_dir;
static int full_opt;
static cli_mc_args mc;

const cli_opt rf_experiment_opts[] = {
    {"full", 0, OPT_FLAG, &full_opt, NULL, "the denser grids of seed 003 (much longer; see above)"},
    {"output", 'o', OPT_STRING, &out_dir, "DIR",
     "write DIR/rf-pK.csv and DIR/rf-pK.png (default .)"},
    {"runs", 0, OPT_LONG, &mc.runs, "N",
     "DP-GD runs per configuration, averaged (default 1, as in seed 003)"},
    {"threads", 0, OPT_LONG, &mc.threads, "T",
     "OpenMP threads (default 0 = one per core); results do not depend on it"},
    {"seed", 0, OPT_STRING, &mc.seed, "S", "seed (overrides sim.seed)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* ---- helpers ---- */

static void logspace(double lo, double hi, int count, double *out)
{
    for (int i = 0; i < count; i++)
        out[i] = pow(10.0, count > 1 ? lo + (hi - lo) * i / (count - 1) : lo);
}

/* T = round(CT d / (eta p)), at least 1 */
static long steps_of(double CT, long d, double eta, long p)
{
    double T = nearbyint(CT * (double)d / (eta * (double)p));
    return T < 1 ? 1 : (long)T;
}

typedef struct {
    const hdp_model *m;
    int threads;
    long runs;            /* per configuration */
    unsigned long long next_stream;
    int zcdp_noted;
} xp_ctx;

/* Calibrate sigma for (eta, T, C_clip) at the model's epsilon, delta (THEORY 6). */
static hdp_status calibrate(xp_ctx *x, long n, double eta, long T, double C_clip, hdp_rf_dpgd *q,
                            hdp_error *err)
{
    memset(q, 0, sizeof *q);
    q->eta = eta;
    q->T = T;
    q->C_clip = C_clip;
    q->delta = x->m->dpgd_delta > 0 ? x->m->dpgd_delta : 1.0 / (double)n;
    q->epsilon = x->m->dpgd_epsilon;
    q->sigma = x->m->dpgd_sigma;
    hdp_status st = hdp_rf_dpgd_calibrate(q, n, err);
    if (st == HDP_OK && q->route == HDP_RF_SIGMA_ZCDP && !x->zcdp_noted) {
        cli_rf_sigma_note("rf-experiment", q);
        x->zcdp_noted = 1;
    }
    return st;
}

/* runs copies of one configuration with consecutive streams */
static void add_config(xp_ctx *x, hdp_rf_config *cfg, long *k, const hdp_rf_dpgd *q)
{
    for (long r = 0; r < x->runs; r++) {
        hdp_rf_config c = {q->eta, q->T, q->C_clip, q->s, x->next_stream++, 0, 0, 0, 0, 0};
        cfg[(*k)++] = c;
    }
}

/* mean and standard error of the test loss over the runs of configuration j */
static void config_stats(const xp_ctx *x, const hdp_rf_config *cfg, long j, double *test,
                         double *se, double *train, double *clipped)
{
    const hdp_rf_config *c = cfg + j * x->runs;
    double s = 0, ss = 0, tr = 0, cl = 0;
    for (long r = 0; r < x->runs; r++) {
        s += c[r].test_loss;
        tr += c[r].train_loss;
        cl += c[r].clipped_mean;
    }
    double mu = s / (double)x->runs;
    for (long r = 0; r < x->runs; r++)
        ss += (c[r].test_loss - mu) * (c[r].test_loss - mu);
    *test = mu;
    *se = x->runs > 1 ? sqrt(ss / (double)(x->runs - 1) / (double)x->runs) : 0.0;
    *train = tr / (double)x->runs;
    *clipped = cl / (double)x->runs;
}

static hdp_status build(xp_ctx *x, long p, int flags, hdp_rf_problem *pb, hdp_error *err)
{
    hdp_rf_spec spec;
    hdp_rf_spec_from_model(x->m, &spec);
    spec.p = p;
    return hdp_rf_problem_build(&spec, flags, x->threads, pb, err);
}

static hdp_status run_configs(xp_ctx *x, const hdp_rf_problem *pb, hdp_rf_config *cfg, long k,
                              const char *what, hdp_error *err)
{
    cli_rf_bar bar = {what, -1};
    hdp_rf_progress_fn fn = isatty(fileno(stderr)) ? cli_rf_progress : NULL;
    return hdp_rf_dpgd_final(pb, cfg, k, x->threads, fn, &bar, err);
}

static void meta(FILE *f, const char *name, const char *what, const hdp_model *m, const xp_ctx *x)
{
    fprintf(f, "# hdpsgd %s rf-experiment %s: %s (seed 003 Fig. 2; THEORY.md 6, 7)\n",
            hdp_version_string(), name, what);
    hdp_model_write_meta(m, f);
    fprintf(f, "# runs per configuration = %ld\n# grid = %s\n", x->runs,
            full_opt ? "full" : "reduced");
}

/* ---- P1: test loss against p ---- */

static hdp_status p1(xp_ctx *x, FILE *f, char *title, size_t tsize, hdp_error *err)
{
    const hdp_model *m = x->m;
    const long n = m->rf_n, d = m->rf_d;
    double ps_full[40], Cs[3], CTs[3];
    int np = 0, nC, nCT;
    if (full_opt) {
        double v[24];
        logspace(1.5, log10(40000.0), 24, v);
        for (int i = 0; i < 24; i++) ps_full[np++] = nearbyint(v[i]);
        ps_full[np++] = (double)n;
        /* sort, unique */
        for (int i = 1; i < np; i++)
            for (int j = i; j > 0 && ps_full[j - 1] > ps_full[j]; j--) {
                double t = ps_full[j]; ps_full[j] = ps_full[j - 1]; ps_full[j - 1] = t;
            }
        int u = 0;
        for (int i = 0; i < np; i++)
            if (u == 0 || ps_full[i] != ps_full[u - 1]) ps_full[u++] = ps_full[i];
        np = u;
        nC = 3; Cs[0] = 0.2; Cs[1] = 0.5; Cs[2] = 1.0;
        nCT = 3; CTs[0] = 2; CTs[1] = 5; CTs[2] = 10;
    } else {
        const double red[] = {31, 100, 316, 1000, 1500, 2000, 3000, 10000, 20000};
        for (int i = 0; i < 9; i++) ps_full[np++] = red[i];
        nC = 2; Cs[0] = 0.5; Cs[1] = 1.0;
        nCT = 2; CTs[0] = 2; CTs[1] = 5;
    }
    meta(f, "P1", "test loss against the number of features p", m, x);
    fprintf(f, "# DP-GD: the best (lowest test loss) of C in {");
    for (int i = 0; i < nC; i++) fprintf(f, "%s%g", i ? ", " : "", Cs[i]);
    fprintf(f, "} x CT in {");
    for (int i = 0; i < nCT; i++) fprintf(f, "%s%g", i ? ", " : "", CTs[i]);
    fprintf(f, "}; C_clip = C sqrt(p), T = CT d/(eta p), eta = %s\n",
            m->dpgd_eta > 0 ? "dpgd.eta" : "1/p");
    fprintf(f, "p,minnorm_test,minnorm_train,zero_test,dpgd_test,dpgd_test_se,dpgd_train,dpgd_C,"
               "dpgd_CT,dpgd_T,dpgd_sigma,dpgd_clipped,modes,eta_lambda_max");
    for (int a = 0; a < nC; a++)
        for (int b = 0; b < nCT; b++)
            fprintf(f, ",test_C%g_CT%g", Cs[a], CTs[b]);
    fprintf(f, "\n");
    long ncfg = (long)nC * nCT;
    hdp_rf_config *cfg = malloc(sizeof *cfg * (size_t)(ncfg * x->runs));
    hdp_rf_dpgd *qs = malloc(sizeof *qs * (size_t)ncfg);
    if (!cfg || !qs) {
        free(cfg);
        free(qs);
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    }
    hdp_status st = HDP_OK;
    for (int i = 0; i < np && st == HDP_OK; i++) {
        long p = (long)ps_full[i];
        double eta = m->dpgd_eta > 0 ? m->dpgd_eta : 1.0 / (double)p;
        double t0 = omp_get_wtime();
        hdp_rf_problem pb;
        st = build(x, p, 0, &pb, err);
        double tb = omp_get_wtime() - t0;
        long k = 0;
        for (int a = 0; a < nC && st == HDP_OK; a++)
            for (int b = 0; b < nCT && st == HDP_OK; b++) {
                hdp_rf_dpgd *q = &qs[a * nCT + b];
                st = calibrate(x, n, eta, steps_of(CTs[b], d, eta, p), Cs[a] * sqrt((double)p), q,
                               err);
                if (st == HDP_OK)
                    add_config(x, cfg, &k, q);
            }
        if (st == HDP_OK)
            st = run_configs(x, &pb, cfg, k, "rf-experiment P1", err);
        if (st == HDP_OK) {
            long best = 0;
            double te[9] = {0}, se[9] = {0}, tr[9] = {0}, cl[9] = {0};
            for (long j = 0; j < ncfg; j++) {
                config_stats(x, cfg, j, &te[j], &se[j], &tr[j], &cl[j]);
                if (te[j] < te[best]) best = j;
            }
            fprintf(f, "%ld,%.10g,%.6g,%.10g,%.10g,%.4g,%.10g,%g,%g,%ld,%.8g,%.6g,%ld,%.6g", p,
                    pb.minnorm_test, pb.minnorm_train, pb.zero_test, te[best], se[best], tr[best],
                    Cs[best / nCT], CTs[best % nCT], qs[best].T, qs[best].sigma, cl[best], pb.r,
                    eta * pb.lambda[0]);
            for (long j = 0; j < ncfg; j++)
                fprintf(f, ",%.10g", te[j]);
            fprintf(f, "\n");
            fprintf(stderr, "hdpsgd rf-experiment P1: p = %ld (%d/%d): min-norm %.4g, DP-GD %.4g "
                            "(C = %g, CT = %g); build %.1f s, DP-GD %.1f s\n",
                    p, i + 1, np, pb.minnorm_test, te[best], Cs[best / nCT], CTs[best % nCT], tb,
                    omp_get_wtime() - t0 - tb);
        }
        hdp_rf_problem_free(&pb);
    }
    snprintf(title, tsize, "P1 (seed 003 Fig. 2): test loss vs p — d = %ld, n = %ld, %s "
             "target, ε = %g, δ = %s", d, n, hdp_rf_target_name(m->rf_target), m->dpgd_epsilon,
             m->dpgd_delta > 0 ? "dpgd.delta" : "1/n");
    free(cfg);
    free(qs);
    return st;
}

/* ---- P2, P3: test loss against T and against eta T p / d ---- */

static hdp_status p23(xp_ctx *x, FILE *f, const char *name, char *title, size_t tsize,
                      char *plist, size_t psize, hdp_error *err)
{
    const hdp_model *m = x->m;
    const long n = m->rf_n, d = m->rf_d;
    const long ps_red[] = {4000, 8000, 16000}, ps_fullv[] = {4000, 8000, 16000, 32000};
    const long *ps = full_opt ? ps_fullv : ps_red;
    int np = full_opt ? 4 : 3, nCT = full_opt ? 21 : 9;
    double CTs[21];
    logspace(-0.5, 1.5, nCT, CTs);
    double eta = m->dpgd_eta > 0 ? m->dpgd_eta : 1.0 / (double)ps[np - 1];
    double C = m->dpgd_C;
    meta(f, name, "test loss against T and against eta T p / d", m, x);
    fprintf(f, "# C_clip = C sqrt(p) with C = %g; eta = %.17g for every p; "
               "T = round(CT d/(eta p))\n", C, eta);
    fprintf(f, "# ou_test: expected test loss of the unclipped OU process at tau = eta T (closed "
               "form); gf_test: gradient flow at tau\n");
    fprintf(f, "p,CT,T,tau,etaTp_over_d,C_clip,sigma,dpgd_test,dpgd_test_se,dpgd_train,clipped,"
               "ou_test,gf_test,minnorm_test\n");
    plist[0] = '\0';
    hdp_rf_config *cfg = malloc(sizeof *cfg * (size_t)(nCT * x->runs));
    hdp_rf_dpgd *qs = malloc(sizeof *qs * (size_t)nCT);
    if (!cfg || !qs) {
        free(cfg);
        free(qs);
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    }
    hdp_status st = HDP_OK;
    for (int i = 0; i < np && st == HDP_OK; i++) {
        long p = ps[i];
        size_t len = strlen(plist);
        snprintf(plist + len, psize - len, "%s%ld", len ? " " : "", p);
        double t0 = omp_get_wtime();
        hdp_rf_problem pb;
        st = build(x, p, HDP_RF_TEST_MODES, &pb, err);
        double tb = omp_get_wtime() - t0;
        if (st == HDP_OK && eta * pb.lambda[0] >= 2)
            fprintf(stderr, "hdpsgd rf-experiment %s: warning: p = %ld: eta lambda_max = %g >= 2 "
                            "(unstable)\n", name, p, eta * pb.lambda[0]);
        long k = 0;
        for (int b = 0; b < nCT && st == HDP_OK; b++) {
            st = calibrate(x, n, eta, steps_of(CTs[b], d, eta, p), C * sqrt((double)p), &qs[b],
                           err);
            if (st == HDP_OK)
                add_config(x, cfg, &k, &qs[b]);
        }
        if (st == HDP_OK)
            st = run_configs(x, &pb, cfg, k, name, err);
        for (int b = 0; b < nCT && st == HDP_OK; b++) {
            double te, se, tr, cl, ou, gf;
            config_stats(x, cfg, b, &te, &se, &tr, &cl);
            hdp_rf_expected_loss(&pb, eta, qs[b].s, qs[b].tau, 0, &ou, NULL);
            hdp_rf_expected_loss(&pb, eta, 0.0, qs[b].tau, 0, &gf, NULL);
            fprintf(f, "%ld,%.8g,%ld,%.10g,%.10g,%.10g,%.8g,%.10g,%.4g,%.10g,%.6g,%.10g,%.10g,"
                       "%.10g\n",
                    p, CTs[b], qs[b].T, qs[b].tau, qs[b].tau * (double)p / (double)d, qs[b].C_clip,
                    qs[b].sigma, te, se, tr, cl, ou, gf, pb.minnorm_test);
        }
        if (st == HDP_OK)
            fprintf(stderr, "hdpsgd rf-experiment %s: p = %ld (%d/%d): T from %ld to %ld, eta "
                            "lambda_max = %.3g; build %.1f s, DP-GD %.1f s\n",
                    name, p, i + 1, np, qs[0].T, qs[nCT - 1].T, eta * pb.lambda[0], tb,
                    omp_get_wtime() - t0 - tb);
        hdp_rf_problem_free(&pb);
    }
    snprintf(title, tsize, "%s (seed 003 Fig. 2): C_clip = %g √p, η = %g, d = %ld, n = %ld, "
             "ε = %g, δ = %s", name, C, eta, d, n, m->dpgd_epsilon,
             m->dpgd_delta > 0 ? "dpgd.delta" : "1/n");
    free(cfg);
    free(qs);
    return st;
}

/* ---- P4: heat map over (C, CT) ---- */

static hdp_status p4(xp_ctx *x, FILE *f, char *title, size_t tsize, hdp_error *err)
{
    const hdp_model *m = x->m;
    const long n = m->rf_n, d = m->rf_d, p = m->rf_p;
    int nC = full_opt ? 20 : 8, nCT = full_opt ? 20 : 8;
    double Cs[20], CTs[20];
    logspace(-2, 1.5, nC, Cs);
    logspace(-1.5, full_opt ? 2.5 : 2.0, nCT, CTs);
    double eta = m->dpgd_eta > 0 ? m->dpgd_eta : 1.0 / (double)p;
    meta(f, "P4", "test loss over (C, CT) at one p", m, x);
    fprintf(f, "# p = %ld, eta = %.17g; C_clip = C sqrt(p), T = round(CT d/(eta p))\n", p, eta);
    fprintf(f, "C,CT,T,tau,C_clip,sigma,dpgd_test,dpgd_test_se,dpgd_train,clipped\n");
    long ncfg = (long)nC * nCT;
    hdp_rf_config *cfg = malloc(sizeof *cfg * (size_t)(ncfg * x->runs));
    hdp_rf_dpgd *qs = malloc(sizeof *qs * (size_t)ncfg);
    if (!cfg || !qs) {
        free(cfg);
        free(qs);
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    }
    double t0 = omp_get_wtime();
    hdp_rf_problem pb;
    hdp_status st = build(x, p, 0, &pb, err);
    double tb = omp_get_wtime() - t0;
    long k = 0;
    for (int a = 0; a < nC && st == HDP_OK; a++)
        for (int b = 0; b < nCT && st == HDP_OK; b++) {
            hdp_rf_dpgd *q = &qs[a * nCT + b];
            st = calibrate(x, n, eta, steps_of(CTs[b], d, eta, p), Cs[a] * sqrt((double)p), q, err);
            if (st == HDP_OK)
                add_config(x, cfg, &k, q);
        }
    if (st == HDP_OK)
        st = run_configs(x, &pb, cfg, k, "rf-experiment P4", err);
    for (long j = 0; j < ncfg && st == HDP_OK; j++) {
        double te, se, tr, cl;
        config_stats(x, cfg, j, &te, &se, &tr, &cl);
        fprintf(f, "%.8g,%.8g,%ld,%.10g,%.10g,%.8g,%.10g,%.4g,%.10g,%.6g\n", Cs[j / nCT],
                CTs[j % nCT], qs[j].T, qs[j].tau, qs[j].C_clip, qs[j].sigma, te, se, tr, cl);
    }
    if (st == HDP_OK)
        fprintf(stderr, "hdpsgd rf-experiment P4: p = %ld, %ld configurations, eta lambda_max = "
                        "%.3g; build %.1f s, DP-GD %.1f s\n",
                p, ncfg, eta * pb.lambda[0], tb, omp_get_wtime() - t0 - tb);
    snprintf(title, tsize, "P4 (seed 003 Fig. 2): test loss over (C_clip, T) — p = %ld, η = %g, "
             "d = %ld, n = %ld, ε = %g, δ = %s", p, eta, d, n, m->dpgd_epsilon,
             m->dpgd_delta > 0 ? "dpgd.delta" : "1/n");
    hdp_rf_problem_free(&pb);
    free(cfg);
    free(qs);
    return st;
}

int cmd_rf_experiment(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("rf-experiment");
    cli_common common;
    out_dir = NULL;
    full_opt = 0;
    cli_mc_args_reset(&mc);
    int rc = cli_parse(cmd, argc, argv, &common);
    if (rc)
        return rc;
    if (common.help) {
        cli_print_help(cmd, stdout);
        return 0;
    }
    const char *names[] = {"P1", "P2", "P3", "P4"};
    int which = -1;
    for (int i = 0; common.npos > 0 && i < 4; i++)
        if (!strcasecmp(common.pos[0], names[i]))
            which = i;
    if (which < 0 || common.npos > 2) {
        fprintf(stderr, "hdpsgd rf-experiment: error: %s\nUsage: hdpsgd %s\n",
                common.npos == 0 ? "name the experiment: P1, P2, P3 or P4"
                : which < 0      ? "the first argument must be P1, P2, P3 or P4"
                                 : "at most one model file after the experiment's name",
                cmd->usage);
        return EXIT_BAD_INPUT;
    }
    common.model_path = common.npos > 1 ? common.pos[1] : NULL;
    long runs = mc.runs == CLI_NOT_GIVEN ? 1 : mc.runs;
    mc.runs = CLI_NOT_GIVEN;
    if (runs < 1) {
        fprintf(stderr, "hdpsgd rf-experiment: error: --runs %ld: the number of runs must be an "
                        "integer >= 1\n", runs);
        return EXIT_BAD_INPUT;
    }
    if ((rc = cli_mc_args_apply("rf-experiment", &mc, &common)))
        return rc;
    const char *dir = out_dir ? out_dir : ".";
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "hdpsgd rf-experiment: error: -o %s: not a directory\n", dir);
        return EXIT_BAD_INPUT;
    }
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    /* the model's own [dpgd] keys must be consistent too (the grids override T, C) */
    hdp_error err;
    hdp_error_clear(&err);
    hdp_rf_dpgd q0;
    hdp_status st = hdp_rf_dpgd_from_model(&m, m.rf_p, m.rf_n, m.rf_d, &q0, &err);
    if (st != HDP_OK) {
        hdp_model_free(&m);
        return cli_fail("rf-experiment", &err);
    }

    xp_ctx x = {&m, cli_mc_threads(&mc), runs, 1, 0};
    char lower[3] = {'p', names[which][1], '\0'};
    char csv_path[HDP_OUT_PATH_MAX + 64], fig_path[HDP_OUT_PATH_MAX + 64], title[512] = "", plist[256] = "";
    snprintf(csv_path, sizeof csv_path, "%s/rf-%s.csv", dir, lower);
    snprintf(fig_path, sizeof fig_path, "%s/rf-%s.png", dir, lower);
    double t0 = omp_get_wtime();
    hdp_outfile csv = {0};
    st = hdp_out_open(&csv, csv_path, &err);
    if (st == HDP_OK) {
        switch (which) {
        case 0: st = p1(&x, csv.f, title, sizeof title, &err); break;
        case 1:
        case 2:
            st = p23(&x, csv.f, names[which], title, sizeof title, plist, sizeof plist, &err);
            break;
        default: st = p4(&x, csv.f, title, sizeof title, &err); break;
        }
        if (st == HDP_OK)
            st = hdp_out_commit(&csv, &err);
    }
    hdp_out_abort(&csv);
    if (st != HDP_OK) {
        hdp_model_free(&m);
        return cli_fail("rf-experiment", &err);
    }
    char script[16], assign[4096] = "";
    snprintf(script, sizeof script, "rf-%s", lower);
    hdp_plot_assign(assign, sizeof assign, "data_file", csv_path);
    hdp_plot_assign(assign, sizeof assign, "title_text", title);
    hdp_plot_assign(assign, sizeof assign, "p_list", plist);
    size_t len = strlen(assign);
    snprintf(assign + len, sizeof assign - len, "n_train=%ld\nd_input=%ld\np_fixed=%ld\n", m.rf_n,
             m.rf_d, m.rf_p);
    st = hdp_plot_draw(script, fig_path, assign, &err);
    hdp_model_free(&m);
    if (st != HDP_OK)
        return cli_fail("rf-experiment", &err);
    fprintf(stderr, "hdpsgd rf-experiment %s: %.1f s -> %s, %s\n", names[which],
            omp_get_wtime() - t0, csv_path, fig_path);
    return 0;
}
