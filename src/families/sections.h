/*
 * sections.h — the model families' sections of the model files (internal to the library):
 * each family defines its own in src/families/<name>_keys.c (its keys, enum names,
 * finalize-time checks and the accessor of its values) and families.c lists them for the
 * core (core/schema.h).
 */
#ifndef HDPSGD_FAMILIES_SECTIONS_H
#define HDPSGD_FAMILIES_SECTIONS_H

#include "core/schema.h"

extern const hdp_schema_section hdp_rf_section;
extern const hdp_schema_section hdp_dpgd_section;
extern const hdp_schema_section hdp_nc_section;
extern const hdp_schema_section hdp_kl_section;
extern const hdp_schema_section hdp_si_section;
extern const hdp_schema_section hdp_net_section;

#endif
