// A compile command's shell string split into arguments: compile_commands.json's "command" and the
// response files (@file, nvcc's --options-file) a command names; and what its arguments say.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlc::build {

// Only quoting and backslashes matter here: the build wrote these strings, no shell expands them.
std::vector<std::string> split_command(const std::string& s);

// True for nvcc, by the driver's file name.
bool is_nvcc(const std::string& compiler);
// nvcc's options whose value is the next argument and never the compiler's output or the source.
bool nvcc_takes_value(std::string_view a);

// Calls f(i) for each argument of a compile command after the driver that is the compiler's own: the
// value after one of nvcc's value-taking options is skipped (what follows -Xcompiler is the host's).
// f returns false to stop.
void for_each_own_argument(const std::vector<std::string>& argv, const std::function<bool(size_t)>& f);

// Where a compile command names its output: the argument holding the path, and where the path starts
// in it (-o X, --output-file X: the next argument, at 0; gcc's -oX: at 2; nvcc's -o=X and
// --output-file=X: after the '='). What follows one of nvcc's value-taking options is never it. None:
// the compiler writes where it chooses. Read by the confirm pass, which redirects it, and by the
// generator reader, which takes each object's target directory from it.
struct OutputArgument {
  size_t index = 0, offset = 0;
};
std::optional<OutputArgument> output_argument(const std::vector<std::string>& argv);

}  // namespace mlc::build
