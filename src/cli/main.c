/*
 * main.c — `hdpsgd <command> [MODEL.ini] [--set section.key=value]...`
 * A table of {name, function, help} dispatches; the same table prints the
 * command list and each command's help.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hdpsgd/rng.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/version.h"

int cmd_ode(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_sde(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_config(int argc, char **argv);
extern const cli_opt keys_opts[], config_opts[];
extern const char keys_usage[], keys_help[], config_usage[], config_help[];
int cmd_privacy(int argc, char **argv);
int cmd_accountant(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_rates(int argc, char **argv);
extern const cli_opt privacy_opts[], schedule_opts[], rates_opts[];
extern const cli_opt ode_opts[], sim_opts[], sde_opts[], validate_opts[], plot_opts[], sweep_opts[];
int cmd_rf(int argc, char **argv);
int cmd_rf_experiment(int argc, char **argv);
extern const cli_opt rf_opts[], rf_experiment_opts[];
int cmd_nc(int argc, char **argv);
extern const cli_opt nc_opts[];
int cmd_net(int argc, char **argv);
extern const cli_opt net_opts[];
int cmd_kl(int argc, char **argv);
extern const cli_opt kl_opts[];
int cmd_si(int argc, char **argv);
int cmd_dataset(int argc, char **argv);
extern const cli_opt dataset_opts[];
extern const char dataset_usage[], dataset_help[];
extern const cli_opt si_opts[];

hdp_status ode_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status sim_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status validate_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status schedule_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status rates_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);

/* the usage lines and descriptions live beside each command (its cmd_<name>.c) */
extern const char ode_usage[], ode_help[];
extern const char sim_usage[], sim_help[];
extern const char sde_usage[], sde_help[];
extern const char validate_usage[], validate_help[];
extern const char plot_usage[], plot_help[];
extern const char sweep_usage[], sweep_help[];
extern const char privacy_usage[], privacy_help[];
extern const cli_opt accountant_opts[];
extern const char accountant_usage[], accountant_help[];
extern const char schedule_usage[], schedule_help[];
extern const char rates_usage[], rates_help[];
extern const char rf_usage[], rf_help[];
extern const char rf_experiment_usage[], rf_experiment_help[];
extern const char kl_usage[], kl_help[];
extern const char nc_usage[], nc_help[];
extern const char net_usage[], net_help[];
extern const char si_usage[], si_help[];


static const cli_opt no_opts[] = {{NULL, 0, 0, NULL, NULL, NULL}};
int cmd_help(int argc, char **argv);
static const cli_arg plot_args[] = {
    {"FILE.csv...", "CSV files written by the toolkit (several: risk curves of ode, sim, sde)"},
    {NULL, NULL},
};
static const cli_arg sweep_args[] = {
    {"SWEEP.ini", "the sweep file: base model, commands, axes, fixed overrides"},
    {NULL, NULL},
};
static const cli_arg rf_experiment_args[] = {
    {"P1|P2|P3|P4", "the experiment of Bombari-Mondelli's Fig. 2"},
    {"MODEL.ini", "model file, e.g. models/rf-p1.ini (default: the built-in default model)"},
    {NULL, NULL},
};
static const cli_arg kl_args[] = {
    {"bound|init|run", "the subcommand"},
    {"MODEL.ini", "model file (default: the built-in default model)"},
    {NULL, NULL},
};
static const cli_arg dataset_args[] = {
    {"FEATURES", "an N x d matrix: .npy, .csv or IDX, gzipped or not"},
    {NULL, NULL},
};
static const cli_arg help_args[] = {
    {"COMMAND", "one of the commands listed by 'hdpsgd --help'"},
    {NULL, NULL},
};

const cli_command hdp_commands[] = {
    {"ode", cmd_ode, "integrate the risk ODE of homogenized DP-SGD (DOP853 or CVODE)",
     ode_usage,
     ode_help,
     ode_opts, 0, NULL, &hdp_sweep_ode, ode_sweep_write, cli_model_args, 1},
    {"sim", cmd_sim, "Monte Carlo of DP-SGD (one pass, batches, shuffle/Poisson epochs, data rows)",
     sim_usage,
     sim_help,
     sim_opts, 0, NULL, &hdp_sweep_sim, sim_sweep_write, cli_model_args, 1},
    {"sde", cmd_sde, "Euler-Maruyama of the homogenized SDE (H-DP-SGD)",
     sde_usage,
     sde_help,
     sde_opts, 0, NULL, &hdp_sweep_sde, sim_sweep_write, cli_model_args, 1},
    {"validate", cmd_validate, "ODE vs Monte Carlo vs SDE on one model: table, verdict, figure",
     validate_usage,
     validate_help,
     validate_opts, 0, ".ode.csv .sim.csv .sde.csv", &hdp_sweep_validate, validate_sweep_write, cli_model_args, 1},
    {"plot", cmd_plot, "draw any CSV of the toolkit with gnuplot",
     plot_usage,
     plot_help,
     plot_opts, 1, NULL, NULL, NULL, plot_args, 0},
    {"sweep", cmd_sweep, "run commands over a grid of model keys (serial or Open MPI)",
     sweep_usage,
     sweep_help,
     sweep_opts, 0, NULL, NULL, NULL, sweep_args, 0},
    {"privacy", cmd_privacy, "privacy level: rho, zCDP, (epsilon, delta), accountant, calibration, DP-GD",
     privacy_usage,
     privacy_help,
     privacy_opts, 0, NULL, NULL, NULL, cli_model_args, 1},
    {"accountant", cmd_accountant, "epsilon of DP-SGD with Poisson sampling by PLD and RDP, or sigma for a target",
     accountant_usage,
     accountant_help,
     accountant_opts, 0, NULL, NULL, NULL, NULL, 0},
    {"schedule", cmd_schedule, "optimise the learning-rate schedule on the risk ODE at fixed privacy",
     schedule_usage,
     schedule_help,
     schedule_opts, 0, ".schedules.csv", &hdp_sweep_schedule, schedule_sweep_write, cli_model_args, 1},
    {"rates", cmd_rates, "optimised final risk of each schedule family against gamma, vs the theorem",
     rates_usage,
     rates_help,
     rates_opts, 0, ".rates.csv", &hdp_sweep_rates, rates_sweep_write, cli_model_args, 1},
    {"rf", cmd_rf, "DP-GD on random features vs its Ornstein-Uhlenbeck limit (Bombari-Mondelli)",
     rf_usage,
     rf_help,
     rf_opts, 0, NULL, NULL, NULL, cli_model_args, 1},
    {"rf-experiment", cmd_rf_experiment, "Bombari-Mondelli's Fig. 2 on random features: P1, P2, P3, P4",
     rf_experiment_usage,
     rf_experiment_help,
     rf_experiment_opts, 1, NULL, NULL, NULL, rf_experiment_args, 1},
    {"kl", cmd_kl, "KL privacy of noisy GD on ReLU networks by initialisation (Ye et al.)",
     kl_usage,
     kl_help,
     kl_opts, 1, ".csv", NULL, NULL, kl_args, 1},
    {"nc", cmd_nc, "NoisyGD on neural-collapse features: error vs the dimension p (the NC paper)",
     nc_usage,
     nc_help,
     nc_opts, 0, NULL, NULL, NULL, cli_model_args, 1},
    {"net", cmd_net, "DP-GD on a two-layer ReLU network: Fig. 1 of Bombari-Mondelli (width, samples)",
     net_usage,
     net_help,
     net_opts, 0, NULL, NULL, NULL, cli_model_args, 1},
    {"sim-index", cmd_si, "two-stage private learning of a single-index model (the single-index notes)",
     si_usage,
     si_help,
     si_opts, 0, NULL, NULL, NULL, cli_model_args, 1},
    {"dataset", cmd_dataset, "read a data set (.npy, .csv, IDX) and prepare it: spectrum, least-squares target",
     dataset_usage,
     dataset_help,
     dataset_opts, 0, NULL, NULL, NULL, dataset_args, 0},
    {"keys", cmd_keys, "list the model keys with their defaults, or a model's values",
     keys_usage,
     keys_help,
     keys_opts, 0, NULL, NULL, NULL, cli_model_args, 1},
    {"config", cmd_config, "print the resolved model as a model file that reads back to it",
     config_usage,
     config_help,
     config_opts, 0, NULL, NULL, NULL, cli_model_args, 1},
    {"help", cmd_help, "the help of one command (no COMMAND: this list)", "[COMMAND]",
     "Prints the usage, arguments and options of COMMAND; without COMMAND, the list of commands.\n"
     "'hdpsgd COMMAND --help' prints the same.",
     no_opts, 0, NULL, NULL, NULL, help_args, 0},
    {NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0},
};

const char *hdp_version_string(void) { return HDPSGD_VERSION_FULL; }

static void print_commands(FILE *f);

int cmd_help(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("help");
    cli_common common;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (common.npos == 0) {
        print_commands(stdout);
        return 0;
    }
    const cli_command *c = cli_find_command(common.pos[0]);
    if (!c) {
        const char *near = cli_nearest_command(common.pos[0]);
        fprintf(stderr, "hdpsgd: unknown command '%s'%s%s%s\n", common.pos[0], near ? " (did you mean " : "",
                near ? near : "", near ? "?)" : "");
        return EXIT_BAD_INPUT;
    }
    cli_print_help(c, stdout);
    return 0;
}

static void print_commands(FILE *f)
{
    fprintf(f, "Usage: hdpsgd <command> [MODEL.ini] [--set section.key=value]... [options]\n\n"
               "Predicts and simulates the training dynamics of differentially private SGD in\n"
               "high dimensions (see README.md and docs/theory.md).\n\nCommands:\n");
    for (const cli_command *c = hdp_commands; c->name; c++)
        fprintf(f, "  %-14s %s\n", c->name, c->summary);
    fprintf(f, "\nWith no MODEL.ini the built-in default model is used (models/default.ini).\n"
               "Options: -V, --version; -h, --help; --man (the man page); --completion bash.\n");
}

/* The library reads no environment variable (issue 30): the program's policy, taken from
 * its environment here, before any command runs. HDPSGD_SIMD chooses the Gaussian kernel (a
 * bad or unavailable one is ignored with a warning: the numbers are the same for all);
 * OMP_STACKSIZE (or GOMP_STACKSIZE) is the stack libgomp gives its threads, which the library
 * probes with; a placement chosen by the user (OMP_PROC_BIND, OMP_PLACES) or MPI forbids the
 * Monte Carlo's pinning of threads (hdpsgd/sim.h). */
static void apply_environment(void)
{
    const char *env = getenv("HDPSGD_SIMD");
    hdp_simd k;
    if (env && !hdp_simd_parse(env, &k))
        fprintf(stderr, "hdpsgd: warning: HDPSGD_SIMD=%s is not one of auto, generic, avx2, "
                        "avx512: ignored, the widest kernel the CPU has is used\n", env);
    else if (env && !hdp_normals_use(k))
        fprintf(stderr, "hdpsgd: warning: HDPSGD_SIMD=%s names a kernel this CPU lacks: ignored, "
                        "the widest kernel the CPU has is used (the numbers are the same)\n", env);
    const char *stack = getenv("OMP_STACKSIZE");
    hdp_set_thread_stack_size(hdp_stack_size_parse(stack ? stack : getenv("GOMP_STACKSIZE")));
    hdp_set_thread_pinning(!getenv("OMP_PROC_BIND") && !getenv("OMP_PLACES") &&
                           !getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") &&
                           !getenv("PMI_SIZE"));
}

int main(int argc, char **argv)
{
    cli_stderr_visible();
    if (argc < 2) {
        print_commands(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        print_commands(stdout);
        return 0;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
        printf("hdpsgd %s\n", hdp_version_string());
        return 0;
    }
    if (!strcmp(name, "--man")) {
        cli_print_man(stdout);
        return 0;
    }
    if (!strcmp(name, "--completion")) {
        if (argc < 3 || strcmp(argv[2], "bash")) {
            fprintf(stderr, "hdpsgd: --completion takes 'bash'\n");
            return 2;
        }
        cli_print_completion_bash(stdout);
        return 0;
    }
    const cli_command *c = cli_find_command(name);
    if (!c) {
        const char *near = cli_nearest_command(name);
        fprintf(stderr, "hdpsgd: unknown command '%s'%s%s%s\n\n", name, near ? " (did you mean " : "",
                near ? near : "", near ? "?)" : "");
        print_commands(stderr);
        return 2;
    }
    apply_environment();
    cli_install_signal_handlers(); /* an interrupted command leaves no partial output */
    int rc = c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("hdpsgd: error writing to standard output");
        return EXIT_IO;
    }
    return rc;
}
