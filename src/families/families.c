/*
 * families.c — the model families' sections of the model files, in the order of the files
 * and of `hdpsgd keys`. Core parses, checks and documents them through this table
 * (core/schema.h) without knowing any family: a family adds its section here, and its
 * struct to the sum below (each section's values live in its slice of hdp_model.family).
 */
#include "families/sections.h"
#include "hdpsgd/kl.h"
#include "hdpsgd/nc.h"
#include "hdpsgd/net.h"
#include "hdpsgd/rf.h"
#include "hdpsgd/si.h"

const hdp_schema_section *const hdp_family_sections[] = {
    &hdp_rf_section, &hdp_dpgd_section, &hdp_nc_section, &hdp_kl_section, &hdp_si_section,
    &hdp_net_section, NULL};

/* Every section's slice of hdp_model.family (core/schema.h) */
_Static_assert(HDP_SCHEMA_SLICE(sizeof(hdp_rf_keys)) + HDP_SCHEMA_SLICE(sizeof(hdp_dpgd_keys)) +
                       HDP_SCHEMA_SLICE(sizeof(hdp_nc_keys)) +
                       HDP_SCHEMA_SLICE(sizeof(hdp_kl_keys)) +
                       HDP_SCHEMA_SLICE(sizeof(hdp_si_keys)) +
                       HDP_SCHEMA_SLICE(sizeof(hdp_net_keys)) <=
                   HDP_MODEL_FAMILY_BYTES,
               "the families' sections do not fit in hdp_model.family: raise "
               "HDP_MODEL_FAMILY_BYTES");
