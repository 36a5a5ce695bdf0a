/*
 * hdpsgd/model.h — the model description shared by the theory side (ODE)
 * and the simulation side (Monte Carlo): schema v1 of the INI model files.
 *
 * A model is built in three steps:
 *   hdp_model_init(&m);                       built-in defaults (models/default.ini)
 *   hdp_model_load_file(&m, "x.ini", &err);   keys from a file (inih)
 *   hdp_model_set(&m, "clip.c=0.3", &err);    command-line overrides
 *   hdp_model_finalize(&m, &err);             range checks, n from gamma, files read
 * Every key remembers where it was set (file and line, or --set), so that
 * range errors name the place.
 *
 * Sections. The core's sections ([data], [clip], [privacy], [schedule], [sgd], [ode],
 * [sim], [sde], [validate]) are the named fields of hdp_model below. The model families' sections
 * ([rf] and [dpgd], [nc], [kl], [si]) belong to their families: each family declares its
 * keys, enums and checks (src/families/<name>_keys.c, registered in families.c) and its
 * values are read through its accessor, hdp_rf_keys_of, hdp_dpgd_keys_of (hdpsgd/rf.h),
 * hdp_nc_keys_of (nc.h), hdp_kl_keys_of (kl.h), hdp_si_keys_of (si.h). Parsing, defaults,
 * messages, hdp_model_write_ini/_meta and the documentation treat every section alike.
 *
 * Conventions (docs/theory.md §0):
 *   - gamma = d/n; n = round(d/gamma) when gamma is given;
 *   - rho is the privacy parameter of docs/theory.md §1, §6 (the ratio of sensitivity to noise
 *     of the accountant): the output is (rho^2/2)-zCDP; rho = inf means no private noise. The budget is given as exactly one
 *     of privacy.rho, privacy.rho_zcdp (= rho^2/2) or privacy.epsilon with privacy.delta
 *     (calibrated as hdp_zcdp_from_epsilon does: Canonne-Kamath-Steinke); finalize fills
 *     all of them;
 *   - clip.c is the clipping constant: gradients are clipped at c*sqrt(d);
 *   - clip.feature_norm = B clips every row x to norm B before its gradient (0: off; auto:
 *     the largest B with eta_max B^2 <= 2, the privacy accountant's precondition, §6.1);
 *   - [sgd] sampling = one-pass (the default) uses each of the n rows once, in batches of
 *     sgd.batch = B <= n, one epoch, its private noise tied to the schedule and rho
 *     (noise_multiplier 0); shuffle and poisson take epochs and noise_multiplier;
 *   - the spectrum is normalised to mean 1 (Tr Sigma = d).
 */
#ifndef HDPSGD_MODEL_H
#define HDPSGD_MODEL_H

#include <stdio.h>

#include "hdpsgd/accountant.h"
#include "hdpsgd/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HDP_SPECTRUM_ISOTROPIC = 0,
    HDP_SPECTRUM_POWERLAW,
    HDP_SPECTRUM_TWOLEVEL,
    HDP_SPECTRUM_FILE
} hdp_spectrum_kind;

typedef enum {
    HDP_NOISE_GAUSSIAN = 0,
    HDP_NOISE_STUDENT,
    HDP_NOISE_RADEMACHER,
    HDP_NOISE_NONE,
    HDP_NOISE_LAPLACE,   /* variance data.tau2 */
    HDP_NOISE_UNIFORM,   /* on [-sqrt(3 tau2), sqrt(3 tau2)] */
    HDP_NOISE_MIXTURE,   /* two Gaussians, mean 0; tau2 derived by finalize */
    HDP_NOISE_EMPIRICAL  /* the values of data.noise_file (centred); tau2 derived by finalize */
} hdp_noise_kind;

typedef enum {
    HDP_SCHED_CONSTANT = 0,
    HDP_SCHED_OUTPUT,
    HDP_SCHED_LINEAR_NOISE,
    HDP_SCHED_OPTIMAL,
    HDP_SCHED_TABLE
} hdp_sched_kind;

/* [data] source, target, scale; [sim] rows (docs/theory.md §9) */
typedef enum { HDP_SOURCE_SYNTHETIC = 0, HDP_SOURCE_FILE } hdp_data_source;
typedef enum {
    HDP_TARGET_AUTO = 0,      /* uniform (synthetic), least-squares (file with labels), planted */
    HDP_TARGET_UNIFORM,       /* theta* uniform on the sphere of target_radius */
    HDP_TARGET_POWERLAW,      /* energy in the j-th eigendirection ~ j^(-target_exponent) */
    HDP_TARGET_FILE,          /* one energy per eigenvalue (data.target_file) */
    HDP_TARGET_LEAST_SQUARES, /* file: ridge least squares on the rows, noise = residuals */
    HDP_TARGET_PLANTED        /* file: theta* uniform, labels x^T theta* + z synthesised */
} hdp_target_kind;
typedef enum { HDP_SCALE_TRACE = 0, HDP_SCALE_NONE } hdp_scale_kind;
typedef enum { HDP_ROWS_WITH_REPLACEMENT = 0, HDP_ROWS_WITHOUT_REPLACEMENT } hdp_rows_kind;

/* The longest value of a list key (data.labels_positive), with the NUL. */
#define HDP_LIST_MAX 256

/* A user's data set read and prepared by finalize (hdpsgd/dataset.h), shared by the copies
 * of a model (hdp_model_copy) and released with the last of them. */
struct hdp_data;

/* [ode] solver: auto = DOP853 when the stiffness estimate allows it, CVODE otherwise
 * (and when DOP853 fails); the names in this order */
typedef enum { HDP_ODE_AUTO = 0, HDP_ODE_CVODE, HDP_ODE_DOP853 } hdp_ode_solver_kind;

/* [sgd] sampling: how the rows form batches (the names in this order) */
typedef enum {
    HDP_SAMPLING_ONE_PASS = 0, /* each row once, in consecutive batches of B (the default) */
    HDP_SAMPLING_SHUFFLE,      /* each epoch a random permutation cut into batches of B */
    HDP_SAMPLING_POISSON       /* each step every row with probability q = B/N */
} hdp_sampling_kind;

/* The longest file name a model takes (with the NUL): a longer one is refused, never cut. */
#define HDP_PATH_MAX 1024
/* The longest line of a model file (inih's 200-byte line buffer): a longer line is refused
 * (a file name near HDP_PATH_MAX reads from --set, but cannot be written into a model file). */
#define HDP_MODEL_MAX_LINE 198

/* [ode] bins = auto (see hdpsgd/ode.h) */
#define HDP_BINS_AUTO (-1L)

/* a number key's value auto (clip.feature_norm = auto) */
#define HDP_AUTO_DOUBLE (-1.0)

/* Where a key's value came from: file 0 = the default, 1 = "--set" (line 0), k >= 2 the
 * file named hdp_model.origin_files[k - 2], at line. */
typedef struct {
    int file;
    int line;
} hdp_origin;

/* The number of files a model's keys can come from (a model file; --set is not one). */
#define HDP_MODEL_MAX_FILES 2

/* Upper bound on the number of keys of the schema, all sections (see model.c). */
#define HDP_MODEL_MAX_KEYS 160

/* Bytes of the model families' sections in hdp_model.family (see core/schema.h). */
#define HDP_MODEL_FAMILY_BYTES 1024

/* The texts of a model (the file-name keys spectrum_file, features, labels, test_features,
 * test_labels, target_file, noise_file, sched_file, and source, origin_files) are strings
 * the model owns, each at most HDP_PATH_MAX - 1 bytes, never NULL in a model made by
 * hdp_model_init, _copy or _with ("" when unset: a shared empty text, not allocated).
 * Read them as strings; replace one only through hdp_model_set_text (or hdp_model_set*),
 * which frees the old one; hdp_model_free frees them, hdp_model_copy copies them. */
typedef struct {
    /* [data] */
    long d;                   /* dimension, >= 1 */
    double gamma;             /* d/n; the effective value after finalize */
    long n;                   /* samples = steps; the effective value after finalize */
    long train_size;          /* N synthetic training rows of sgd.sampling = shuffle | poisson
                                 (hdpsgd/finite.h); 0 = none */
    hdp_spectrum_kind spectrum;
    double spectrum_alpha;    /* power law: lambda_j ~ j^(-alpha) */
    double twolevel_fraction; /* fraction f of eigenvalues that are r times the others */
    double twolevel_ratio;    /* r */
    const char *spectrum_file; /* one eigenvalue per line (resolved path) */
    double target_radius;     /* ||theta*|| */
    hdp_noise_kind noise;     /* law of the label noise z */
    double tau2;              /* Var z */
    double noise_df;          /* Student-t degrees of freedom, > 2 */
    hdp_data_source data_source; /* synthetic (Gaussian rows of the spectrum) | file (the rows) */
    const char *features;     /* source = file: N x d rows (.npy, .csv, IDX, gzip) */
    const char *labels;       /* N labels ("" = none) */
    char labels_positive[HDP_LIST_MAX]; /* classes mapped to +1, the rest to -1 ("" = numbers) */
    const char *test_features; /* a held-out set ("" = none) */
    const char *test_labels;
    int center;               /* 1: rows (and labels) centred */
    hdp_scale_kind scale;     /* trace: rows rescaled to mean eigenvalue 1 */
    hdp_target_kind target;   /* the target's shape (auto: from the source) */
    double ridge;             /* least-squares ridge >= 0 */
    double target_exponent;   /* powerlaw target: energy ~ j^(-exponent) */
    const char *target_file;  /* target = file: one energy per eigenvalue */
    double mixture_weight;    /* mixture: weight w in (0,1) of the first component */
    double mixture_mean;      /* mixture: its mean m1 (the second's, -w m1/(1-w), makes mean 0) */
    double mixture_var1, mixture_var2; /* mixture: the components' variances, > 0 */
    const char *noise_file;   /* empirical: one label-noise value per line (resolved path) */
    /* [clip] */
    double c;                 /* clipping constant, > 0 or inf */
    double feature_norm;      /* B: rows clipped to ||x|| <= B before the gradient (docs/theory.md
                                 §6.1); 0 = off, HDP_AUTO_DOUBLE = auto (hdp_feature_norm_bound) */
    /* [privacy] */
    double rho;               /* > 0 or inf; after finalize, from whichever form was given */
    double rho_zcdp;          /* rho^2/2: the zCDP parameter proper (a form of the budget) */
    double epsilon, delta;    /* (epsilon, delta)-DP: a form of the budget (CKS calibration);
                                 after finalize epsilon is the CKS epsilon of rho at delta */
    /* [schedule] */
    hdp_sched_kind sched;
    double eta0;
    double c1, c2, c3;
    const char *sched_file;   /* two columns t, eta (resolved path) */
    /* [sgd] */
    long batch;               /* B >= 1 (the expected batch size under Poisson sampling) */
    long epochs;              /* >= 1; one-pass: 1 */
    hdp_sampling_kind sampling;
    double noise_multiplier;  /* sigma >= 0 of shuffle | poisson; 0 = calibrated by accountant */
    hdp_accountant_kind accountant; /* pld | rdp */
    /* [ode] */
    long bins;                /* 0 = one bin per distinct eigenvalue; HDP_BINS_AUTO */
    double spectrum_tol;      /* bins = auto: relative tolerance on the final risk */
    double rtol, atol;
    long points;              /* output grid size on [0, 1], >= 2 */
    long max_steps;           /* CVODE's mxstep; DOP853's steps in all */
    hdp_ode_solver_kind ode_solver; /* [ode] solver */
    int ode_discrete;         /* [ode] discrete: 1 = the one-step term (docs/theory.md §3.6) */
    /* [sim] */
    long runs;                /* Monte Carlo runs */
    unsigned long long seed;  /* base seed of the random streams */
    double divergence_factor; /* a run diverges when R_exc > factor * max(R(0), P) (sim.h) */
    hdp_rows_kind rows;       /* source = file: rows drawn with replacement, or one pass over a
                                 random permutation (n <= N) */
    /* [sde] */
    double sde_step;          /* Euler-Maruyama step h; 0 = 1/n */
    /* [validate] */
    double rel_tol;           /* pass when max relative deviation <= rel_tol ... */
    double z_tol;             /* ... or every deviation within z_tol standard errors */

    /* The values of the model families' sections ([rf], [dpgd], [nc], [kl], [si]): each
     * registered section owns a slice of this area, read through the family's accessor
     * (hdp_kl_keys_of in hdpsgd/kl.h, ...). Inside the struct, so that a model copied by
     * assignment carries them. */
    union {
        unsigned char bytes[HDP_MODEL_FAMILY_BYTES];
        long double align_ld;
        long long align_ll;
        void *align_p;
    } family;

    /* bookkeeping */
    int finalized;             /* 1 after hdp_model_finalize; cleared by every change through
                                  hdp_model_set*, hdp_model_load_file (see hdp_model_check) */
    const char *source;        /* model file name, or "(built-in default)" */
    int n_given_last;          /* 1 when data.n was set after data.gamma */
    hdp_origin origin[HDP_MODEL_MAX_KEYS]; /* per schema key, all sections in order;
                                              file 0: default */
    const char *origin_files[HDP_MODEL_MAX_FILES]; /* the files origin names ("": none) */
    /* table schedule knots (read by finalize) */
    int table_len;
    double *table_t, *table_eta;
    /* file spectrum (read by finalize) */
    long file_len;
    double *file_lambda;
    /* target = file, synthetic (read by finalize): one energy per eigenvalue, in the order of
     * the eigenvalues as given (the spectrum file's lines, or j = 1..d decreasing) */
    long energy_len;
    double *file_energy;
    /* source = file: the data set read and prepared by finalize (shared by copies) */
    struct hdp_data *data;
    /* arrays given in memory in place of the files (hdp_model_set_data_arrays; shared) */
    struct hdp_data_arrays *arrays;
    /* empirical label noise (read by finalize from noise_file, or set by
     * hdp_model_set_noise_sample): the centred values */
    long noise_len;
    double *noise_values;
} hdp_model;

/* Built-in defaults: the default model (identical to models/default.ini). */
void hdp_model_init(hdp_model *m);

/* Release the memory of the tables read by finalize and of the model's texts (which read ""
 * after it); m may be half-built or zeroed. */
void hdp_model_free(hdp_model *m);

/* Read keys from an INI file. Unknown sections/keys, malformed numbers,
 * duplicate keys: HDP_EINPUT naming file:line and key. */
hdp_status hdp_model_load_file(hdp_model *m, const char *path, hdp_error *err);

/* Apply one override "section.key=value" (origin "--set"). */
hdp_status hdp_model_set(hdp_model *m, const char *assignment, hdp_error *err);

/* Set one key from strings (used by both of the above). where/line name the
 * origin for later messages. */
hdp_status hdp_model_set_key(hdp_model *m, const char *section, const char *key,
                             const char *value, const char *where, int line,
                             hdp_error *err);

/* Check ranges and combinations, derive n and gamma, read the spectrum and
 * schedule files. Must be called once after the last load/set. */
hdp_status hdp_model_finalize(hdp_model *m, hdp_error *err);

/* Empirical label noise from memory instead of data.noise_file (e.g. the residuals of a
 * least-squares fit): sets data.noise = empirical and keeps a centred copy of the n values
 * (checked as the file's are: hdp_noise_sample_check in hdpsgd/clip.h); data.tau2 becomes
 * their variance at finalize. HDP_EINPUT naming `what` when the values are refused. */
hdp_status hdp_model_set_noise_sample(hdp_model *m, const double *z, long n, const char *what,
                                      hdp_error *err);

/* Replace one of a model's texts (&m->sched_file, ...: see hdp_model above) by a copy of
 * value ("" and NULL: the shared empty text), freeing the old one; no check of the value and
 * no other change (hdp_model_set_key is the checked way to set a key). HDP_ENOMEM with a
 * message leaves *field as it was. */
hdp_status hdp_model_set_text(const char **field, const char *value, hdp_error *err);

/* A deep copy of src (its spectrum file and schedule table too) into *dst, which is
 * overwritten without being freed (pass a model that holds no tables or texts: new,
 * initialised or freed). Free the copy with hdp_model_free. HDP_ENOMEM leaves *dst empty (free is safe). */
hdp_status hdp_model_copy(hdp_model *dst, const hdp_model *src, hdp_error *err);

/* *out = m with one key changed and finalized again: key is "section.key", value its text as
 * in a model file (e.g. hdp_model_with(m, "sim.runs", "1000", &out, &err)). m must be
 * finalized and is not changed; the key is checked by the schema's one range check and the
 * model by finalize, and the new value counts as an override (origin "--set"): a form of the
 * privacy budget replaces the form m had. *out is overwritten as by hdp_model_copy; on
 * failure it is left empty (hdp_model_free is safe). The way to change a finalized model:
 * never write its fields. */
hdp_status hdp_model_with(const hdp_model *m, const char *key, const char *value, hdp_model *out,
                          hdp_error *err);

/* What every solver and simulator checks at its entry (HDP_EINPUT with the reason): m is
 * not NULL, was finalized after its last change (hdp_model_set, _set_key, _load_file), every
 * number key of every section holds a value in its schema range (the one range of the key,
 * `hdpsgd keys`), n >= 1 and gamma = d/n, the spectrum file and schedule table loaded when
 * used: a field written directly after finalize is caught here, not by a crash (change a
 * finalized model with hdp_model_with instead). */
hdp_status hdp_model_check(const hdp_model *m, hdp_error *err);

/* HDP_EINPUT naming [sgd] sampling (and epochs) when m is not one pass (sampling = one-pass):
 * what (e.g. "the risk ODE") covers one pass only. */
hdp_status hdp_model_require_one_pass(const hdp_model *m, const char *what, hdp_error *err);

/* Write the model as CSV metadata: a line '# ; model: FILE', then the lines of
 * hdp_model_write_ini each after '# ' ('# [section]', '# key = value'), and after the
 * [privacy] keys a comment '# ; the same budget: rho = ..., rho_zcdp = ..., epsilon = ... at
 * delta = ...'. Removing the leading '# ' of the header's lines gives a model file that
 * hdp_model_load_file reads back to the same model. Every section; _sections: the
 * core's sections and the families' sections named in families (NULL-terminated; NULL:
 * every section). */
void hdp_model_write_meta(const hdp_model *m, FILE *out);
void hdp_model_write_meta_sections(const hdp_model *m, FILE *out, const char *const *families);

/* Write the model as an INI file that hdp_model_load_file accepts, with the same values
 * (file names written absolute; inih reads lines of at most 199 characters and ends a
 * value at " ;", so a file name that long or with " ;" in it does not come back). */
void hdp_model_write_ini(const hdp_model *m, FILE *out);
/* The same, with the core's sections and the families' sections named in families
 * (NULL-terminated list of section names; NULL: every section). Of the forms of the privacy
 * budget only the one given is written (rho when none was), with delta when given. */
void hdp_model_write_ini_sections(const hdp_model *m, FILE *out, const char *const *families);

/* The value of section.key in m as a model file writes it; 0 when there is no such key. */
int hdp_model_value_text(const hdp_model *m, const char *section, const char *key, char *buf,
                         size_t size);

/* Names of the core's enums as they appear in model files (the families' are in their
 * headers: hdp_kl_init_name, ...). */
const char *hdp_spectrum_name(hdp_spectrum_kind k);
const char *hdp_noise_name(hdp_noise_kind k);
const char *hdp_sampling_name(hdp_sampling_kind k);
const char *hdp_sched_name(hdp_sched_kind k);

/* 1 when section.key was set by a file or --set (not left at its default). */
int hdp_model_key_given(const hdp_model *m, const char *section, const char *key);

/* Report a bad value or combination of section.key the way finalize does:
 * "FILE:LINE: [section] key: <message>" (or "MODEL (default value)"); HDP_EINPUT. */
hdp_status hdp_model_fail_key(const hdp_model *m, const char *section, const char *key,
                              hdp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Iterate over the schema, every section (the core's, then the families'), for
 * documentation and completion: returns 0 past the end. help may be NULL. */
int hdp_model_schema_entry(int i, const char **section, const char **key,
                           const char **default_text, const char **help);

#ifdef __cplusplus
}
#endif
#endif
