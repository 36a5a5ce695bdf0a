/*
 * si_keys.c — the [si] section of the model files: two-stage private training on a
 * single-index target (the single-index notes; docs/theory.md §8; hdpsgd/si.h). Its keys, the names
 * of its enum, the sizes that finalize checks, and the accessor hdp_si_keys_of. Prefactors multiply
 * the single-index notes' scalings (Assumption 4), exponent eps_n. Registered in families.c.
 */
#include "families/sections.h"
#include "hdpsgd/si.h"

#include <math.h>
#include <stddef.h>

static const char *const si_stage2_names[] = {"gd", "ou", NULL};

const char *hdp_si_stage2_name(hdp_si_stage2_kind k) { return si_stage2_names[k]; }

#define P(f) offsetof(hdp_si_keys, f)

static const hdp_schema_key keys[] = {
    {"d", HDP_KEY_LONG, P(d), "64", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED,
     2, 1e5, NULL, "input dimension d (integer in [2, 1e5])"},
    {"p", HDP_KEY_LONG, P(p), "64", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED,
     1, 1e5, NULL, "neurons p (integer in [1, 1e5])"},
    {"n", HDP_KEY_LONG, P(n), "4000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e7, NULL,
     "samples n of each of the two training sets (integer in [2, 1e7])"},
    {"test_size", HDP_KEY_LONG, P(test_size), "2000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED,
     1, 1e7, NULL,
     "fresh test samples (integer in [1, 1e7])"},
    {"runs", HDP_KEY_LONG, P(runs), "30", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e6, NULL,
     "stage-2 noise runs on the same data and first layer (integer in [2, 1e6])"},
    {"he1", HDP_KEY_DOUBLE, P(he1), "1", 0, 0, 0, NULL,
     "coefficient of He1 in the link sigma_*; must be nonzero (information exponent 1)"},
    {"he2", HDP_KEY_DOUBLE, P(he2), "1", 0, 0, 0, NULL, "coefficient of He2 in the link"},
    {"he3", HDP_KEY_DOUBLE, P(he3), "0", 0, 0, 0, NULL, "coefficient of He3 in the link"},
    {"eps_n", HDP_KEY_DOUBLE, P(eps_n), "0.25", HDP_R_LO_OPEN | HDP_R_HI_CLOSED, 0, 1, NULL,
     "exponent epsilon_n in (0, 1] of the single-index notes' scalings; at most 1"},
    {"lambda", HDP_KEY_DOUBLE, P(lambda), "0.01", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e100,
     NULL, "prefactor in [0, 1e100]: lambda = c p / d^(2 eps_n) (squared in the gradient norms)"},
    {"eta_a", HDP_KEY_DOUBLE, P(eta_a), "0", HDP_R_LO_CLOSED, 0, 0, NULL,
     "prefactor >= 0: eta_a = c d^eps_n ln^2 d / p; 0 = 1/lambda_max(K) (stage2 = gd needs "
     "eta_a lambda_max(K) < 2)"},
    {"C_a", HDP_KEY_DOUBLE, P(C_a), "0.05", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL,
     "prefactor > 0 or inf: C_a = c d^eps_n sqrt(p) ln^(q+1) d (q the link's degree)"},
    {"T", HDP_KEY_DOUBLE, P(T), "30", HDP_R_LO_OPEN, 0, 0, NULL,
     "prefactor > 0: T = max(1, round(c d^eps_n)) stage-2 steps, at most 1e8"},
    {"sigma_W", HDP_KEY_DOUBLE, P(sigma_W), "5e-4", HDP_R_LO_CLOSED | HDP_K_IF_GIVEN, 0, 0,
     NULL,
     "prefactor >= 0: sigma_W = c sqrt(d^(1+eps_n)/n) ln^(q+3) d (0 = no stage-1 noise)"},
    {"eta_W", HDP_KEY_DOUBLE, P(eta_W), "1", HDP_R_LO_OPEN, 0, 0, NULL,
     "prefactor > 0: eta_W = c d^(3 eps_n/2) sqrt(p)"},
    {"C_W", HDP_KEY_DOUBLE, P(C_W), "4", HDP_R_LO_OPEN, 0, 0, NULL,
     "stage-1 per-sample, per-neuron clipping C_W = c sqrt(d/p) (not in the single-index notes)"},
    {"norm_floor", HDP_KEY_DOUBLE, P(norm_floor), "0.25", HDP_R_LO_OPEN, 0, 0, NULL,
     "stage-1 normalisation w/max(||w||, R), R = c eta_W n 2/sqrt(p) (bounds the sensitivity)"},
    {"epsilon", HDP_KEY_DOUBLE, P(epsilon), "4", HDP_R_LO_OPEN | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0,
     NULL,
     "stage-2 target epsilon > 0 or inf (no stage-2 noise); stage 1 spends what sigma_W gives "
     "on top (give epsilon or epsilon_total, not both)"},
    {"epsilon_total", HDP_KEY_DOUBLE, P(epsilon_total), "0",
     HDP_R_LO_CLOSED | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0, NULL,
     "total target epsilon > 0 or inf of both stages at si.delta: one zCDP budget split by "
     "stage1_share, which sets sigma_W and sigma_a; 0 = not used (si.epsilon: stage 2 only)"},
    {"stage1_share", HDP_KEY_DOUBLE, P(stage1_share), "0.5", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1,
     NULL,
     "share in (0, 1) of the total zCDP budget rho_z spent on stage 1 (with epsilon_total)"},
    {"delta", HDP_KEY_DOUBLE, P(delta), "0", HDP_R_LO_CLOSED | HDP_R_HI_OPEN, 0, 1, NULL,
     "delta in [0, 1); 0 = 1/n"},
    {"stage2", HDP_KEY_ENUM, P(stage2), "gd", 0, 0, 0, si_stage2_names,
     "stage 2: gd (DP-GD, clipped) | ou (the exact OU process, unclipped)"},
};

/* Products of sizes that size one allocation (core/schema.h). */
static hdp_status si_finalize(hdp_model *m, hdp_error *err)
{
    const hdp_si_keys *q = hdp_si_keys_of(m);
    double cells;
    double sn = (double)q->n, sd = (double)q->d, sp = (double)q->p;
    double st = (double)q->test_size;
    /* each message names the larger of d and p and the matrix it sizes */
    if ((cells = sn * fmax(sd, sp)) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "si", "n", sn, sd > sp ? "si.d" : "si.p", fmax(sd, sp), cells,
                                 sd > sp ? "the data matrix (n x d)" : "the feature matrix (n x p)",
                                 err);
    if ((cells = st * fmax(sd, sp)) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "si", "test_size", st, sd > sp ? "si.d" : "si.p",
                                 fmax(sd, sp), cells,
                                 sd > sp ? "the test data (test_size x d)"
                                         : "the test features (test_size x p)",
                                 err);
    if ((cells = sp * sd) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "si", "p", sp, "si.d", sd, cells, "the first layer (d x p)",
                                 err);
    if ((cells = sp * sp) > HDP_MODEL_MAX_CELLS)
        return hdp_model_fail_key(m, "si", "p", err,
                                  "p = %.0f needs the feature Gram matrix (p x p) of %.3g numbers, "
                                  "more than the %.0e accepted (%.1f GB): make p smaller",
                                  sp, cells, HDP_MODEL_MAX_CELLS, HDP_MODEL_MAX_CELLS * 8 / 1e9);
    return HDP_OK;
}

const hdp_schema_section hdp_si_section = {"si", keys, HDP_SCHEMA_NKEYS(keys),
                                           sizeof(hdp_si_keys), si_finalize};

const hdp_si_keys *hdp_si_keys_of(const hdp_model *m)
{
    return hdp_model_section_const(m, &hdp_si_section);
}
