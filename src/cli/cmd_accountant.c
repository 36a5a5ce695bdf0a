/*
 * cmd_accountant.c — `hdpsgd accountant`: epsilon of DP-SGD with Poisson sampling (sample rate
 * q, noise multiplier sigma, T steps) by the PLD, RDP and classic-RDP accountants, or the
 * noise multiplier that meets a target epsilon (docs/theory.md §6.5).
 * All formulas live in the library (hdpsgd/accountant.h); this file parses and prints.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hdpsgd/accountant.h"
#include "io/output.h"

static const char *json_path, *kind_opt;
static double q_opt, sigma_opt, epochs_opt, delta_opt, epsilon_opt, interval_opt;
static long steps_opt;

const cli_opt accountant_opts[] = {
    {"sample-rate", 0, OPT_DOUBLE, &q_opt, "Q", "Poisson sampling rate q = B/N in (0, 1]"},
    {"noise-multiplier", 0, OPT_DOUBLE, &sigma_opt, "S",
     "noise multiplier sigma > 0: the noise's standard deviation over the clipping norm"},
    {"steps", 0, OPT_LONG, &steps_opt, "T", "number of steps T >= 1"},
    {"epochs", 0, OPT_DOUBLE, &epochs_opt, "E", "number of epochs instead of --steps: T = ceil(E/q)"},
    {"delta", 0, OPT_DOUBLE, &delta_opt, "D", "delta of (epsilon, delta)-DP, in (0, 1) (default 1e-5)"},
    {"epsilon", 0, OPT_DOUBLE, &epsilon_opt, "E",
     "target epsilon > 0 instead of --noise-multiplier: the smallest sigma that meets it"},
    {"accountant", 0, OPT_STRING, &kind_opt, "pld|rdp",
     "the accountant that calibrates sigma and that `epsilon` names (default pld)"},
    {"pld-interval", 0, OPT_DOUBLE, &interval_opt, "H",
     "width of the PLD's grid of privacy losses, in (0, 0.1] (default 1e-4)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

const char accountant_usage[] = "--sample-rate Q (--noise-multiplier S | --epsilon E) (--steps T | --epochs E)";
const char accountant_help[] =
    "Privacy of DP-SGD as Opacus, TensorFlow Privacy and dp_accounting run it: T steps, each\n"
    "sampling every row with probability q (Poisson sampling) and adding Gaussian noise of\n"
    "standard deviation sigma C to the sum of the batch's gradients clipped to norm C; neighbouring\n"
    "data sets differ by adding or removing one row (docs/theory.md §6.5). Prints epsilon at delta\n"
    "by three accountants: PLD (privacy-loss distributions composed by FFT; an upper bound, tight,\n"
    "with its discretisation error estimated), RDP (Renyi DP of the subsampled Gaussian with the\n"
    "improved conversion of Balle et al. 2020) and RDP classic (eps = RDP(a) + log(1/delta)/(a-1),\n"
    "the conversion of TensorFlow Privacy's published tables); PLD <= RDP <= RDP classic. With\n"
    "--epsilon E: a sigma whose epsilon by --accountant is at most E and within 1e-5 max(1, E)\n"
    "of it (the smallest such sigma, up to that tolerance; for E below about 1e-5 any sigma\n"
    "meeting E is within it), and its epsilon by all three.\n"
    "In the JSON, epsilon is the chosen accountant's; non-finite numbers are null.";

/* the options, checked before anything runs */
static int check_options(hdp_accountant_query *x, hdp_accountant_kind *kind)
{
    const char *c = "accountant";
    if (isnan(q_opt))
        return cli_bad(c, "--sample-rate Q is required (q = B/N, the expected batch over the data "
                       "set's size)");
    if (!(q_opt > 0 && q_opt <= 1))
        return cli_bad(c, "--sample-rate %g: expected a number in (0, 1]", q_opt);
    if (isnan(sigma_opt) == isnan(epsilon_opt))
        return cli_bad(c, "give exactly one of --noise-multiplier S (epsilon of that sigma) and "
                       "--epsilon E (the sigma that meets E)");
    if (!isnan(sigma_opt) && !(sigma_opt > 0 && isfinite(sigma_opt)))
        return cli_bad(c, "--noise-multiplier %g: expected a finite number > 0", sigma_opt);
    if (!isnan(epsilon_opt) && !(epsilon_opt > 0 && isfinite(epsilon_opt)))
        return cli_bad(c, "--epsilon %g: expected a finite number > 0", epsilon_opt);
    if ((steps_opt == CLI_NOT_GIVEN) == isnan(epochs_opt))
        return cli_bad(c, "give exactly one of --steps T and --epochs E");
    long long T = steps_opt;
    if (steps_opt == CLI_NOT_GIVEN) {
        if (!(epochs_opt > 0 && isfinite(epochs_opt)))
            return cli_bad(c, "--epochs %g: expected a finite number > 0", epochs_opt);
        T = hdp_accountant_steps_for_epochs(epochs_opt, q_opt);
    }
    if (T < 1 || T > HDP_ACCOUNTANT_MAX_STEPS)
        return cli_bad(c, "%lld steps: expected a whole number from 1 to %lld", T,
                       HDP_ACCOUNTANT_MAX_STEPS);
    if (!(delta_opt > 0 && delta_opt < 1))
        return cli_bad(c, "--delta %g: expected a number in (0, 1)", delta_opt);
    if (!isnan(interval_opt) && !(interval_opt > 0 && interval_opt <= 0.1))
        return cli_bad(c, "--pld-interval %g: expected a number in (0, 0.1]", interval_opt);
    if (kind_opt && strcmp(kind_opt, "pld") && strcmp(kind_opt, "rdp"))
        return cli_bad(c, "--accountant: expected pld or rdp");
    *kind = kind_opt && !strcmp(kind_opt, "rdp") ? HDP_ACCOUNTANT_RDP : HDP_ACCOUNTANT_PLD;
    *x = (hdp_accountant_query){q_opt, isnan(sigma_opt) ? 0 : sigma_opt, T, delta_opt,
                                isnan(interval_opt) ? 0 : interval_opt};
    return 0;
}

static void print_result(const hdp_accountant_query *x, const hdp_accountant_result *r, hdp_accountant_kind kind)
{
    printf("DP-SGD with Poisson sampling: sample rate q = %.6g, noise multiplier sigma = %.8g, %lld steps",
           x->sample_rate, x->noise_multiplier, x->steps);
    if (!isnan(epochs_opt))
        printf(" (%g epochs)", epochs_opt);
    printf("\nepsilon at delta = %.6g (add/remove one row):\n", x->delta);
    printf("  PLD          %-10.6g (upper bound; discretisation error ~%.2g)%s\n", r->epsilon_pld,
           r->epsilon_pld_error, kind == HDP_ACCOUNTANT_PLD ? "  <- epsilon" : "");
    printf("  RDP          %-10.6g (order %g; Balle et al. 2020 conversion)%s\n", r->epsilon_rdp, r->rdp_order,
           kind == HDP_ACCOUNTANT_RDP ? "  <- epsilon" : "");
    printf("  RDP classic  %-10.6g (order %g; eps = RDP + log(1/delta)/(a-1), TensorFlow Privacy's tables)\n",
           r->epsilon_rdp_classic, r->rdp_order_classic);
}

static void write_json(FILE *f, const hdp_accountant_query *x, const hdp_accountant_result *r,
                       hdp_accountant_kind kind)
{
    hdp_accountant_choice c = {r, kind, epsilon_opt, epochs_opt};
    const cli_json_source src[] = { /* the tables of its JSON (main.c) and what they read */
        {&hdp_accountant_choice_fields, &c, NULL}, {&hdp_accountant_fields, r, NULL},
        {&hdp_accountant_query_fields, x, NULL},   {&hdp_accountant_epochs_fields, &c, NULL},
        {&hdp_accountant_target_fields, &c, NULL}};
    cli_json_file(f, "accountant", src, (int)(sizeof src / sizeof *src), NULL);
}

int cmd_accountant(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("accountant");
    cli_common common;
    json_path = kind_opt = NULL;
    q_opt = sigma_opt = epochs_opt = epsilon_opt = interval_opt = NAN;
    delta_opt = 1e-5;
    steps_opt = CLI_NOT_GIVEN;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc;
    hdp_accountant_query x;
    hdp_accountant_kind kind = HDP_ACCOUNTANT_PLD;
    if ((rc = check_options(&x, &kind)))
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    if (!isnan(epsilon_opt)) {
        if (hdp_accountant_calibrate(&x, kind, epsilon_opt, &x.noise_multiplier, &err) != HDP_OK)
            return cli_fail("accountant", &err);
        printf("calibration: the smallest noise multiplier with epsilon (%s) <= %g at delta = %g is\n"
               "  sigma = %.8g\n",
               hdp_accountant_name(kind), epsilon_opt, x.delta, x.noise_multiplier);
    }
    hdp_accountant_result r;
    if (hdp_accountant_epsilon(&x, &r, &err) != HDP_OK)
        return cli_fail("accountant", &err);
    print_result(&x, &r, kind);
    hdp_outfile js = {0};
    if (json_path) {
        if (hdp_out_open(&js, json_path, &err) != HDP_OK)
            return cli_fail("accountant", &err);
        write_json(js.f, &x, &r, kind);
        if (hdp_out_commit(&js, &err) != HDP_OK)
            rc = cli_fail("accountant", &err);
        hdp_out_abort(&js);
    }
    return rc;
}
