/*
 * sections.h — the model families' sections of the model files (internal to the library):
 * each family defines its own in src/families/<name>_keys.c (its keys, enum names,
 * finalize-time checks and the accessor of its values) and families.c lists them for the
 * core (core/schema.h).
 */
#ifndef HDPSGD_FAMILIES_SECTIONS_H
#define HDPSGD_FAMILIES_SECTIONS_H

#include "core/schema.h"

#include <stddef.h>

/* A schema row of a key of a family's list (hdpsgd/<family>.h: X(field, ctype, type, default,
 * flags, lo, hi, names, help)), the field of the keys struct HDP_SECTION_KEYS that the file
 * defines before it expands the list: {HDP_NC_KEYS(HDP_SECTION_ROW)}. */
#define HDP_SECTION_ROW(f, ctype, type, def, flags, lo, hi, names, help)                      \
    {#f, HDP_KEY_##type, offsetof(HDP_SECTION_KEYS, f), def, flags, lo, hi, names, help},

/* A family's section [name] of the keys of LIST (struct HDP_SECTION_KEYS): the schema rows,
 * the section hdp_<name>_section with its finalize-time check (NULL: none), and the accessor
 * hdp_<name>_keys_of that hdpsgd/<family>.h declares. */
#define HDP_SECTION_DEFINE(name, LIST, finalize)                                                \
    static const hdp_schema_key name##_keys[] = {LIST(HDP_SECTION_ROW)};                       \
    const hdp_schema_section hdp_##name##_section = {                                          \
        #name, name##_keys, HDP_SCHEMA_NKEYS(name##_keys), sizeof(HDP_SECTION_KEYS), finalize}; \
    const HDP_SECTION_KEYS *hdp_##name##_keys_of(const hdp_model *m)                            \
    {                                                                                          \
        return hdp_model_section_const(m, &hdp_##name##_section);                              \
    }

extern const hdp_schema_section hdp_rf_section;
extern const hdp_schema_section hdp_dpgd_section;
extern const hdp_schema_section hdp_nc_section;
extern const hdp_schema_section hdp_kl_section;
extern const hdp_schema_section hdp_si_section;
extern const hdp_schema_section hdp_net_section;

#endif
