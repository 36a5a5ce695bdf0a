# Run at every build (cmake -P): writes OUT, the one C file that holds the version string the
# outputs record, "VERSION (git REV)" with REV from `git describe --always --dirty` at the
# time of the build. configure_file rewrites OUT only when the string changed, so an
# unchanged tree recompiles nothing; a new commit recompiles this one file and relinks.
# Inputs: SRC (the source tree), VERSION (the project's), OUT (the file to write).
set(HDPSGD_VERSION_FULL "${VERSION}")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SRC}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty
                  WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND rev)
    set(HDPSGD_VERSION_FULL "${VERSION} (git ${rev})")
  endif()
endif()
file(WRITE "${OUT}.tmp"
     "/* generated at build time by cmake/hdpsgdGitVersion.cmake: the version the outputs record */\n"
     "#include \"core/build_version.h\"\n"
     "const char hdp_build_version[] = \"${HDPSGD_VERSION_FULL}\";\n")
configure_file("${OUT}.tmp" "${OUT}" COPYONLY)
