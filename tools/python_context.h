// The tool's side of Python's import as context: it runs the interpreter (never
// the analysed files) to learn where packages live, and unpacks wheels to check them as a whole.
// The core gets the answers as values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pipeline/linkcheck.h"

namespace mlc::tools {

// Runs `interpreter -c <query>` (a name without '/' is found on PATH as a shell would, so a pyenv or
// conda shim resolves itself and answers with its sys.executable). On success options.python is set
// and options.host_python becomes that executable; on failure nothing changes (the files are checked as
// without --python) and the one-line error names the interpreter. `resolved` is the interpreter's
// absolute path (as PATH finds a name): with it, an answer kept by an earlier run answers while nothing
// it depends on changed (python::kept_answer), and a new answer is kept.
std::optional<InputError> ask_python(const std::string& interpreter, const std::string& resolved,
                                     LinkcheckOptions& options);

// A wheel (.whl, a zip) unpacked into a directory of its own under `parent`, with Python's zipfile
// module run by `python` (only the standard library runs: nothing from the wheel). Removed by the
// destructor.
class UnpackedWheels {
 public:
  UnpackedWheels() = default;
  UnpackedWheels(const UnpackedWheels&) = delete;
  UnpackedWheels& operator=(const UnpackedWheels&) = delete;
  ~UnpackedWheels();
  // The directory the wheel was unpacked into, or the one-line error naming the wheel.
  Result<std::string> unpack(const std::string& wheel, const std::string& python, const std::string& parent);
  // Paths under an unpacked directory, spelled as inside the wheel: /abs/x.whl!/pkg/_C.so.
  void rename_paths(Report& report) const;

 private:
  std::vector<std::pair<std::string, std::string>> dirs_;  // wheel, directory
};

bool is_wheel(const std::string& path);

}  // namespace mlc::tools
