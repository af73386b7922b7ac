# The stub step of musa_stubgen(): run musa-stubgen on the probe link's report. Files change only when
# the stubs do, so an unchanged report triggers no recompilation.
#   cmake -DSTUBGEN=<musa-stubgen> -DREPORT=<report.json> -DOPTIONS=<a|b|c> [-DWATCH=<cpp|h> -DCHANGED=<file>]
#         -P MusaStubgenStep.cmake
if(NOT EXISTS "${REPORT}")
  message(STATUS "musa-stubgen: no link check report yet (${REPORT}); the probe link made none")
  return()
endif()
string(REPLACE "|" ";" options "${OPTIONS}")
string(REPLACE "|" ";" watch "${WATCH}")
set(before "")
foreach(f IN LISTS watch)
  file(READ "${f}" text)
  list(APPEND before "${text}")
endforeach()
execute_process(COMMAND ${STUBGEN} --report ${REPORT} ${options} RESULT_VARIABLE result)
if(result EQUAL 2)
  message(FATAL_ERROR "musa-stubgen failed on ${REPORT}")
endif()
# Tell the build the stubs changed (it recompiles them) only when they did.
set(after "")
foreach(f IN LISTS watch)
  file(READ "${f}" text)
  list(APPEND after "${text}")
endforeach()
if(CHANGED AND NOT before STREQUAL after)
  file(TOUCH "${CHANGED}")
endif()
