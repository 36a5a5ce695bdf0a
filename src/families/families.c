/*
 * families.c — the model families' sections of the model files, in the order of the files
 * and of `hdpsgd keys`. Core parses, checks and documents them through this table
 * (core/schema.h) without knowing any family: a family adds its section here.
 */
#include "core/schema.h"

const hdp_schema_section *const hdp_family_sections[] = {NULL};
