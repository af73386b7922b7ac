// A compile command's shell string split into arguments: compile_commands.json's "command" and the
// response files (@file, nvcc's --options-file) a command names.
#pragma once

#include <string>
#include <vector>

namespace mlc::cmake {

// Only quoting and backslashes matter here: the build wrote these strings, no shell expands them.
std::vector<std::string> split_command(const std::string& s);

}  // namespace mlc::cmake
