# Installs the built runtime into a scratch prefix, puts a stand-in dlc
# compiler in <prefix>/bin, and builds and runs a consumer project that uses
# find_package(dlc) and dlc_add_model.
#
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DSOURCE_DIR=... -DGENERATOR=...
#         -DC_COMPILER=... -DCONFIG=... -P RunPackageTest.cmake

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${rc}): ${command}\n${out}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}"
    ${config_args})

foreach(file include/dlc/dlc_runtime.h include/dlc/dlc_io.h
             lib/cmake/dlc/dlcConfig.cmake lib/cmake/dlc/dlcConfigVersion.cmake
             lib/cmake/dlc/dlcTargets.cmake lib/cmake/dlc/dlcAddModel.cmake)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()

set(INCLUDE_DIR "${prefix}/include")
configure_file("${SOURCE_DIR}/fake_dlc.sh.in" "${prefix}/bin/dlc" @ONLY)
file(CHMOD "${prefix}/bin/dlc" PERMISSIONS OWNER_READ OWNER_WRITE
     OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/consumer" -B "${WORK_DIR}/build"
    -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}"
    "-DCMAKE_C_COMPILER=${C_COMPILER}" -DCMAKE_BUILD_TYPE=Release)
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/app")
message(STATUS "${output}")
