# The version with the git revision, "VERSION (git REV)" with REV from
# `git describe --always --dirty` (just VERSION outside a checkout), in HDPSGD_VERSION_FULL.
# Inputs: HDP_GV_SRC (the source tree), HDP_GV_VERSION (the project's version).
# Included by CMakeLists.txt at the configure step (for hdpsgd/version.h), and run at every
# build with HDP_GV_OUT (cmake -P) to write the one C file that holds the version the
# outputs record: configure_file rewrites it only when the string changed, so an unchanged
# tree recompiles nothing and a new commit recompiles this one file and relinks.
set(HDPSGD_VERSION_FULL "${HDP_GV_VERSION}")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${HDP_GV_SRC}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty
                  WORKING_DIRECTORY ${HDP_GV_SRC}
                  OUTPUT_VARIABLE HDP_GIT_REV OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE HDP_GIT_RC)
  if(HDP_GIT_RC EQUAL 0 AND HDP_GIT_REV)
    set(HDPSGD_VERSION_FULL "${HDP_GV_VERSION} (git ${HDP_GIT_REV})")
  endif()
endif()
if(HDP_GV_OUT)
  file(WRITE "${HDP_GV_OUT}.tmp"
       "/* generated at build time by cmake/hdpsgdGitVersion.cmake: the version the outputs record */\n"
       "#include \"core/build_version.h\"\n"
       "const char hdp_build_version[] = \"${HDPSGD_VERSION_FULL}\";\n")
  configure_file("${HDP_GV_OUT}.tmp" "${HDP_GV_OUT}" COPYONLY)
endif()
