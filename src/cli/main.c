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
int cmd_keys(int argc, char **argv);
extern const cli_opt ode_opts[];

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
     ode_opts},
    {"keys", cmd_keys, "list the model keys with their defaults", "keys",
     "Prints every model key as section.key = default, with what it accepts.", no_opts},
    {NULL, NULL, NULL, NULL, NULL, NULL},
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
