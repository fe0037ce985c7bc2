# dlc_add_model(<target> <model-file>
#               [BATCH <n>] [CPU <name>] [OPTIONS <arg>...])
#
# Compiles a .dlc model at build time and adds it to <target>:
#
#   ${DLC_COMPILER} <model-file> -o <bindir>/<stem>.o
#                   [--batch <n>] [--cpu <name>] [<arg>...]
#
# where <bindir> is CMAKE_CURRENT_BINARY_DIR and <stem> the model file's name
# without its last extension; the compiler writes <stem>.h next to the object.
# The object becomes a source of <target>, <bindir> goes on its include path
# (so `#include "<stem>.h"` works) and it links dlc::runtime.
#
# DLC_COMPILER is the path of the dlc executable (find_package(dlc) sets it to
# the installed one) or, inside the dlc build itself, the name of its target.
# Call dlc_add_model in the directory that defines <target>, and use the
# keyword form of target_link_libraries for <target>.

include_guard(GLOBAL)

function(dlc_add_model target model_file)
  cmake_parse_arguments(PARSE_ARGV 2 _dlc "" "BATCH;CPU" "OPTIONS")
  if(_dlc_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "dlc_add_model: unexpected arguments: ${_dlc_UNPARSED_ARGUMENTS}")
  endif()
  if(_dlc_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR
      "dlc_add_model: ${_dlc_KEYWORDS_MISSING_VALUES} needs a value")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "dlc_add_model: no target named '${target}'")
  endif()
  if(NOT TARGET dlc::runtime)
    message(FATAL_ERROR
      "dlc_add_model: dlc::runtime is not defined (use find_package(dlc))")
  endif()

  if(NOT DLC_COMPILER)
    message(FATAL_ERROR
      "dlc_add_model: DLC_COMPILER is not set; set it to the dlc executable")
  elseif(NOT TARGET "${DLC_COMPILER}" AND
         (NOT EXISTS "${DLC_COMPILER}" OR IS_DIRECTORY "${DLC_COMPILER}"))
    message(FATAL_ERROR
      "dlc_add_model: the dlc compiler '${DLC_COMPILER}' does not exist; "
      "set DLC_COMPILER to the dlc executable")
  endif()
  # A target name in COMMAND and DEPENDS stands for its executable, with a
  # dependency on building it.
  set(compiler "${DLC_COMPILER}")

  get_filename_component(model "${model_file}" ABSOLUTE
    BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "dlc_add_model: model file '${model}' does not exist")
  endif()
  get_filename_component(stem "${model}" NAME_WLE)
  set(object "${CMAKE_CURRENT_BINARY_DIR}/${stem}.o")
  set(header "${CMAKE_CURRENT_BINARY_DIR}/${stem}.h")

  set(args "${model}" -o "${object}")
  if(DEFINED _dlc_BATCH)
    if(NOT _dlc_BATCH MATCHES "^[1-9][0-9]*$")
      message(FATAL_ERROR
        "dlc_add_model: BATCH must be a positive integer, not '${_dlc_BATCH}'")
    endif()
    list(APPEND args --batch "${_dlc_BATCH}")
  endif()
  if(DEFINED _dlc_CPU)
    list(APPEND args --cpu "${_dlc_CPU}")
  endif()
  list(APPEND args ${_dlc_OPTIONS})

  file(RELATIVE_PATH pretty "${CMAKE_BINARY_DIR}" "${object}")
  add_custom_command(
    OUTPUT "${object}" "${header}"
    COMMAND "${compiler}" ${args}
    DEPENDS "${model}" "${compiler}"
    COMMENT "Compiling model ${model_file} to ${pretty}"
    VERBATIM)
  set_source_files_properties("${object}" PROPERTIES
    EXTERNAL_OBJECT TRUE GENERATED TRUE)
  set_source_files_properties("${header}" PROPERTIES GENERATED TRUE)

  target_sources(${target} PRIVATE "${object}" "${header}")
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_BINARY_DIR}")
  target_link_libraries(${target} PRIVATE dlc::runtime)
endfunction()
