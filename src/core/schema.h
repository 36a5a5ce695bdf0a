/*
 * schema.h — the sections of the model files (internal to the library).
 *
 * A model file is a list of sections ([data], [clip], ..., [kl], [si]), each a table of
 * keys with a type, a default written as text, a range, accepted names (enums) and a help
 * line. Core parses, checks, prints and documents every section through this one type
 * (schema.c, model.c) and knows the sections of no model family: the core's own sections
 * ([data] ... [validate]) are listed in model.c, the families' sections in the families
 * layer's table hdp_family_sections (src/families/families.c), which core reaches only
 * through the declaration below. Adding a family's section is one entry in that table.
 *
 * Storage. A core section's keys are named fields of hdp_model (offsets from the model).
 * A family section's keys are fields of the family's own struct (hdp_kl_keys, ...),
 * stored in the section's slice of the model's byte area m->family: the slices follow
 * each other in the table's order, each rounded up to HDP_SCHEMA_ALIGN bytes. The area is
 * inside hdp_model, so that a model copied by assignment copies every section's values.
 * The family reads them through its typed accessor (hdp_kl_keys_of), built on
 * hdp_model_section.
 */
#ifndef HDPSGD_CORE_SCHEMA_H
#define HDPSGD_CORE_SCHEMA_H

#include <stddef.h>

#include "hdpsgd/model.h"

typedef enum {
    HDP_KEY_LONG,
    HDP_KEY_DOUBLE,
    HDP_KEY_ENUM,
    HDP_KEY_PATH,
    HDP_KEY_SEED,
    HDP_KEY_LIST
} hdp_key_type;

/* range flags of a number key */
enum {
    HDP_R_LO_OPEN = 1,   /* value > lo */
    HDP_R_LO_CLOSED = 2, /* value >= lo */
    HDP_R_HI_OPEN = 4,   /* value < hi */
    HDP_R_HI_CLOSED = 8, /* value <= hi */
    HDP_R_INF = 16,      /* "inf" accepted */
    HDP_R_AUTO = 32,     /* "auto" accepted, stored as HDP_BINS_AUTO (-1, HDP_KEY_LONG) or
                            HDP_AUTO_DOUBLE (-1.0, HDP_KEY_DOUBLE) */
    HDP_K_IF_GIVEN = 64, /* written to model files (write_ini, write_meta) only when a file or
                            --set gave it: one of keys that exclude each other, where
                            whether it was given matters (T or CT of [dpgd], ...) */
    HDP_K_RELOAD = 128   /* a change can change what finalize reads from files (the spectrum
                            file, the target and noise files, the data set, the schedule
                            table): hdp_model_with reads them again, else it keeps them */
};

/* One key. Its value lives at offset in the section's storage: a long (HDP_KEY_LONG), a
 * double (HDP_KEY_DOUBLE), an int-sized enum indexing names (HDP_KEY_ENUM), a const char *
 * the model owns, at most HDP_PATH_MAX - 1 bytes (HDP_KEY_PATH, a file name: relative names
 * are resolved against the model file's folder; read it with hdp_schema_text), an unsigned long long (HDP_KEY_SEED), a char array of HDP_LIST_MAX holding
 * a list of decimal numbers separated by commas or blanks, stored as "a,b,c" (HDP_KEY_LIST;
 * "" = none; at most HDP_LIST_ITEMS numbers). */
#define HDP_LIST_ITEMS 64
typedef struct {
    const char *key;
    hdp_key_type type;
    size_t offset;
    const char *def;          /* default, as text (the built-in default model) */
    int flags;                /* HDP_R_* */
    double lo, hi;
    const char *const *names; /* HDP_KEY_ENUM: NULL-terminated accepted names */
    const char *help;
} hdp_schema_key;

typedef struct hdp_schema_section {
    const char *name; /* the [name] of the model file */
    const hdp_schema_key *keys;
    int nkeys;
    /* 0: the keys are fields of hdp_model itself (the core's sections); else the size of
     * the family's struct that holds them, stored in the section's slice of m->family */
    size_t size;
    /* finalize-time checks of the section's combinations and sizes, run after the core's
     * own checks in the table's order (NULL: none); reports a key with
     * hdp_model_fail_key */
    hdp_status (*finalize)(hdp_model *m, hdp_error *err);
} hdp_schema_section;

/* The number of keys of a static table of keys. */
#define HDP_SCHEMA_NKEYS(keys) ((int)(sizeof(keys) / sizeof((keys)[0])))

/* The families' sections, NULL-terminated, in the order of the model files and of
 * `hdpsgd keys`: defined by the families layer (src/families/families.c). */
extern const hdp_schema_section *const hdp_family_sections[];

/* The core's sections ([data] ... [validate]), NULL-terminated (model.c). */
extern const hdp_schema_section *const hdp_core_sections[];

/* Slices of m->family are aligned to this many bytes. */
#define HDP_SCHEMA_ALIGN 16
#define HDP_SCHEMA_SLICE(bytes) \
    (((bytes) + HDP_SCHEMA_ALIGN - 1) / HDP_SCHEMA_ALIGN * HDP_SCHEMA_ALIGN)

/* The storage of a registered family section in m (its struct, to be cast by the family's
 * accessor); NULL for a section that is not registered or has no storage. */
void *hdp_model_section(hdp_model *m, const hdp_schema_section *s);
const void *hdp_model_section_const(const hdp_model *m, const hdp_schema_section *s);

/* ---- the generic machinery of schema.c, used by model.c ---- */

/* A key of the schema: its section, its spec, its index over all sections (the index of
 * hdp_model.origin). */
typedef struct {
    const hdp_schema_section *section;
    const hdp_schema_key *key;
    int index;
} hdp_schema_ref;

/* The i-th key over all sections (core first, then the families'); 0 past the end. */
int hdp_schema_key_at(int i, hdp_schema_ref *ref);
/* The key section.key; 0 when there is none. */
int hdp_schema_find(const char *section, const char *key, hdp_schema_ref *ref);
/* The i-th section (core first); NULL past the end. */
const hdp_schema_section *hdp_schema_section_at(int i);

/* Where a key's value is stored in m. */
void *hdp_schema_value(hdp_model *m, const hdp_schema_ref *ref);
const void *hdp_schema_value_const(const hdp_model *m, const hdp_schema_ref *ref);
/* The text of an HDP_KEY_PATH key whose value is stored at val ("" when none: a zeroed model). */
const char *hdp_schema_text(const void *val);

/* Levenshtein distance of two names, ignoring case (99 for names over 63 characters): the
 * measure of every "did you mean" (keys, sections, and the program's commands and options). */
int hdp_edit_distance(const char *a, const char *b);

/* "did you mean": the closest section.key to an unknown one, the closest section name to
 * an unknown section (NULL when nothing is close). */
int hdp_schema_suggest(const char *section, const char *key, hdp_schema_ref *ref);
const char *hdp_schema_suggest_section(const char *section);

/* The accepted values of a key, as messages say them ("an integer >= 1 and <= 1e+06"). */
void hdp_schema_describe_range(const hdp_schema_key *k, char *buf, size_t size);

/* The schema's range check of number key section.key for a value that did not come from
 * text (a family's spec built in code, whose keys the model files also set): 0 when v is in
 * the key's range, else 1 with why = "K = 1 is out of range: expected an integer >= 2 and
 * <= 1000" (a key that is not a number key of the schema: 1, saying so). The one place
 * where the key's range is written stays its schema row. */
int hdp_schema_out_of_range(const char *section, const char *key, double v, char *why,
                            size_t size);

/* The same for the value key ref holds in m (auto accepted where the key takes it): what
 * hdp_model_check asks of every number key, so that a field written after finalize is caught
 * by the key's one range. */
int hdp_schema_value_out_of_range(const hdp_model *m, const hdp_schema_ref *ref, char *why,
                                  size_t size);

/* The same for every number key of a family's section sec, its values in keys: the
 * section's keys struct, or a struct that begins with its members in their order (a spec
 * built in code). Returns the first key out of range, with why; NULL when all are in range. */
const char *hdp_schema_keys_out_of_range(const hdp_schema_section *sec, const void *keys,
                                         char *why, size_t size);

/* Parse text into the key's storage in m (HDP_EINPUT naming loc, the section and the key,
 * with the accepted range); where/line resolve relative file names. */
hdp_status hdp_schema_parse_value(hdp_model *m, const hdp_schema_ref *ref, const char *value,
                                  const char *loc, const char *where, int line,
                                  hdp_error *err);

/* The numbers of a list key's stored text (HDP_KEY_LIST): their count (at most max). */
int hdp_schema_list_values(const char *text, double *v, int max);

/* v as the shortest of %.15g and %.17g that reads back exactly, into buf (returned). */
const char *hdp_format_exact(double v, char *buf, size_t size);

/* Format the key's value in m as a model file writes it (reads back exactly). */
void hdp_schema_format_value(const hdp_model *m, const hdp_schema_ref *ref, char *buf,
                             size_t size);

/* A decimal number at the start of s (schema.c; the tables of model.c use it too): 1 with
 * the value, 0 not a number, -1 out of range. */
int hdp_schema_parse_decimal_prefix(const char *s, char **end, double *x);

/* Products of size keys that size one allocation, each bounded so that a run cannot ask
 * for more memory than a workstation has (the single keys have bounds in the schema):
 * HDP_MODEL_MAX_CELLS doubles = 1.6 GB. */
#define HDP_MODEL_MAX_CELLS 2.0e8

/* The finalize message of a product of two sizes above HDP_MODEL_MAX_CELLS, on
 * section.k1: "k1 = v1 with k2 = v2 needs <what> of <cells> numbers, more than ...". */
hdp_status hdp_model_too_big(const hdp_model *m, const char *section, const char *k1,
                             double v1, const char *k2, double v2, double cells,
                             const char *what, hdp_error *err);

#endif
