/*
 * cmd_ode.c — `hdpsgd ode`: integrate the risk ODE of homogenized DP-SGD
 * (docs/theory.md §2, §3, §5) and write the curve as CSV and a JSON summary.
 */
#include <math.h>
#include <stdio.h>

#include "io/output.h"
#include "cli.h"
#include "hdpsgd/ode.h"

static const char *out_path, *json_path;
static cli_ode_args ode_args;

const cli_opt ode_opts[] = {
    {"output", 'o', OPT_OUTPUT, &out_path, "FILE.csv", "write the CSV here (default: stdout)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"},
    CLI_ODE_OPTS(ode_args),
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help ode` (the command table in main.c points here) */
const char ode_usage[] = "[MODEL.ini]";
const char ode_help[] =
    "Integrates the deterministic ODE for the excess risk of one-pass DP-SGD with per-sample\n"
    "clipping (docs/theory.md §2, §3, §5) on [0, 1] and writes one CSV row per grid point:\n"
    "  t,risk,risk_upper,risk_lower,mu_c,nu_c,eta,sigma2\n"
    "risk is the predicted excess risk R(t) (the row t = 1 is the output theta_n, final-step\n"
    "noise included, also in the bounds); mu_c, nu_c are the clipping factors at R(t); eta\n"
    "and sigma2 are the schedule's eta~(t) and sigma~(t)^2. Lines starting with # give the\n"
    "model. In the JSON rho = inf is null, and upper_finite_until, lower_finite_until are 1, or\n"
    "the last t where a bound whose equation overflows is finite: its CSV cells are empty after\n"
    "it, with a note; the risk is integrated apart from the bounds then and does not depend on\n"
    "them.";

void cli_write_ode_csv(FILE *f, const hdp_model *m, const hdp_ode_result *r)
{
    fprintf(f, "# ; hdpsgd %s ode: predicted excess risk of one-pass DP-SGD (docs/theory.md §3)\n",
            hdp_version_string());
    hdp_model_write_meta_sections(m, f, cli_model_sections("ode"));
    fprintf(f, "# ; effective: d = %ld, n = %ld, gamma = %.17g, bins = %ld\n", m->d, m->n, m->gamma,
            r->bins);
    fprintf(f, "# ; final_risk = %.17g (R(1) = %.17g plus final-step noise %.17g)\n", r->final_risk,
            r->risk_before_final_noise, r->final_noise);
    const char *name[2] = {"upper", "lower"};
    double until[2] = {r->upper_until, r->lower_until};
    if (isnan(until[0]) && isnan(until[1])) /* ode.model = rows */
        fprintf(f, "# ; note: ode.model = rows has no bounds (those of docs/theory.md §3 are the "
                   "bins' ODE's): their cells are empty\n");
    for (int b = 0; b < 2; b++)
        if (!(until[b] >= 1.0) && !isnan(until[b]))
            fprintf(f, "# ; note: the %s bound's equation overflows after t = %.10g: its cells are "
                       "empty from there (the risk does not depend on it)\n",
                    name[b], until[b]);
    hdp_csv_columns2(f, &hdp_ode_fields, r, &hdp_ode_data_columns, r->test_mse ? r : NULL);
}

void cli_write_ode_json(FILE *f, const hdp_model *m, const hdp_ode_result *r)
{
    const cli_json_source src[] = { /* the tables of its JSON (main.c) and what they read */
        {&hdp_ode_fields, r, m}, {&hdp_ode_data_fields, r->data ? r : NULL, m}, /* §9 */
        {&hdp_model_fields, m, NULL}, {&hdp_version_fields, NULL, NULL}};
    cli_json_file(f, "ode", src, (int)(sizeof src / sizeof *src), m);
}

/* ode.model = rows (seconds to minutes): its steps, with the risk, on a terminal */
static int ode_progress(const char *what, long done, long total, double value, void *user)
{
    (void)what;
    cli_progress_show(user, (double)done, (double)total, "risk %.6g", value);
    return 0;
}

int cmd_ode(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("ode");
    cli_common common;
    out_path = json_path = NULL;
    cli_ode_args_reset(&ode_args);
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    if ((rc = cli_ode_args_apply("ode", &ode_args, &common)))
        return rc;
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    cli_warn_stability("ode", &m);
    cli_note_feature_norm("ode", &m);

    hdp_error err;
    hdp_error_clear(&err);
    hdp_ode_result res;
    cli_progress line;
    cli_progress_start(&line, "ode", "steps", 0);
    hdp_status st = hdp_ode_solve_progress(&m, line.tty ? ode_progress : NULL, &line, &res, &err);
    cli_progress_clear(&line);
    if (st != HDP_OK) {
        hdp_ode_result_free(&res);
        hdp_model_free(&m);
        return cli_fail("ode", &err);
    }
    hdp_outset out; /* CSV (standard output by default) and JSON, all or nothing */
    hdp_outset_init(&out, &err);
    FILE *f;
    if ((f = hdp_outset_add(&out, out_path ? out_path : "-")))
        cli_write_ode_csv(f, &m, &res);
    if ((f = hdp_outset_add(&out, json_path)))
        cli_write_ode_json(f, &m, &res);
    cli_test_stop("commit");
    st = hdp_outset_commit(&out);
    if (st == HDP_OK && !(res.upper_until >= 1.0 && res.lower_until >= 1.0) &&
        !(isnan(res.upper_until) && isnan(res.lower_until)))
        fprintf(stderr, "hdpsgd ode: note: a bound's equation overflows (upper finite until t = "
                        "%.6g, lower until t = %.6g): its cells are empty after that; the risk "
                        "is not affected\n",
                res.upper_until, res.lower_until);
    if (st == HDP_OK && out_path)
        fprintf(stderr, "hdpsgd ode: final excess risk %.6g (R(1) = %.6g + final noise %.3g); "
                        "%ld steps, %.3g s -> %s\n",
                res.final_risk, res.risk_before_final_noise, res.final_noise, res.steps,
                res.solve_seconds, out_path);
    hdp_ode_result_free(&res);
    hdp_model_free(&m);
    return st == HDP_OK ? 0 : cli_fail("ode", &err);
}

/* ---- in a sweep (hdpsgd/sweep.h): ode.csv and ode.json in the point's folder ---- */

static void sweep_csv(FILE *f, const hdp_sweep_point *p) { cli_write_ode_csv(f, p->m, &p->ode); }
static void sweep_json(FILE *f, const hdp_sweep_point *p) { cli_write_ode_json(f, p->m, &p->ode); }

hdp_status ode_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err)
{
    return cli_sweep_files(pdir, p, "ode.csv", sweep_csv, "ode.json", sweep_json, err);
}
