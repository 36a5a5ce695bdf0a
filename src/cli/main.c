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
#include "core/build_version.h"

/* each command's function, options, usage line and description live beside it (its
 * cmd_<id>.c): cmd_<id>, <id>_opts, <id>_usage, <id>_help */
#define COMMANDS(X)                                                                            \
    X(ode) X(sim) X(sde) X(validate) X(plot) X(sweep) X(privacy) X(accountant) X(schedule)    \
    X(rates) X(rf) X(rf_experiment) X(kl) X(nc) X(net) X(si) X(dataset) X(keys) X(config)
#define DECLARE(id)                                                                            \
    int cmd_##id(int argc, char **argv);                                                       \
    extern const cli_opt id##_opts[];                                                          \
    extern const char id##_usage[], id##_help[];
COMMANDS(DECLARE)
#undef DECLARE

hdp_status ode_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status sim_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status validate_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status schedule_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status rates_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);

static const cli_opt no_opts[] = {{NULL, 0, 0, NULL, NULL, NULL}};
int cmd_help(int argc, char **argv);
/* a command's positional arguments: a cli_arg table ending with its NULL row */
#define ARGS(...) ((const cli_arg[]){__VA_ARGS__, {NULL, NULL}})

/* What each command's --json writes (issue 30), in the order written: the result tables of
 * hdpsgd/fields.h under their prefixes, and when a table is written only in some cases, when.
 * The commands' help and man page list the keys from here (help_results.c), and
 * tests/cli/json_keys.sh checks every key a command writes against its help. */
#define PART(table, ...) {&hdp_##table##_fields, __VA_ARGS__}
#define T(table) PART(table, NULL, NULL, NULL, NULL, 0)        /* always, under no prefix */
#define IF(table, when) PART(table, NULL, NULL, when, NULL, 0) /* only when */
#define UNDER(table, prefix, when) PART(table, prefix, NULL, when, NULL, 0)
#define EACH(table, suffix, when) PART(table, NULL, suffix, when, NULL, 0)
/* a pattern part written element by element with the part before it (per family, ...) */
#define WITH(table, prefix, when) PART(table, prefix, NULL, when, NULL, 1)
static const cli_json_part ode_json[] = {
    T(ode),
    IF(ode_data, "data.source = file"),
    T(model),
    CLI_JSON_MODEL,
    T(version),
    CLI_JSON_END,
};
#define MC_JSON(...)                                                                            \
    T(mc_command),                                                                              \
    T(mc),                                                                                      \
    IF(mc_sgd, "sgd.sampling = shuffle | poisson"),                                             \
    __VA_ARGS__                                                                                 \
    IF(mc_data, "a data set with a held-out set"),                                              \
    T(model),                                                                                   \
    T(mc_run),                                                                                  \
    T(mc_seed),                                                                                 \
    CLI_JSON_MODEL,                                                                             \
    T(version),                                                                                 \
    CLI_JSON_END
static const cli_json_part sim_json[] = {
    MC_JSON(IF(mc_rows, "one pass, not sgd.sampling = shuffle | poisson"),)};
static const cli_json_part sde_json[] = {MC_JSON()};
static const cli_json_part validate_json[] = {
    T(validate_side),
    UNDER(validate_side, "sde_", "the SDE side"),
    T(validate),
    IF(ode_data, "data.source = file"),
    IF(mc_data, "a data set with a held-out set"),
    T(mc_rows), T(model),
    IF(validate_scaling, "--scaling"),
    UNDER(validate_level, "scaling_<l>_", "--scaling: each level l"),
    CLI_JSON_MODEL,
    CLI_JSON_END,
};
static const cli_json_part privacy_json[] = {
    IF(privacy, "not --dpgd"), IF(nonexpansive, "not --dpgd"),
    IF(privacy_target, "not --dpgd"), IF(privacy_deltas, "not --dpgd"),
    CLI_JSON_MODEL_IF("not --dpgd"),
    IF(dpgd_privacy, "--dpgd: this table alone"),
    CLI_JSON_END,
};
static const cli_json_part accountant_json[] = {
    T(accountant_choice), T(accountant), T(accountant_query), T(accountant_epochs),
    T(accountant_target),
    CLI_JSON_END,
};
static const cli_json_part schedule_json[] = {
    UNDER(design, "<family>_", "each family optimised"),
    WITH(design_eta0, "<family>_", "output, linear-noise"),
    WITH(design_inverse_time, "<family>_", "inverse-time"),
    WITH(design_pl, "<family>_", "pl"),
    WITH(design_cost, "<family>_", "each family optimised"),
    IF(design_refine, "--refine"),
    EACH(design_level, "_<l>", "--refine: each level l"),
    UNDER(design_equivalent, "<family>_", "--refine: each closed-form family"),
    T(design_set),
    IF(design_batch, "--tune-batch"),
    IF(design_batch_terms, "--tune-batch"),
    T(design_summary), T(design_file),
    CLI_JSON_MODEL,
    CLI_JSON_END,
};
static const cli_json_part rates_json[] = {
    T(rates),
    UNDER(rates_risk, "<family>_", "each family"),
    UNDER(rates_slope, "<family>_", "each family"),
    UNDER(rates_fit, "<family>_", "each family"),
    T(rates_summary),
    CLI_JSON_MODEL,
    CLI_JSON_END,
};
static const cli_json_part rf_json[] = {
    T(rf_final), T(rf_terms), T(rf_run),
    CLI_JSON_MODEL,
    T(version),
    CLI_JSON_END,
};
static const cli_json_part rf_experiment_json[] = {
    T(rfexp),
    EACH(rfexp_point, "_<i>", "each p, index i"),
    T(rfexp_source),
    CLI_JSON_END,
};
static const cli_json_part kl_json[] = {
    IF(kl_arch, "bound"),
    EACH(kl_beta, "_<l>", "bound: each layer l"),
    IF(kl_bound, "bound"),
    CLI_JSON_MODEL_IF("bound"),
    UNDER(kl_init_point, "<scheme>_L<depth>_", "init: each scheme and depth"),
    IF(kl_init, "init"),
    UNDER(kl_epoch, "<scheme>_", "run --vs epochs: each scheme"),
    WITH(kl_run_scheme, "<scheme>_", "run --vs epochs: each scheme"),
    WITH(kl_epoch, "<scheme>_relu_", "run --vs epochs, kl.network = relu"),
    WITH(kl_run_relu, "<scheme>_relu_", "run --vs epochs, kl.network = relu"),
    IF(kl_network, "run --vs epochs, kl.network = relu"),
    IF(kl_run, "run --vs epochs"),
    IF(model_seed, "run --vs epochs"),
    IF(kl_sweep_depth, "run --vs depth"),
    IF(kl_sweep_width, "run --vs width"),
    UNDER(kl_sweep_scheme, "<scheme>_", "run --vs depth | width: each scheme"),
    WITH(kl_sweep_relu, "<scheme>_relu_", "run --vs depth | width, kl.network = relu"),
    IF(kl_sweep, "run --vs depth | width"),
    CLI_JSON_END,
};
static const cli_json_part nc_json[] = {
    IF(nc_spec, "one run"), IF(nc, "one run"),
    IF(nc_draws, "one run, not --exact"),
    IF(nc_problem, "one run"), IF(nc_seed, "one run"),
    IF(nc_sweep, "--sweep"),
    UNDER(nc_sweep_curve, "<curve>_", "--sweep: each curve"),
    IF(nc_sweep_time, "--sweep"),
    CLI_JSON_MODEL,
    CLI_JSON_END,
};
static const cli_json_part net_json[] = {
    IF(net, "one run"),
    IF(net_config, "one run"),
    IF(netexp_width, "--vs width"),
    IF(netexp_samples, "--vs samples"),
    IF(netexp_variant, "--vs: dp's arrays over the grid"),
    UNDER(netexp_variant, "rf_", "--vs: arrays"),
    UNDER(netexp_variant, "gd_", "--vs: arrays"),
    IF(netexp, "--vs"),
    CLI_JSON_MODEL,
    CLI_JSON_END,
};
static const cli_json_part si_json[] = {
    T(si_stage2), T(si_result), T(si_problem), T(si_eta), T(si_params), T(si_budget),
    T(si_seed),
    CLI_JSON_MODEL,
    CLI_JSON_END,
};
static const cli_json_part dataset_json[] = {
    T(dataset_features), T(dataset),
    IF(dataset_labels_file, "--labels"),
    IF(dataset_classes, "--positive"),
    IF(dataset_labels, "--labels"),
    IF(dataset_test_file, "--test-features"),
    IF(dataset_test, "--test-features"),
    IF(dataset_test_labels_file, "--test-labels"),
    IF(dataset_test_labels, "--test-labels"),
    CLI_JSON_END,
};
#undef PART
#undef T
#undef IF
#undef WITH
#undef UNDER
#undef EACH

/* a command of the table: cli_command's fields after the function's usage, help and options */
#define CMD(name, id, summary, ...)                                                            \
    {name, cmd_##id, summary, id##_usage, id##_help, id##_opts, __VA_ARGS__}

const cli_command hdp_commands[] = {
    CMD("ode", ode, "integrate the risk ODE of homogenized DP-SGD (DOP853 or CVODE)",
        0, NULL, &hdp_sweep_ode, ode_sweep_write, cli_model_args, 1, ode_json),
    CMD("sim", sim, "Monte Carlo of DP-SGD (one pass, batches, shuffle/Poisson epochs, data rows)",
        0, NULL, &hdp_sweep_sim, sim_sweep_write, cli_model_args, 1, sim_json),
    CMD("sde", sde, "Euler-Maruyama of the homogenized SDE (H-DP-SGD)",
        0, NULL, &hdp_sweep_sde, sim_sweep_write, cli_model_args, 1, sde_json),
    CMD("validate", validate, "ODE vs Monte Carlo vs SDE on one model: table, verdict, figure",
        0, ".ode.csv .sim.csv .sde.csv", &hdp_sweep_validate, validate_sweep_write, cli_model_args, 1, validate_json),
    CMD("plot", plot, "draw any CSV of the toolkit with gnuplot",
        1, NULL, NULL, NULL,
        ARGS({"FILE.csv...", "CSV files written by the toolkit (several: risk curves of ode, sim, sde)"}),
        0, NULL),
    CMD("sweep", sweep, "run commands over a grid of model keys (serial or Open MPI)",
        0, NULL, NULL, NULL,
        ARGS({"SWEEP.ini", "the sweep file: base model, commands, axes, fixed overrides"}), 0, NULL),
    CMD("privacy", privacy, "privacy level: rho, zCDP, (epsilon, delta), accountant, calibration, DP-GD",
        0, NULL, NULL, NULL, cli_model_args, 1, privacy_json),
    CMD("accountant", accountant, "epsilon of DP-SGD with Poisson sampling by PLD and RDP, or sigma for a target",
        0, NULL, NULL, NULL, NULL, 0, accountant_json),
    CMD("schedule", schedule, "optimise the learning-rate schedule on the risk ODE at fixed privacy",
        0, ".schedules.csv", &hdp_sweep_schedule, schedule_sweep_write, cli_model_args, 1, schedule_json),
    CMD("rates", rates, "optimised final risk of each schedule family against gamma, vs the theorem",
        0, ".rates.csv", &hdp_sweep_rates, rates_sweep_write, cli_model_args, 1, rates_json),
    CMD("rf", rf, "DP-GD on random features vs its Ornstein-Uhlenbeck limit (Bombari-Mondelli)",
        0, NULL, NULL, NULL, cli_model_args, 1, rf_json),
    CMD("rf-experiment", rf_experiment, "Bombari-Mondelli's Fig. 2 on random features: P1, P2, P3, P4",
        1, NULL, NULL, NULL,
        ARGS({"P1|P2|P3|P4", "the experiment of Bombari-Mondelli's Fig. 2"},
             {"MODEL.ini", "model file, e.g. models/rf-p1.ini (default: the built-in default model)"}),
        1, rf_experiment_json),
    CMD("kl", kl, "KL privacy of noisy GD on ReLU networks by initialisation (Ye et al.)",
        1, ".csv", NULL, NULL,
        ARGS({"bound|init|run", "the subcommand"},
             {"MODEL.ini", "model file (default: the built-in default model)"}), 1, kl_json),
    CMD("nc", nc, "NoisyGD on neural-collapse features: error vs the dimension p (the NC paper)",
        0, NULL, NULL, NULL, cli_model_args, 1, nc_json),
    CMD("net", net, "DP-GD on a two-layer ReLU network: Fig. 1 of Bombari-Mondelli (width, samples)",
        0, NULL, NULL, NULL, cli_model_args, 1, net_json),
    CMD("sim-index", si, "two-stage private learning of a single-index model (the single-index notes)",
        0, NULL, NULL, NULL, cli_model_args, 1, si_json),
    CMD("dataset", dataset, "read a data set (.npy, .csv, IDX) and prepare it: spectrum, least-squares target",
        0, NULL, NULL, NULL, ARGS({"FEATURES", "an N x d matrix: .npy, .csv or IDX, gzipped or not"}),
        0, dataset_json),
    CMD("keys", keys, "list the model keys with their defaults, or a model's values",
        0, NULL, NULL, NULL, cli_model_args, 1, NULL),
    CMD("config", config, "print the resolved model as a model file that reads back to it",
        0, NULL, NULL, NULL, cli_model_args, 1, NULL),
    {"help", cmd_help, "the help of one command (no COMMAND: this list), or the result tables",
     "[COMMAND] | results [TABLE]",
     "Prints the usage, arguments and options of COMMAND; without COMMAND, the list of commands.\n"
     "'hdpsgd COMMAND --help' prints the same. 'hdpsgd help results' lists every result table\n"
     "(the fields of the JSON summaries, CSV files, sweep columns and handle records, with what\n"
     "each means); 'hdpsgd help results TABLE' one of them.",
     no_opts, 1, NULL, NULL, NULL,
     ARGS({"COMMAND", "one of the commands listed by 'hdpsgd --help'"},
          {"results [TABLE]", "the result tables: their fields, kinds, outputs and help (TABLE: one)"}),
     0, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, NULL},
};

const char *hdp_version_string(void) { return hdp_build_version; }

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
    if (!strcmp(common.pos[0], "results") && common.npos <= 2)
        return cli_print_results(stdout, common.npos == 2 ? common.pos[1] : NULL);
    if (common.npos > 1) {
        fprintf(stderr, "hdpsgd help: error: one COMMAND, or results [TABLE]\nUsage: hdpsgd %s\n",
                cli_usage_str(cmd));
        return EXIT_BAD_INPUT;
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

/* rc, or EXIT_IO when what was printed did not reach standard output (a full disk) */
static int stdout_status(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("hdpsgd: error writing to standard output");
        return EXIT_IO;
    }
    return rc;
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
        return stdout_status(0);
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
        printf("hdpsgd %s\n", hdp_version_string());
        return stdout_status(0);
    }
    if (!strcmp(name, "--man")) {
        cli_print_man(stdout);
        return stdout_status(0);
    }
    if (!strcmp(name, "--completion")) {
        if (argc < 3 || strcmp(argv[2], "bash")) {
            fprintf(stderr, "hdpsgd: --completion takes 'bash'\n");
            return 2;
        }
        cli_print_completion_bash(stdout);
        return stdout_status(0);
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
    return stdout_status(c->run(argc - 1, argv + 1));
}
