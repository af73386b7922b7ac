# Copies fixtures/torch_musa to a scratch directory and configures and builds it there, with a CMake
# File API query in place, so tests get a real build tree (CMakeCache.txt, compile_commands.json,
# File API reply) and a CMakeLists.txt they may patch. RelWithDebInfo: optimised code with -g carries
# the DWARF call sites that locate each reference.
#   cmake -DSOURCE=<fixtures/torch_musa> -DDEST=<dir> -P build_world.cmake
file(REMOVE_RECURSE ${DEST})
file(MAKE_DIRECTORY ${DEST})
file(COPY ${SOURCE}/ DESTINATION ${DEST}/src)
file(MAKE_DIRECTORY ${DEST}/build/.cmake/api/v1/query)
file(TOUCH ${DEST}/build/.cmake/api/v1/query/codemodel-v2)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${DEST}/src -B ${DEST}/build -DCMAKE_BUILD_TYPE=RelWithDebInfo
                RESULT_VARIABLE configured OUTPUT_QUIET)
if(NOT configured EQUAL 0)
  message(FATAL_ERROR "configuring the torch_musa fixture world failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${DEST}/build -j 2 RESULT_VARIABLE built OUTPUT_QUIET)
if(NOT built EQUAL 0)
  message(FATAL_ERROR "building the torch_musa fixture world failed")
endif()
