# musa_linkcheck() and musa_stubgen(): one line each in a project's CMakeLists.txt.
# Available after find_package(MusaLinkcheck CONFIG) or add_subdirectory(<musa-linkcheck checkout>).
#
#   musa_linkcheck(TARGET <t> [WITH <lib-or-target>...] [BASELINE <file>] [FORMAT text|json]
#                  [OUTPUT <file>] [FAIL_ON any|new|none] [ARGS <musa-linkcheck options>...])
# A post-build check: after <t> links, musa-linkcheck analyses it; unresolved symbols fail the build
# with the diagnosis in the build log. The JSON report is kept at <binary dir>/musa-linkcheck/<t>.json
# (musa_stubgen reads it). With BASELINE, only findings not in the baseline fail (FAIL_ON new).
#
#   musa_stubgen(TARGET <t> OUTPUT_DIR <dir> [STYLE throw|abort|return-error] [SDK_HOME <dir>]
#                [MAPPING <path>] [CUDA_HOME <dir>] [STUB <classification>...] [ARGS <options>...])
# A pre-build step: before <t> compiles, musa-stubgen turns the previous link check's report into
# <dir>/unimplemented_functions.cpp/.h, which are compiled into <t> together with the stub runtime.

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

function(musa_stubgen)
  cmake_parse_arguments(MS "" "TARGET;OUTPUT_DIR;STYLE;SDK_HOME;MAPPING;CUDA_HOME" "STUB;WITH;ARGS" ${ARGN})
  _musa_linkcheck_require_target(musa_stubgen "${MS_TARGET}")
  if(NOT MS_OUTPUT_DIR)
    message(FATAL_ERROR "musa_stubgen: OUTPUT_DIR is required")
  endif()
  get_filename_component(out "${MS_OUTPUT_DIR}" ABSOLUTE)
  set(cpp "${out}/unimplemented_functions.cpp")
  set(hdr "${out}/unimplemented_functions.h")
  # The files must exist when CMake generates the build; musa-stubgen fills them in later and keeps
  # whatever is written outside its markers.
  if(NOT EXISTS "${cpp}")
    file(WRITE "${cpp}" "// Stubs written by musa-stubgen (musa_stubgen() in CMake) go below.\n")
  endif()
  if(NOT EXISTS "${hdr}")
    file(WRITE "${hdr}" "// Declarations written by musa-stubgen (musa_stubgen() in CMake) go below.\n#pragma once\n")
  endif()
  target_sources(${MS_TARGET} PRIVATE "${cpp}")
  target_include_directories(${MS_TARGET} PRIVATE "${out}")
  target_link_libraries(${MS_TARGET} PRIVATE MusaLinkcheck::stubs)

  _musa_linkcheck_report_path(${MS_TARGET} report)
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
  # One argument through add_custom_target: the list travels '|'-separated and is split in the script.
  string(REPLACE ";" "|" options_arg "${options}")
  add_custom_target(${MS_TARGET}_musa_stubgen
    COMMAND ${CMAKE_COMMAND} -DSTUBGEN=$<TARGET_FILE:MusaLinkcheck::musa-stubgen> -DREPORT=${report}
            "-DOPTIONS=${options_arg}" -P ${_MUSA_LINKCHECK_STEP_SCRIPT}
    COMMENT "musa-stubgen: stubs for ${MS_TARGET} from its last link check"
    VERBATIM)
  add_dependencies(${MS_TARGET} ${MS_TARGET}_musa_stubgen)

  # Without musa_linkcheck() on this target, still leave a report after each link.
  get_target_property(gated ${MS_TARGET} MUSA_LINKCHECK_REPORT)
  if(NOT gated)
    add_custom_command(TARGET ${MS_TARGET} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/musa-linkcheck"
      COMMAND MusaLinkcheck::musa-linkcheck --format json -o ${report} --fail-on none --build-dir ${CMAKE_BINARY_DIR}
              ${with_args} $<TARGET_FILE:${MS_TARGET}>
      COMMENT "musa-linkcheck: report for ${MS_TARGET}" VERBATIM)
  endif()
endfunction()
