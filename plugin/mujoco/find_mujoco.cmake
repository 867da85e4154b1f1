# find_mujoco.cmake -- the MuJoCo C SDK svi builds against.
#
# Defines the imported target svi::mujoco (headers + the exact libmujoco.so.<version> file) and
#   SVI_MUJOCO_VERSION   e.g. 4.0.1, read from mjVERSION_HEADER
#   SVI_MUJOCO_LIBRARY   the library file linked (its directory goes into every binary's RPATH)
#   SVI_MUJOCO_PLUGIN_DIR  MuJoCo's own plugin directory, if any
#
# Where the SDK comes from, in this order:
#   -DSVI_MUJOCO_DIR=<dir>  a release archive, a source install or a wheel's mujoco/ folder: a
#                           directory holding include/mujoco/mujoco.h and libmujoco.so* (or lib/).
#   otherwise the `mujoco` package of SVI_PYTHON (default: the project's .venv/bin/python, made
#   by scripts/setup.sh; else python3).  Since 4.0 the wheel is split and the SDK ships in
#   mujoco-core; asking Python where the package lives finds it whichever distribution holds it,
#   and links the very library the Python bindings load: one copy per process, so the plugin
#   registers where Python's mj_loadPluginLibrary and mj_compile look.
#
# The pinned version lives in python/requirements.txt (mujoco-core==X.Y.Z); another version
# builds with a warning.  Older than 3.10.0 is refused: svi uses mj_fullM(m, d, dst) (3.10),
# mjPLUGIN_LIB_INIT(name) (3.7) and the margin/gap semantics of 3.9 (gap = detection band beyond
# the force threshold), which the bundled models rely on.

set(SVI_MUJOCO_DIR "" CACHE PATH
    "MuJoCo SDK directory (include/mujoco/mujoco.h + libmujoco.so*); empty = the mujoco package of SVI_PYTHON")
set(SVI_PYTHON "" CACHE FILEPATH
    "Python whose mujoco package provides the SDK; empty = .venv/bin/python, else python3")

set(_svi_mj_dir "${SVI_MUJOCO_DIR}")
if(NOT _svi_mj_dir)
  set(_svi_py "${SVI_PYTHON}")
  if(NOT _svi_py)
    if(EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
      set(_svi_py "${PROJECT_SOURCE_DIR}/.venv/bin/python")
    else()
      find_program(_svi_py NAMES python3 python)
    endif()
  endif()
  if(_svi_py)
    execute_process(
      COMMAND "${_svi_py}" -c
        "import importlib.util as u; s = u.find_spec('mujoco'); print(list(s.submodule_search_locations)[0])"
      OUTPUT_VARIABLE _svi_mj_dir OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _svi_rc ERROR_QUIET)
    if(NOT _svi_rc EQUAL 0)
      set(_svi_mj_dir "")
    endif()
  endif()
  if(NOT _svi_mj_dir)
    message(FATAL_ERROR
      "svi: MuJoCo not found. Run ./scripts/setup.sh (installs the pinned MuJoCo wheel into .venv), "
      "or pass -DSVI_MUJOCO_DIR=<dir with include/mujoco/mujoco.h and libmujoco.so> "
      "or -DSVI_PYTHON=<a python with the mujoco package>.")
  endif()
  set(SVI_PYTHON_USED "${_svi_py}")
endif()

find_path(SVI_MUJOCO_INCLUDE_DIR mujoco/mujoco.h PATHS "${_svi_mj_dir}/include" NO_DEFAULT_PATH)
file(GLOB _svi_mj_libs "${_svi_mj_dir}/libmujoco.so.*" "${_svi_mj_dir}/lib/libmujoco.so.*"
                       "${_svi_mj_dir}/libmujoco.so" "${_svi_mj_dir}/lib/libmujoco.so")
list(SORT _svi_mj_libs)
set(SVI_MUJOCO_LIBRARY "")
foreach(_l IN LISTS _svi_mj_libs)
  if(NOT SVI_MUJOCO_LIBRARY AND NOT IS_SYMLINK "${_l}")
    set(SVI_MUJOCO_LIBRARY "${_l}")
  endif()
endforeach()
if(NOT SVI_MUJOCO_LIBRARY AND _svi_mj_libs)
  list(GET _svi_mj_libs 0 SVI_MUJOCO_LIBRARY)
endif()
if(NOT SVI_MUJOCO_INCLUDE_DIR OR NOT SVI_MUJOCO_LIBRARY)
  message(FATAL_ERROR "svi: ${_svi_mj_dir} holds no MuJoCo SDK (need include/mujoco/mujoco.h and libmujoco.so*)")
endif()

file(STRINGS "${SVI_MUJOCO_INCLUDE_DIR}/mujoco/mujoco.h" _svi_vline REGEX "#define mjVERSION_HEADER")
string(REGEX MATCH "[0-9]+" _svi_vnum "${_svi_vline}")
if(_svi_vnum LESS 1000)   # 2.2.2 ... 3.4.0: major*100 + minor*10 + patch
  math(EXPR _svi_maj "${_svi_vnum} / 100")
  math(EXPR _svi_min "(${_svi_vnum} / 10) % 10")
  math(EXPR _svi_pat "${_svi_vnum} % 10")
else()                    # 3.5.0 on: major*10^6 + minor*10^3 + patch
  math(EXPR _svi_maj "${_svi_vnum} / 1000000")
  math(EXPR _svi_min "(${_svi_vnum} / 1000) % 1000")
  math(EXPR _svi_pat "${_svi_vnum} % 1000")
endif()
set(SVI_MUJOCO_VERSION "${_svi_maj}.${_svi_min}.${_svi_pat}")
if(SVI_MUJOCO_VERSION VERSION_LESS 3.10.0)
  message(FATAL_ERROR "svi: MuJoCo ${SVI_MUJOCO_VERSION} at ${_svi_mj_dir} is too old: svi needs >= 3.10.0 "
                      "(plugin API with named mjPLUGIN_LIB_INIT, mj_fullM(m, d, dst), margin/gap semantics of 3.9)")
endif()

file(STRINGS "${PROJECT_SOURCE_DIR}/python/requirements.txt" _svi_pin REGEX "^mujoco-core==")
string(REGEX REPLACE "^mujoco-core==" "" SVI_MUJOCO_PINNED "${_svi_pin}")
if(NOT SVI_MUJOCO_VERSION VERSION_EQUAL SVI_MUJOCO_PINNED)
  message(WARNING "svi: building against MuJoCo ${SVI_MUJOCO_VERSION}; the tested version is ${SVI_MUJOCO_PINNED} "
                  "(python/requirements.txt)")
endif()
message(STATUS "svi: MuJoCo ${SVI_MUJOCO_VERSION}: ${SVI_MUJOCO_LIBRARY}")

if(EXISTS "${_svi_mj_dir}/plugin")
  set(SVI_MUJOCO_PLUGIN_DIR "${_svi_mj_dir}/plugin")
endif()

add_library(svi::mujoco SHARED IMPORTED)
set_target_properties(svi::mujoco PROPERTIES
  IMPORTED_LOCATION "${SVI_MUJOCO_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${SVI_MUJOCO_INCLUDE_DIR}")
