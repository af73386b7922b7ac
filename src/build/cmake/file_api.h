// CMake's own answer about a build (cmake-file-api(7)): the codemodel-v2 reply (targets, their sources
// and artifacts, the backtrace of the command that added each source) and the cmakeFiles-v1 reply (the
// CMake files the configure read). When the build has none, or an older one than its CMake files, and
// the tool allows it, the provider writes the query and configures the build tree again, as CMake's
// own IDE clients do: a configure leaves the cache and the built files alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "build/cmake/build_info.h"

namespace mlc::build::cmake {

// What the reply held besides the targets.
struct Reply {
  bool found = false;               // a codemodel was read
  bool has_inputs = false;          // the cmakeFiles object was there too
  std::vector<std::string> inputs;  // the project's own CMake files the configure read (absolute)
  std::string index;                // the reply's index file, absolute
};

// Reads the newest reply of `info.build_dir` into info.targets (sources with their stacks, artifacts,
// OBJECT dependencies) and info.compiled.
Reply read_file_api(Model& info);

// True when a project CMake file the reply names is newer than the reply: the configure that wrote
// it did not see the file as it is now.
bool reply_is_stale(const Reply& reply);

// One run of a CMake command: whether it started, its exit status, whether it ran out of time, and
// the tail of what it printed (stdout and stderr together).
struct CMakeRun {
  bool started = false;
  int status = -1;
  bool timed_out = false;
  std::string output;
};
// Runs argv in `dir` in its own process group, killed (the group) after `timeout_seconds`.
CMakeRun run_cmake(const std::vector<std::string>& argv, const std::string& dir, unsigned timeout_seconds);

// The cmake that configured the build (the cache's CMAKE_COMMAND), else "cmake" from the PATH.
std::string cmake_program(const Model& info);

// The first line of CMake's output worth showing: its first "CMake Error" line, else the last line.
std::string first_cmake_error(const std::string& output);

// Writes the codemodel-v2 and cmakeFiles-v1 queries into the build tree and configures it again
// (`cmake <build_dir>`). An error names the build tree and CMake's first error line.
std::optional<InputError> ask_cmake(const Model& info, unsigned timeout_seconds);

}  // namespace mlc::build::cmake
