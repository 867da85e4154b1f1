# siconos.cmake -- optional Siconos numerics LCP oracle for tests and benchmarks.
#
#   include(${CMAKE_CURRENT_SOURCE_DIR}/siconos.cmake)      # from tests/CMakeLists.txt (any dir works)
#   if(SVI_HAVE_SICONOS)
#     target_link_libraries(my_test PRIVATE svi_siconos_oracle)   # also defines SVI_HAVE_SICONOS=1
#   endif()
#
# Defines
#   SVI_HAVE_SICONOS          ON/OFF (also ON only if a tiny program calling lcp_lexicolemke links)
#   svi_siconos_oracle        STATIC library from tests/siconos_oracle.c; PUBLIC include dir = tests/
#                             (siconos_oracle.h needs no Siconos header), INTERFACE definition
#                             SVI_HAVE_SICONOS=1, links libsiconos_numerics.
#   SVI_SICONOS_LSAN_OPTIONS  "suppressions=<file>" for LSAN_OPTIONS: Siconos 4.4's lcp_enum leaks a
#                             32-byte struct per call (enum_init); use it in test ENVIRONMENT under
#                             SVI_SANITIZE.
#
# Honours option SVI_SICONOS (OFF = skip everything).  Siconos' own package config
# (find_package(siconos)) is NOT used by default: on Debian with only libsiconos-numerics-dev it is a
# hard configure error (it set_and_check()s /usr/bin/siconos and imports kernel/io/... libraries that
# are not installed, even with QUIET), and it also sets CMAKE_CXX_STANDARD and CMAKE_MODULE_PATH
# globally.  SVI_SICONOS_USE_CONFIG=ON uses it (complete Siconos installs only).

if(TARGET svi_siconos_oracle)   # included a second time
  set(SVI_HAVE_SICONOS ON)
  set(SVI_SICONOS_LSAN_OPTIONS "suppressions=${SVI_SICONOS_LSAN_SUPP}")
else()
  set(SVI_HAVE_SICONOS OFF)
  set(SVI_SICONOS_LSAN_OPTIONS "")

  if(NOT DEFINED SVI_SICONOS OR SVI_SICONOS)
    option(SVI_SICONOS_USE_CONFIG "Locate Siconos via its CMake package config (complete installs only)" OFF)
    set(_svi_sic_target "")

    if(SVI_SICONOS_USE_CONFIG)
      find_package(siconos CONFIG)
      if(TARGET Siconos::numerics)
        set(_svi_sic_target Siconos::numerics)
      endif()
    endif()

    if(NOT _svi_sic_target)
      find_path(SICONOS_NUMERICS_INCLUDE_DIR NAMES LCP_Solvers.h lcp_cst.h
                PATH_SUFFIXES siconos/numerics include/siconos/numerics
                DOC "Siconos numerics headers (.../siconos/numerics)")
      find_path(SICONOS_CONFIG_INCLUDE_DIR NAMES SiconosConfig.h
                PATH_SUFFIXES siconos include/siconos
                DOC "Directory holding SiconosConfig.h (.../siconos)")
      find_library(SICONOS_NUMERICS_LIBRARY NAMES siconos_numerics
                   DOC "libsiconos_numerics")
      mark_as_advanced(SICONOS_NUMERICS_INCLUDE_DIR SICONOS_CONFIG_INCLUDE_DIR SICONOS_NUMERICS_LIBRARY)
      if(SICONOS_NUMERICS_INCLUDE_DIR AND SICONOS_CONFIG_INCLUDE_DIR AND SICONOS_NUMERICS_LIBRARY)
        if(NOT TARGET svi::siconos_numerics)
          add_library(svi::siconos_numerics UNKNOWN IMPORTED GLOBAL)
          set_target_properties(svi::siconos_numerics PROPERTIES
            IMPORTED_LOCATION "${SICONOS_NUMERICS_LIBRARY}"
            INTERFACE_INCLUDE_DIRECTORIES "${SICONOS_NUMERICS_INCLUDE_DIR};${SICONOS_CONFIG_INCLUDE_DIR}")
        endif()
        set(_svi_sic_target svi::siconos_numerics)
      endif()
    endif()

    if(_svi_sic_target)
      # Make sure the headers compile under C11 and the library links (cached after the first run).
      include(CheckCSourceCompiles)
      include(CMakePushCheckState)
      cmake_push_check_state(RESET)
      get_target_property(_svi_sic_inc ${_svi_sic_target} INTERFACE_INCLUDE_DIRECTORIES)
      set(CMAKE_REQUIRED_INCLUDES ${_svi_sic_inc})
      set(CMAKE_REQUIRED_LIBRARIES ${_svi_sic_target})
      set(CMAKE_REQUIRED_QUIET ON)
      check_c_source_compiles([=[
#include "LCP_Solvers.h"
#include "LinearComplementarityProblem.h"
#include "NumericsMatrix.h"
#include "SolverOptions.h"
#include "lcp_cst.h"
int main(void) {
  SolverOptions* o = solver_options_create(SICONOS_LCP_LEMKE);
  void (*f)(LinearComplementarityProblem*, double*, double*, int*, SolverOptions*) = lcp_lexicolemke;
  void (*g)(LinearComplementarityProblem*, double*, double*, int*, SolverOptions*) = lcp_enum;
  int r = (o != 0) + (f != 0) + (g != 0) + (NM_create != 0);
  solver_options_delete(o);
  return r == 4 ? 0 : 1;
}
]=] SVI_SICONOS_LINKS)
      cmake_pop_check_state()

      if(SVI_SICONOS_LINKS)
        set(SVI_HAVE_SICONOS ON)
        add_library(svi_siconos_oracle STATIC ${CMAKE_CURRENT_LIST_DIR}/siconos_oracle.c)
        target_include_directories(svi_siconos_oracle PUBLIC ${CMAKE_CURRENT_LIST_DIR})
        target_compile_definitions(svi_siconos_oracle INTERFACE SVI_HAVE_SICONOS=1)
        find_library(_svi_sic_libm m)
        target_link_libraries(svi_siconos_oracle PRIVATE ${_svi_sic_target})
        if(_svi_sic_libm)
          target_link_libraries(svi_siconos_oracle PRIVATE ${_svi_sic_libm})
        endif()
        set(SVI_SICONOS_LSAN_SUPP "${CMAKE_BINARY_DIR}/svi_siconos_lsan.supp"
            CACHE INTERNAL "LeakSanitizer suppressions for Siconos")
        file(WRITE "${SVI_SICONOS_LSAN_SUPP}" "leak:enum_init\n")
        set(SVI_SICONOS_LSAN_OPTIONS "suppressions=${SVI_SICONOS_LSAN_SUPP}")
        message(STATUS "Siconos numerics LCP oracle: ON (${_svi_sic_target})")
      else()
        message(STATUS "Siconos numerics LCP oracle: OFF (found, but a test program does not build/link)")
      endif()
    else()
      message(STATUS "Siconos numerics LCP oracle: OFF (libsiconos-numerics-dev not found)")
    endif()
  else()
    message(STATUS "Siconos numerics LCP oracle: OFF (SVI_SICONOS=OFF)")
  endif()
endif()
