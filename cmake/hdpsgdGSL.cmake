# hdpsgdGSL.cmake — the imported target hdpsgd_deps::gsl: GSL without its reference CBLAS.
#
# GSL's pkg-config file puts -lgslcblas on the link line (and CMake's GSL::gsl brings
# GSL::gslcblas): the slow reference cblas_* of libgslcblas would then win over OpenBLAS's.
# GSL documents linking another CBLAS instead (-lgsl -lopenblas, without -lgslcblas). This
# target is libgsl alone, with GSL's include directories and flags; the library links it
# beside OpenBLAS, whose cblas_* then serve both GSL and the library's own BLAS calls (at
# run time libgslcblas, a dependency of libgsl on some systems, comes after OpenBLAS in the
# search order and serves nothing). Included by CMakeLists.txt and by the installed
# hdpsgdConfig.cmake, which recreates the target for the user's project.
if(NOT TARGET hdpsgd_deps::gsl)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(HDP_GSL QUIET gsl)
  if(HDP_GSL_FOUND)
    find_library(HDP_GSL_LIBRARY NAMES gsl HINTS ${HDP_GSL_LIBRARY_DIRS})
  endif()
  if(NOT HDP_GSL_FOUND OR NOT HDP_GSL_LIBRARY)
    message(FATAL_ERROR "gsl not found: apt-get install libgsl-dev (or run scripts/install-deps.sh)")
  endif()
  add_library(hdpsgd_deps::gsl UNKNOWN IMPORTED)
  set_target_properties(hdpsgd_deps::gsl PROPERTIES IMPORTED_LOCATION "${HDP_GSL_LIBRARY}")
  if(HDP_GSL_INCLUDE_DIRS)
    set_target_properties(hdpsgd_deps::gsl PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${HDP_GSL_INCLUDE_DIRS}")
  endif()
  if(HDP_GSL_CFLAGS_OTHER)
    set_target_properties(hdpsgd_deps::gsl PROPERTIES INTERFACE_COMPILE_OPTIONS "${HDP_GSL_CFLAGS_OTHER}")
  endif()
endif()
