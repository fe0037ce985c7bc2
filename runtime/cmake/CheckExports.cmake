# Checks that a shared library exports only the dlc_* C API, the OpenMP entry
# points generated code calls (__kmpc_*) and compiler-rt's f32-to-bf16
# conversion (__truncsfbf2, which LLVM calls on CPUs without bf16).
#   cmake -DNM=<nm> -DLIB=<library> -P CheckExports.cmake

execute_process(
  COMMAND "${NM}" -D --defined-only "${LIB}"
  OUTPUT_VARIABLE symbols
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIB}")
endif()

string(REPLACE "\n" ";" lines "${symbols}")
set(exported 0)
set(unexpected)
foreach(line IN LISTS lines)
  # "<address> <type> <name>[@version]"
  if(line MATCHES "^[0-9a-fA-F]+ +([A-Za-z]) +([^@ ]+)")
    set(type "${CMAKE_MATCH_1}")
    set(name "${CMAKE_MATCH_2}")
    if(type STREQUAL "A") # Version nodes.
      continue()
    endif()
    if(name MATCHES "^(dlc_|__kmpc_)" OR name STREQUAL "__truncsfbf2")
      math(EXPR exported "${exported} + 1")
    else()
      list(APPEND unexpected "${name}")
    endif()
  endif()
endforeach()

if(unexpected)
  list(JOIN unexpected "\n  " text)
  message(FATAL_ERROR "${LIB} exports symbols outside the C API:\n  ${text}")
endif()
if(exported EQUAL 0)
  message(FATAL_ERROR "${LIB} exports no dlc_* symbol")
endif()
message(STATUS "${LIB}: ${exported} dlc_* symbols exported, nothing else")
