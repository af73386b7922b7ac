# The pre-build step of musa_stubgen(): run musa-stubgen on the previous link check's report, when
# there is one (the first build has none). Files change only when the stubs do, so an unchanged
# report triggers no recompilation.
#   cmake -DSTUBGEN=<musa-stubgen> -DREPORT=<report.json> -DOPTIONS=<a|b|c> -P MusaStubgenStep.cmake
if(NOT EXISTS "${REPORT}")
  message(STATUS "musa-stubgen: no link check report yet (${REPORT}); stubs come after the first link")
  return()
endif()
string(REPLACE "|" ";" options "${OPTIONS}")
execute_process(COMMAND ${STUBGEN} --report ${REPORT} ${options} RESULT_VARIABLE result)
if(result EQUAL 2)
  message(FATAL_ERROR "musa-stubgen failed on ${REPORT}")
endif()
