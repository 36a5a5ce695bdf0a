/*
 * cmd_rates.c — `hdpsgd rates`: the final excess risk of each optimised schedule family
 * against gamma = d/n on a log grid (d fixed, n = round(d/gamma)), its log-log slope on
 * the smallest-gamma decade, and the theorem's rates of THEORY.md section 5 next to it.
 * Optimisation, rates and the slope fit are in the library (hdpsgd/design.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../output.h"
#include "../plot.h"
#include "cli.h"
#include "hdpsgd/design.h"

static const char *gammas_opt, *families_opt, *figure_path, *json_path, *out_path;
static int tune_clip;

#define MAX_GAMMAS 200

const cli_opt rates_opts[] = {
    {"gammas", 0, OPT_STRING, &gammas_opt, "LO:HI:COUNT",
     "gamma grid: COUNT >= 2 log-spaced values from LO to HI, 0 < LO < HI < 1 (required)"},
    {"families", 0, OPT_STRING, &families_opt, "LIST",
     "comma-separated families (default output,linear-noise,optimal; also pl)"},
    {"tune-clip", 0, OPT_FLAG, &tune_clip, NULL, "also optimise the clipping constant c"},
    {"output", 'o', OPT_OUTPUT, &out_path, "FILE.csv",
     "write gamma,n,family,final_risk,eta0,eta1,c1,a,c,ode_solves here"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"},
    {"figure", 'f', OPT_OUTPUT, &figure_path, "FIG",
     "draw risk against gamma (log-log) with the theorem's rates; data in FIG-base.rates.csv"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static int fail_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "hdpsgd rates: error: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\n");
    return EXIT_BAD_INPUT;
}

static int parse_gammas(const char *text, double *lo, double *hi, long *count)
{
    if (!text)
        return fail_usage("--gammas LO:HI:COUNT is required (for example --gammas 0.001:0.1:7)%s", "");
    char *end;
    errno = 0;
    *lo = strtod(text, &end);
    if (end == text || *end != ':')
        return fail_usage("--gammas '%s': expected LO:HI:COUNT, for example 0.001:0.1:7", text);
    const char *p = end + 1;
    *hi = strtod(p, &end);
    if (end == p || *end != ':')
        return fail_usage("--gammas '%s': expected LO:HI:COUNT, for example 0.001:0.1:7", text);
    p = end + 1;
    *count = strtol(p, &end, 10);
    if (end == p || *end || errno)
        return fail_usage("--gammas '%s': COUNT must be an integer", text);
    if (!(isfinite(*lo) && isfinite(*hi) && *lo > 0))
        return fail_usage("--gammas '%s': LO must be a number > 0", text);
    if (!(*lo < *hi))
        return fail_usage("--gammas '%s': LO must be smaller than HI", text);
    if (!(*hi < 1))
        return fail_usage("--gammas '%s': HI must be < 1 (the rates of THEORY 5 are for gamma -> 0)",
                          text);
    if (*count < 2 || *count > MAX_GAMMAS)
        return fail_usage("--gammas '%s': COUNT must be between 2 and 200", text);
    return 0;
}

/* --families: default output, linear-noise, optimal (THEORY 5's three rates). */
static int parse_families(const char *text, int want[HDP_FAMILY_COUNT])
{
    if (!text) {
        memset(want, 0, sizeof(int) * HDP_FAMILY_COUNT);
        want[HDP_FAMILY_OUTPUT] = want[HDP_FAMILY_LINEAR_NOISE] = want[HDP_FAMILY_OPTIMAL] = 1;
        return 0;
    }
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_design_families_parse(text, want, &err) != HDP_OK)
        return fail_usage("--families: %s", err.msg);
    return 0;
}


static const char *rate_text(int f)
{
    switch (f) {
    case HDP_FAMILY_OUTPUT: return "gamma log(1/gamma) + gamma^2 log^2(1/gamma)/rho^2";
    case HDP_FAMILY_LINEAR_NOISE: return "gamma log^(2/3)(1/gamma) + gamma^2 log^(4/3)(1/gamma)/rho^2";
    default: return "gamma + gamma^2/rho^2 (minimax)";
    }
}

static void progress(const hdp_design_progress *p, void *user)
{
    (void)user;
    fprintf(stderr, "\rhdpsgd rates:   %-12s %5ld ODE solves, best final risk %.8g   ",
            hdp_design_family_name(p->family), p->ode_solves, p->best_risk);
}

int cmd_rates(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("rates");
    cli_common common;
    gammas_opt = families_opt = figure_path = json_path = out_path = NULL;
    tune_clip = 0;
    int rc = cli_parse(cmd, argc, argv, &common);
    if (rc)
        return rc;
    if (common.help) {
        cli_print_help(cmd, stdout);
        return 0;
    }
    double lo, hi;
    long count;
    int want[HDP_FAMILY_COUNT];
    if ((rc = parse_gammas(gammas_opt, &lo, &hi, &count)) || (rc = parse_families(families_opt, want)))
        return rc;
    if (common.nsets + 1 > MAX_SETS)
        return fail_usage("too many --set options%s", "");

    /* every model first: bad input stops before any computation */
    hdp_model *models = calloc((size_t)count, sizeof *models);
    hdp_design_result(*res)[HDP_FAMILY_COUNT] = calloc((size_t)count, sizeof *res);
    char(*gset)[64] = calloc((size_t)count, sizeof *gset);
    if (!models || !res || !gset) {
        free(models);
        free(res);
        free(gset);
        fprintf(stderr, "hdpsgd rates: error: out of memory\n");
        return EXIT_NUMERIC;
    }
    long loaded = 0;
    for (long i = 0; i < count && !rc; i++) {
        cli_common c = common;
        double g = lo * pow(hi / lo, (double)i / (double)(count - 1));
        snprintf(gset[i], sizeof gset[i], "data.gamma=%.17g", g);
        c.sets[c.nsets++] = gset[i];
        if (!(rc = cli_load_model(&c, &models[i])))
            loaded++;
    }
    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st = HDP_OK;
    long solves = 0;
    double seconds = 0;
    hdp_design_options opt;
    hdp_design_options_init(&opt);
    opt.tune_clip = tune_clip;
    int tty = isatty(STDERR_FILENO);
    opt.progress = tty ? progress : NULL;
    for (long i = 0; i < count && !rc && st == HDP_OK; i++) {
        const hdp_model *m = &models[i];
        int nh = 0;
        hdp_design_result hints[HDP_FAMILY_COUNT];
        for (int f = 0; f < HDP_FAMILY_COUNT && st == HDP_OK; f++) {
            if (!want[f])
                continue;
            st = hdp_design_optimize(m, f, &opt, hints, nh, &res[i][f], &err);
            if (st != HDP_OK)
                break;
            hints[nh++] = res[i][f];
            solves += res[i][f].ode_solves;
            seconds += res[i][f].seconds;
            fprintf(stderr, "%shdpsgd rates: gamma = %-10.4g n = %-9ld %-12s final risk %.8g (%ld ODE solves)\n",
                    tty ? "\r" : "", m->gamma, m->n, hdp_design_family_name(f), res[i][f].final_risk,
                    res[i][f].ode_solves);
        }
    }
    if (st != HDP_OK)
        rc = cli_fail("rates", &err);

    /* slopes on the smallest-gamma decade */
    double slope[HDP_FAMILY_COUNT], theory_slope[HDP_FAMILY_COUNT];
    long dec = 0;
    double *gx = NULL, *ry = NULL, *ty = NULL;
    if (!rc) {
        gx = malloc(sizeof(double) * (size_t)count);
        ry = malloc(sizeof(double) * (size_t)count);
        ty = malloc(sizeof(double) * (size_t)count);
        if (!gx || !ry || !ty) {
            fprintf(stderr, "hdpsgd rates: error: out of memory\n");
            rc = EXIT_NUMERIC;
        }
    }
    if (!rc) {
        double g0 = models[0].gamma;
        for (long i = 0; i < count; i++)
            if (models[i].gamma <= 10.0 * g0 * (1 + 1e-9)) dec = i + 1;
        if (dec < 2) dec = 2;
        double rho = models[0].rho;
        for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
            slope[f] = theory_slope[f] = NAN;
            if (!want[f]) continue;
            for (long i = 0; i < dec; i++) {
                gx[i] = models[i].gamma;
                ry[i] = res[i][f].final_risk;
                ty[i] = hdp_design_rate_theory(f, models[i].gamma, rho);
            }
            slope[f] = hdp_loglog_slope(gx, ry, dec);
            theory_slope[f] = hdp_loglog_slope(gx, ty, dec);
        }
        const hdp_model *m = &models[0];
        printf("model: %s; d = %ld fixed, n = round(d/gamma); c = %g, rho = %g; %ld gammas from %.4g to "
               "%.4g\n",
               m->source, m->d, m->c, m->rho, count, models[0].gamma, models[count - 1].gamma);
        printf("final-iterate excess risk (ODE, THEORY 3) of each family optimised at each gamma:\n\n");
        printf("  %10s %9s", "gamma", "n");
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            if (want[f]) printf(" %14s", hdp_design_family_name(f));
        printf("\n");
        for (long i = 0; i < count; i++) {
            printf("  %10.4g %9ld", models[i].gamma, models[i].n);
            for (int f = 0; f < HDP_FAMILY_COUNT; f++)
                if (want[f]) printf(" %14.6g", res[i][f].final_risk);
            printf("\n");
        }
        printf("\nlog-log slope of the final risk against gamma on the smallest-gamma decade "
               "[%.4g, %.4g] (%ld points):\n",
               models[0].gamma, models[dec - 1].gamma, dec);
        printf("  %-13s %8s %14s   %s\n", "family", "fitted", "theorem's rate", "rate (THEORY 5, constants 1)");
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            if (want[f])
                printf("  %-13s %8.3f %14.3f   %s\n", hdp_design_family_name(f), slope[f],
                       theory_slope[f], rate_text(f));
        printf("\nfinal risk / gamma at the smallest gamma:");
        const char *sep = " ";
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            if (want[f]) {
                printf("%s%s %.4g", sep, hdp_design_family_name(f), res[0][f].final_risk / models[0].gamma);
                sep = ", ";
            }
        printf("\n  (the theorem: bounded for optimal, growing like log(1/gamma) for output and "
               "log^(2/3)(1/gamma) for linear-noise as gamma -> 0)\n");
        printf("ODE solves: %ld in %.3g s, %.0f per second\n", solves, seconds,
               seconds > 0 ? (double)solves / seconds : 0.0);
    }

    /* outputs */
    char prefix[1024] = "", data_csv[1100] = "";
    if (!rc && figure_path) {
        snprintf(prefix, sizeof prefix, "%s", figure_path);
        char *dot = strrchr(prefix, '.'), *slash = strrchr(prefix, '/');
        if (dot && (!slash || dot > slash)) *dot = '\0';
        snprintf(data_csv, sizeof data_csv, "%s.rates.csv", prefix);
    }
    hdp_outfile files[3] = {{0}};
    int nfiles = 0;
    if (!rc && out_path && (st = hdp_out_open(&files[nfiles], out_path, &err)) == HDP_OK) {
        FILE *f = files[nfiles++].f;
        fprintf(f, "# hdpsgd %s rates: final excess risk (ODE, THEORY.md 3) of each schedule family "
                   "optimised at each gamma (THEORY.md 5); d fixed, n = round(d/gamma)\n",
                hdp_version_string());
        hdp_model_write_meta(&models[0], f);
        fprintf(f, "gamma,n,family,final_risk,eta0,eta1,c1,a,c,ode_solves\n");
        for (long i = 0; i < count; i++)
            for (int k = 0; k < HDP_FAMILY_COUNT; k++) {
                if (!want[k]) continue;
                const hdp_design_result *r = &res[i][k];
                fprintf(f, "%.17g,%ld,%s,%.12g,%.12g,%.12g,", models[i].gamma, models[i].n,
                        hdp_design_family_name(k), r->final_risk, r->eta0, r->eta1);
                if (k == HDP_FAMILY_OPTIMAL) fprintf(f, "%.12g,%.12g,", r->c1, r->a);
                else fprintf(f, ",,");
                fprintf(f, "%.12g,%ld\n", r->c, r->ode_solves);
            }
    }
    if (!rc && st == HDP_OK && figure_path &&
        (st = hdp_out_open(&files[nfiles], data_csv, &err)) == HDP_OK) {
        FILE *f = files[nfiles++].f;
        fprintf(f, "# hdpsgd %s rates --figure: final risk per family and the rate of THEORY.md 5 "
                   "scaled to match at the smallest gamma\n",
                hdp_version_string());
        fprintf(f, "gamma");
        for (int k = 0; k < HDP_FAMILY_COUNT; k++)
            if (want[k]) fprintf(f, ",risk_%s,theory_%s", hdp_design_family_name(k), hdp_design_family_name(k));
        fprintf(f, "\n");
        for (long i = 0; i < count; i++) {
            fprintf(f, "%.12g", models[i].gamma);
            for (int k = 0; k < HDP_FAMILY_COUNT; k++) {
                if (!want[k]) continue;
                double scale = res[0][k].final_risk /
                               hdp_design_rate_theory(k, models[0].gamma, models[0].rho);
                fprintf(f, ",%.12g,%.12g", res[i][k].final_risk,
                        scale * hdp_design_rate_theory(k, models[i].gamma, models[i].rho));
            }
            fprintf(f, "\n");
        }
    }
    if (!rc && st == HDP_OK && json_path && (st = hdp_out_open(&files[nfiles], json_path, &err)) == HDP_OK) {
        hdp_json j;
        hdp_json_begin(&j, files[nfiles++].f);
        hdp_json_int(&j, "count", count);
        for (long i = 0; i < count; i++) {
            char k[96];
            snprintf(k, sizeof k, "gamma_%ld", i);
            hdp_json_num(&j, k, models[i].gamma);
            for (int f = 0; f < HDP_FAMILY_COUNT; f++)
                if (want[f]) {
                    snprintf(k, sizeof k, "%s_final_risk_%ld", hdp_design_family_key((hdp_design_family)f), i);
                    hdp_json_num(&j, k, res[i][f].final_risk);
                }
        }
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            if (want[f]) {
                char k[96];
                snprintf(k, sizeof k, "%s_slope", hdp_design_family_key((hdp_design_family)f));
                hdp_json_num(&j, k, slope[f]);
                snprintf(k, sizeof k, "%s_theory_slope", hdp_design_family_key((hdp_design_family)f));
                hdp_json_num(&j, k, theory_slope[f]);
            }
        hdp_json_num(&j, "decade_lo", models[0].gamma);
        hdp_json_num(&j, "decade_hi", models[dec - 1].gamma);
        hdp_json_int(&j, "decade_points", dec);
        hdp_json_num(&j, "rho", models[0].rho);
        hdp_json_int(&j, "d", models[0].d);
        hdp_json_int(&j, "ode_solves", solves);
        hdp_json_num(&j, "ode_solves_per_second", seconds > 0 ? (double)solves / seconds : NAN);
        hdp_json_str(&j, "model", models[0].source);
        hdp_json_end(&j);
    }
    for (int i = 0; i < nfiles && st == HDP_OK; i++)
        st = hdp_out_commit(&files[i], &err);
    for (int i = 0; i < nfiles; i++)
        hdp_out_abort(&files[i]);
    if (!rc && st != HDP_OK)
        rc = cli_fail("rates", &err);
    if (!rc && figure_path) {
        char assign[4096] = "", title[512], fams[256] = "";
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            if (want[f]) {
                strncat(fams, fams[0] ? " " : "", sizeof fams - strlen(fams) - 1);
                strncat(fams, hdp_design_family_name(f), sizeof fams - strlen(fams) - 1);
            }
        snprintf(title, sizeof title,
                 "final excess risk of the optimised schedules vs γ = d/n (d=%ld fixed), ρ=%g, c=%g",
                 models[0].d, models[0].rho, models[0].c);
        hdp_plot_assign(assign, sizeof assign, "data_file", data_csv);
        hdp_plot_assign(assign, sizeof assign, "families", fams);
        hdp_plot_assign(assign, sizeof assign, "title_text", title);
        hdp_error perr;
        hdp_error_clear(&perr);
        if (hdp_plot_draw("rates", figure_path, assign, &perr) != HDP_OK)
            fprintf(stderr, "hdpsgd rates: warning: %s (data written to %s)\n", perr.msg, data_csv);
        else
            printf("figure: %s (data: %s)\n", figure_path, data_csv);
    }
    for (long i = 0; i < count; i++)
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            hdp_design_result_free(&res[i][f]);
    for (long i = 0; i < loaded; i++)
        hdp_model_free(&models[i]);
    free(models);
    free(res);
    free(gset);
    free(gx);
    free(ry);
    free(ty);
    return rc;
}
