# musa_linkcheck() and musa_stubgen(): one line each in a project's CMakeLists.txt.
# Available after find_package(MusaLinkcheck CONFIG) or add_subdirectory(<musa-linkcheck checkout>).
#
#   musa_linkcheck(TARGET <t> [WITH <lib-or-target>...] [BASELINE <file>] [FORMAT text|json]
#                  [OUTPUT <file>] [FAIL_ON any|new|none] [ARGS <musa-linkcheck options>...])
# A post-build check: after <t> links, musa-linkcheck analyses it as its load binds it (its
# dependencies too: an SDK library that lacks a driver symbol fails the import as surely; ARGS
# --only-named checks <t> alone); unresolved symbols fail the build with the diagnosis in the build log. The JSON report is kept at <binary dir>/musa-linkcheck/<t>.json
# (musa_stubgen reads it). With BASELINE, only findings not in the baseline fail (FAIL_ON new).
#
#   musa_stubgen(TARGET <t> OUTPUT_DIR <dir> [STYLE throw|abort|return-error] [SDK_HOME <dir>]
#                [MAPPING <path>] [CUDA_HOME <dir>] [STUB <classification>...] [ARGS <options>...])
# Stubs in the same build: <t>'s objects are linked once more as a probe shared library (undefined
# symbols allowed) before <t> links; musa-stubgen turns the probe's report into
# <dir>/unimplemented_functions.cpp/.h, which are compiled and linked into <t> with the stub runtime.
# The first `cmake --build` passes; the cost is one extra link and no extra compile. What stubs cannot
# fix still fails the musa_linkcheck() gate.

set(_MUSA_LINKCHECK_STEP_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/MusaStubgenStep.cmake" CACHE INTERNAL "")

function(_musa_linkcheck_require_target fn target)
  if(NOT target OR NOT TARGET ${target})
    message(FATAL_ERROR "${fn}: TARGET must name an existing target (got '${target}')")
  endif()
endfunction()

function(_musa_linkcheck_report_path target out)
  get_target_property(dir ${target} BINARY_DIR)
  set(${out} "${dir}/musa-linkcheck/${target}.json" PARENT_SCOPE)
endfunction()

function(_musa_linkcheck_with_args out)
  set(args "")
  foreach(lib IN LISTS ARGN)
    if(TARGET ${lib})
      list(APPEND args --with $<TARGET_FILE:${lib}>)
    else()
      list(APPEND args --with ${lib})
    endif()
  endforeach()
  set(${out} ${args} PARENT_SCOPE)
endfunction()

function(musa_linkcheck)
  cmake_parse_arguments(ML "" "TARGET;BASELINE;FORMAT;OUTPUT;FAIL_ON" "WITH;ARGS" ${ARGN})
  _musa_linkcheck_require_target(musa_linkcheck "${ML_TARGET}")
  if(NOT ML_FAIL_ON)
    set(ML_FAIL_ON any)
    if(ML_BASELINE)
      set(ML_FAIL_ON new)
    endif()
  endif()
  _musa_linkcheck_report_path(${ML_TARGET} report)
  _musa_linkcheck_with_args(with_args ${ML_WITH})
  set(extra ${ML_ARGS})
  if(ML_BASELINE)
    get_filename_component(baseline "${ML_BASELINE}" ABSOLUTE)
    list(APPEND extra --baseline ${baseline})
  endif()
  set(common --build-dir ${CMAKE_BINARY_DIR} ${with_args} ${extra})
  set(commands COMMAND ${CMAKE_COMMAND} -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/musa-linkcheck")
  if(ML_OUTPUT)
    if(NOT ML_FORMAT)
      set(ML_FORMAT json)
    endif()
    list(APPEND commands COMMAND MusaLinkcheck::musa-linkcheck --format ${ML_FORMAT} -o ${ML_OUTPUT} --fail-on none
                                 ${common} $<TARGET_FILE:${ML_TARGET}>)
  endif()
  # The gate: the diagnosis goes to the build log, the JSON report beside it for musa_stubgen.
  list(APPEND commands COMMAND MusaLinkcheck::musa-linkcheck --color never --fail-on ${ML_FAIL_ON}
                               --json-report ${report} ${common} $<TARGET_FILE:${ML_TARGET}>)
  add_custom_command(TARGET ${ML_TARGET} POST_BUILD ${commands}
                     COMMENT "musa-linkcheck: checking ${ML_TARGET}" VERBATIM)
  set_property(TARGET ${ML_TARGET} PROPERTY MUSA_LINKCHECK_REPORT ${report})
endfunction()

# The target's own properties that decide how its sources compile, read through generator expressions
# so settings made after musa_stubgen() still apply and usage requirements stay transitive.
function(_musa_stubgen_compile_like target from)
  foreach(prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FEATURES)
    set_property(TARGET ${target} PROPERTY ${prop} "$<TARGET_PROPERTY:${from},${prop}>")
  endforeach()
  foreach(prop C_STANDARD CXX_STANDARD CUDA_STANDARD C_EXTENSIONS CXX_EXTENSIONS CXX_STANDARD_REQUIRED
               C_VISIBILITY_PRESET CXX_VISIBILITY_PRESET VISIBILITY_INLINES_HIDDEN)
    get_target_property(value ${from} ${prop})
    if(NOT value STREQUAL "value-NOTFOUND")
      set_property(TARGET ${target} PROPERTY ${prop} "${value}")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY POSITION_INDEPENDENT_CODE ON)
endfunction()

function(musa_stubgen)
  cmake_parse_arguments(MS "" "TARGET;OUTPUT_DIR;STYLE;SDK_HOME;MAPPING;CUDA_HOME" "STUB;WITH;ARGS" ${ARGN})
  _musa_linkcheck_require_target(musa_stubgen "${MS_TARGET}")
  if(NOT MS_OUTPUT_DIR)
    message(FATAL_ERROR "musa_stubgen: OUTPUT_DIR is required")
  endif()
  set(t ${MS_TARGET})
  get_filename_component(out "${MS_OUTPUT_DIR}" ABSOLUTE)
  set(cpp "${out}/unimplemented_functions.cpp")
  set(hdr "${out}/unimplemented_functions.h")
  # The files must exist when CMake generates the build; musa-stubgen fills them in during the build
  # and keeps whatever is written outside its markers.
  if(NOT EXISTS "${cpp}")
    file(WRITE "${cpp}" "// Stubs written by musa-stubgen (musa_stubgen() in CMake) go below.\n")
  endif()
  if(NOT EXISTS "${hdr}")
    file(WRITE "${hdr}" "// Declarations written by musa-stubgen (musa_stubgen() in CMake) go below.\n#pragma once\n")
  endif()

  # One build, one extra link: the target's sources move into an OBJECT library compiled once; a probe
  # shared library links those objects (undefined symbols allowed) before the real link; musa-linkcheck
  # and musa-stubgen turn the probe's undefined symbols into stubs; the real target then links the same
  # objects plus the stubs. Order: <t>_musa_objects -> <t>_musa_probe -> <t>_musa_stubgen ->
  # <t>_musa_stubs -> <t> -> the musa_linkcheck() gate.
  get_target_property(sources ${t} SOURCES)
  get_target_property(source_dir ${t} SOURCE_DIR)
  get_target_property(binary_dir ${t} BINARY_DIR)
  set(absolute_sources "")
  foreach(src IN LISTS sources)
    if(IS_ABSOLUTE "${src}" OR src MATCHES "^\\$<")
      list(APPEND absolute_sources "${src}")
    elseif(EXISTS "${source_dir}/${src}")
      list(APPEND absolute_sources "${source_dir}/${src}")
    else()
      list(APPEND absolute_sources "${binary_dir}/${src}")
    endif()
  endforeach()
  add_library(${t}_musa_objects OBJECT ${absolute_sources})
  _musa_stubgen_compile_like(${t}_musa_objects ${t})
  set_property(TARGET ${t} PROPERTY SOURCES "")
  target_sources(${t} PRIVATE $<TARGET_OBJECTS:${t}_musa_objects>)

  # The probe: the same objects and link libraries, under the target's own file name in a directory
  # of its own, so the report names the library as the real one would be named.
  add_library(${t}_musa_probe SHARED $<TARGET_OBJECTS:${t}_musa_objects>)
  target_link_libraries(${t}_musa_probe PRIVATE "$<TARGET_PROPERTY:${t},LINK_LIBRARIES>")
  target_link_options(${t}_musa_probe PRIVATE "LINKER:-z,undefs")
  get_target_property(output_name ${t} OUTPUT_NAME)
  if(NOT output_name)
    set(output_name ${t})
  endif()
  set_target_properties(${t}_musa_probe PROPERTIES
    OUTPUT_NAME ${output_name}
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/musa-linkcheck/probe"
    EXCLUDE_FROM_ALL ON)

  _musa_linkcheck_with_args(with_args ${MS_WITH})
  set(options --out-cpp ${cpp} --out-header ${hdr} --no-runtime --build-dir ${CMAKE_BINARY_DIR} ${with_args})
  if(MS_STYLE)
    list(APPEND options --style ${MS_STYLE})
  endif()
  foreach(opt SDK_HOME MAPPING CUDA_HOME)
    if(MS_${opt})
      string(TOLOWER "${opt}" flag)
      string(REPLACE "_" "-" flag "${flag}")
      get_filename_component(value "${MS_${opt}}" ABSOLUTE)
      list(APPEND options --${flag} ${value})
    endif()
  endforeach()
  foreach(cls IN LISTS MS_STUB)
    list(APPEND options --stub ${cls})
  endforeach()
  list(APPEND options ${MS_ARGS})
  # One argument through add_custom_command: the list travels '|'-separated and is split in the script.
  string(REPLACE ";" "|" options_arg "${options}")
  set(report "${CMAKE_CURRENT_BINARY_DIR}/musa-linkcheck/${t}.probe.json")
  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/musa-linkcheck/${t}.stubs.stamp")
  set(changed "${CMAKE_CURRENT_BINARY_DIR}/musa-linkcheck/${t}.stubs.changed")
  if(NOT EXISTS "${changed}")
    file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/musa-linkcheck")
    file(TOUCH "${changed}")
  endif()
  # The stub files are the user's (hand-written text survives), so they are neither OUTPUTs nor
  # BYPRODUCTS CMake could clean. The step touches `changed` only when musa-stubgen changed them; as a
  # byproduct (Ninja re-stats it after the step) and an OBJECT_DEPENDS of the stub file, it recompiles
  # the stubs in the same build when they change, and never otherwise.
  add_custom_command(OUTPUT ${stamp} BYPRODUCTS ${changed}
    COMMAND ${CMAKE_COMMAND} -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/musa-linkcheck"
    COMMAND MusaLinkcheck::musa-linkcheck --format json -o ${report} --fail-on none --only-named --build-dir ${CMAKE_BINARY_DIR}
            ${with_args} $<TARGET_FILE:${t}_musa_probe>
    COMMAND ${CMAKE_COMMAND} -DSTUBGEN=$<TARGET_FILE:MusaLinkcheck::musa-stubgen> -DREPORT=${report}
            "-DOPTIONS=${options_arg}" "-DWATCH=${cpp}|${hdr}" -DCHANGED=${changed} -P ${_MUSA_LINKCHECK_STEP_SCRIPT}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${t}_musa_probe
    COMMENT "musa-stubgen: stubs for ${t} from its probe link"
    VERBATIM)
  add_custom_target(${t}_musa_stubgen DEPENDS ${stamp})

  add_library(${t}_musa_stubs OBJECT "${cpp}")
  set_source_files_properties("${cpp}" TARGET_DIRECTORY ${t}_musa_stubs PROPERTIES OBJECT_DEPENDS "${changed}")
  _musa_stubgen_compile_like(${t}_musa_stubs ${t})
  target_include_directories(${t}_musa_stubs PRIVATE "${out}")
  target_link_libraries(${t}_musa_stubs PRIVATE MusaLinkcheck::stubs)
  add_dependencies(${t}_musa_stubs ${t}_musa_stubgen)
  target_sources(${t} PRIVATE $<TARGET_OBJECTS:${t}_musa_stubs>)
  target_include_directories(${t} PRIVATE "${out}")
  target_link_libraries(${t} PRIVATE MusaLinkcheck::stubs)
endfunction()
