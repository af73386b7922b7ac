// A reader for the CMake language (cmake-language(7)): command invocations with unquoted, quoted
// and bracket arguments, line and bracket comments. Every argument keeps its exact byte range, so
// a patch can insert an entry without changing any other byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace mlc::build::cmake {

struct CMakeArg {
  enum class Kind : uint8_t { Unquoted, Quoted, Bracket };
  Kind kind = Kind::Unquoted;
  std::string value;  // the argument's text without delimiters; escapes left as written
  uint32_t line = 0;
  size_t begin = 0;  // byte offset of the argument's first character (its quote or bracket included)
  size_t end = 0;    // one past its last character
};

struct CMakeCommand {
  std::string name;  // lower-cased: CMake command names are case-insensitive
  std::vector<CMakeArg> args;
  uint32_t line = 0;
  size_t begin = 0;        // offset of the command name
  size_t close_paren = 0;  // offset of the closing ')'
};

// Fails (naming `path` and the line) on an unterminated argument, comment or command.
Result<std::vector<CMakeCommand>> parse_cmake(std::string_view text, const std::string& path);

// The commands that create a library target (CMake's own, FindCUDA's and `backend_helper`, the
// backend's own: backend::Backend::cmake_add_library, musa_add_library), and those that create or
// extend any target: written once, for the build reader, the tracer and the patcher.
bool creates_library(const std::string& command, const std::string& backend_helper);
bool creates_target(const std::string& command, const std::string& backend_helper);

// The variables an argument references by name, in order: "${A}/x${B}" -> A, B (a nested reference by
// its innermost name; "${}" names none).
std::vector<std::string> referenced_variables(const std::string& raw);

}  // namespace mlc::build::cmake
