# Run first (MODE=start) and last (MODE=check) by CTest: the suite must leave nothing behind in its
# scratch root (tests/unit/test_support.h: <root>/mlc-test-<pid> per test process, with its HOME and
# XDG_CACHE_HOME, so the tools' default caches land there; <root>/tmp is the TMPDIR every test runs
# with, so compilers' and tools' temporaries land there too), nor in /tmp.
set(stamp "${ROOT}/.suite-start")
if(MODE STREQUAL "start")
  file(MAKE_DIRECTORY "${ROOT}/tmp")
  file(TOUCH "${stamp}")
  return()
endif()
# Everything in the root but the stamp and the (empty) TMPDIR is left over: a test process's
# HOME/XDG_CACHE_HOME (and the caches the tools wrote there) included.
file(GLOB_RECURSE left LIST_DIRECTORIES true "${ROOT}/*")
list(REMOVE_ITEM left "${stamp}" "${ROOT}/tmp")
# /tmp is shared with other processes (on a developer's machine, other builds): only what our tests
# and tools would name there counts.
file(GLOB in_tmp LIST_DIRECTORIES true "/tmp/mlc-*" "/tmp/musa-*" "/tmp/confirm-*" "/tmp/stand-in*" "/tmp/types-*"
     "/tmp/cmake-patch*")
foreach(d IN LISTS in_tmp)
  if(NOT EXISTS "${stamp}" OR "${d}" IS_NEWER_THAN "${stamp}")
    list(APPEND left "${d}")
  endif()
endforeach()
if(left)
  list(LENGTH left n)
  list(SUBLIST left 0 20 shown)
  list(JOIN shown "\n  " shown)
  message(FATAL_ERROR "test scratch left behind (${n} paths; the first 20):\n  ${shown}")
endif()
message(STATUS "nothing left in the test scratch root ${ROOT} or in /tmp")
