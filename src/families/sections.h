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

extern const hdp_schema_section hdp_rf_section;
extern const hdp_schema_section hdp_dpgd_section;
extern const hdp_schema_section hdp_nc_section;
extern const hdp_schema_section hdp_kl_section;
extern const hdp_schema_section hdp_si_section;
extern const hdp_schema_section hdp_net_section;

#endif
