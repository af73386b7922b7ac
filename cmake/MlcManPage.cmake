# One man page for the build tree: the page under docs/man/ with its OPTIONS section (the line
# `.\" @OPTIONS@`) replaced by what the tool itself prints with --help-roff - the same option
# declarations and table (tools/option_docs.cpp) that --help reads. Run as cmake -P with TOOL, IN, OUT.
execute_process(COMMAND ${TOOL} --help-roff OUTPUT_VARIABLE options RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TOOL} --help-roff failed (${rc})")
endif()
file(READ ${IN} page)
string(FIND "${page}" ".\\\" @OPTIONS@\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${IN} has no '.\\\" @OPTIONS@' line")
endif()
string(REPLACE ".\\\" @OPTIONS@\n" "${options}" page "${page}")
file(WRITE ${OUT}.tmp "${page}")
file(RENAME ${OUT}.tmp ${OUT})
