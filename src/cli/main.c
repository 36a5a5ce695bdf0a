/*
 * main.c — `hdpsgd <command> [MODEL.ini] [--set section.key=value]...`
 * A table of {name, function, help} dispatches; the same table prints the
 * command list and each command's help.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hdpsgd/version.h"

int cmd_ode(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_sde(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_keys(int argc, char **argv);
extern const cli_opt ode_opts[], sim_opts[], sde_opts[], validate_opts[], plot_opts[];

static const cli_opt no_opts[] = {{NULL, 0, 0, NULL, NULL, NULL}};

const cli_command hdp_commands[] = {
    {"ode", cmd_ode, "integrate the risk ODE of homogenized DP-SGD (CVODE)",
     "ode [MODEL.ini] [--set k=v]... [-o FILE.csv] [--json FILE.json]",
     "Integrates the deterministic ODE for the excess risk of one-pass DP-SGD with per-sample\n"
     "clipping (THEORY.md sections 2, 3, 5) on [0, 1] and writes one CSV row per grid point:\n"
     "  t,risk,risk_upper,risk_lower,mu_c,nu_c,eta,sigma2\n"
     "risk is the predicted excess risk R(t) (the row t = 1 is the output theta_n, final-step\n"
     "noise included, also in the bounds); mu_c, nu_c are the clipping factors at R(t); eta\n"
     "and sigma2 are the schedule's eta~(t) and sigma~(t)^2. Lines starting with # give the\n"
     "model. The JSON summary has final_risk, risk_before_final_noise, gamma, n, d, rho\n"
     "(null = inf), stable, rhs_evals, steps, solve_seconds.",
     ode_opts, 0},
    {"sim", cmd_sim, "Monte Carlo of one-pass DP-SGD (the discrete algorithm)",
     "sim [MODEL.ini] [--set k=v]... [--runs N] [--threads T] [--seed S] [-o FILE.csv] "
     "[--json FILE.json]",
     "Runs the discrete algorithm of THEORY.md section 1 exactly (fresh Gaussian samples in\n"
     "the eigenbasis of Sigma, label noise of the model's law, per-sample clipping of the true\n"
     "gradient norm at c*sqrt(d), private noise 2*c*sqrt(d)*sigma_k*xi) for sim.runs\n"
     "independent runs and records the exact excess risk on the grid of `hdpsgd ode`. One CSV\n"
     "row per grid point:\n"
     "  t,mean,stderr,q10,q50,q90,clipped_fraction\n"
     "over the runs that did not diverge (the row t = 1 is the output theta_n);\n"
     "clipped_fraction is the fraction of clipped steps since the previous row. Run r uses\n"
     "the r-th jump of a xoshiro256++ stream seeded by sim.seed: the CSV is the same for any\n"
     "--threads. A run diverges when its excess risk becomes non-finite or exceeds\n"
     "sim.divergence_factor x R(0); when every run diverges the exit status is 4. The JSON\n"
     "summary has final_risk_mean, final_risk_stderr, final_jump_mean/stderr (the jump of the\n"
     "last step's private noise), runs, diverged_runs, rho_accounted (THEORY 6 on the realised\n"
     "schedule; null = inf), seconds, threads, seed.",
     sim_opts, 0},
    {"sde", cmd_sde, "Euler-Maruyama of the homogenized SDE (H-DP-SGD)",
     "sde [MODEL.ini] [--set k=v]... [--runs N] [--step h] [--threads T] [--seed S] "
     "[-o FILE.csv] [--json FILE.json]",
     "Integrates the homogenized SDE of THEORY.md section 4 in the eigenbasis of Sigma with\n"
     "Euler-Maruyama, step h (sde.step or --step; 0 = 1/n), N = round(1/h) steps, the risk\n"
     "recomputed every step for the clipping factors mu_c, V_c (THEORY 2), then adds the\n"
     "final-iterate noise of THEORY 3 at t = 1. Same runs, seeds, CSV columns and JSON keys\n"
     "as `hdpsgd sim`; clipped_fraction is the mean of 1 - mu_c(R) over the steps of the\n"
     "interval (the probability that a DP-SGD step would be clipped), and rho_accounted is\n"
     "the accountant on the discrete schedule of the model.",
     sde_opts, 0},
    {"validate", cmd_validate, "ODE vs Monte Carlo vs SDE on one model: table, verdict, figure",
     "validate [MODEL.ini] [--set k=v]... [--runs N] [--threads T] [--seed S] [--figure FILE] "
     "[--json FILE.json] [--no-sde] [--scaling K]",
     "The toolkit's main job: runs `ode`, `sim` and `sde` on the same model and grid and prints,\n"
     "for each simulated side, the maximum absolute and relative deviation from the ODE, the\n"
     "maximum z-score |mean - ODE|/stderr, the final-iterate risk, the clipped fraction, and the\n"
     "privacy level (rho, and epsilon at delta = 1/n by Canonne-Kamath-Steinke). A grid point\n"
     "agrees when its relative deviation is <= validate.rel_tol (0.05) or its deviation is within\n"
     "validate.z_tol (4) standard errors; the model passes when every point of both sides\n"
     "agrees. Exit status 0 on pass, 1 on fail, 2 on bad input. --figure draws the curves with\n"
     "gnuplot (PNG, PDF or SVG by extension) and writes the data beside it; --scaling K repeats\n"
     "the Monte Carlo comparison at n, 4n, ..., 4^(K-1) n with gamma fixed and fits the\n"
     "log-log slope of the deviation (theory: O(log^2 n / sqrt n)). JSON keys: max_abs_dev,\n"
     "max_rel_dev, max_z, final_risk, clipped_fraction, pass (and sde_* for the SDE side),\n"
     "sim_pass, ode_final_risk, rho, rho_z, delta, epsilon_cks, epsilon_bs, runs, diverged_runs.",
     validate_opts, 0},
    {"plot", cmd_plot, "draw the toolkit's CSV files with gnuplot",
     "plot FILE.csv... -o FIG [--title T] [--logy] [--bounds]",
     "Draws any of the toolkit's risk CSVs in one figure: ode CSVs (header t,risk,...) as\n"
     "curves, sim/sde CSVs (header t,mean,...) as the mean with a 10-90 % band. The row t = 1\n"
     "(the output theta_n) is a marker. The format follows FIG's extension: .png, .pdf, .svg.",
     plot_opts, 1},
    {"keys", cmd_keys, "list the model keys with their defaults", "keys",
     "Prints every model key as section.key = default, with what it accepts.", no_opts, 0},
    {NULL, NULL, NULL, NULL, NULL, NULL, 0},
};

const char *hdp_version_string(void) { return HDPSGD_VERSION_FULL; }

int cmd_keys(int argc, char **argv)
{
    cli_common common;
    int rc = cli_parse(cli_find_command("keys"), argc, argv, &common);
    if (rc)
        return rc;
    const char *section, *key, *def, *help, *prev = "";
    for (int i = 0; hdp_model_schema_entry(i, &section, &key, &def, &help); i++) {
        if (strcmp(prev, section))
            printf("%s[%s]\n", i ? "\n" : "", section);
        prev = section;
        printf("  %-18s = %-10s %s\n", key, def[0] ? def : "(none)", help);
    }
    return 0;
}

static void print_commands(FILE *f)
{
    fprintf(f, "Usage: hdpsgd <command> [MODEL.ini] [--set section.key=value]... [options]\n\n"
               "Predicts and simulates the training dynamics of differentially private SGD in\n"
               "high dimensions (see README.md and THEORY.md).\n\nCommands:\n");
    for (const cli_command *c = hdp_commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "  %-10s %s\n", "help", "help COMMAND: the options of one command");
    fprintf(f, "\nWith no MODEL.ini the built-in default model is used (models/default.ini).\n"
               "Options: --version, --help.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_commands(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        print_commands(stdout);
        return 0;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("hdpsgd %s\n", hdp_version_string());
        return 0;
    }
    if (!strcmp(name, "help")) {
        if (argc < 3) {
            print_commands(stdout);
            return 0;
        }
        const cli_command *c = cli_find_command(argv[2]);
        if (!c) {
            fprintf(stderr, "hdpsgd: unknown command '%s'\n", argv[2]);
            return 2;
        }
        cli_print_help(c, stdout);
        return 0;
    }
    const cli_command *c = cli_find_command(name);
    if (!c) {
        fprintf(stderr, "hdpsgd: unknown command '%s'\n\n", name);
        print_commands(stderr);
        return 2;
    }
    int rc = c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("hdpsgd: error writing to standard output");
        return EXIT_IO;
    }
    return rc;
}
