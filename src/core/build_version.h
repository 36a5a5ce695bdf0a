/*
 * build_version.h — the version the outputs record (CSV and JSON headers, --version):
 * "VERSION (git REV)", written at every build by cmake/hdpsgdGitVersion.cmake, so that a
 * rebuild after a commit records the new revision (the public hdpsgd/version.h holds the
 * one of the configure step, for code built against an installed library).
 */
#ifndef HDPSGD_CORE_BUILD_VERSION_H
#define HDPSGD_CORE_BUILD_VERSION_H

extern const char hdp_build_version[];

#endif
