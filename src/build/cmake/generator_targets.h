// The build's targets read from the files CMake's generator wrote (Makefiles or Ninja), for a build
// configured without a File API query: what each target compiles, its artifact and type, and the
// OBJECT libraries whose objects it links. The File API's reply, when there is one, is preferred.
#pragma once

#include <string>
#include <vector>

#include "build/cmake/build_info.h"

namespace mlc::build::cmake {

// Targets with compiled sources in compile_commands.json (objects under CMakeFiles/<target>.dir/);
// source_dir (CMAKE_HOME_DIRECTORY) maps a target's binary directory to its source directory.
std::vector<Target> targets_from_generator(const std::string& build_dir, const std::string& source_dir);

}  // namespace mlc::build::cmake
