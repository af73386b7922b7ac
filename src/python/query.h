// Asking an interpreter: the question (what it says about where its packages live; never a package's
// code), the parsing of its answer into an Interpreter, and the answers kept between runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/result.h"
#include "python/interpreter.h"

namespace mlc::python {

// The packages whose shared libraries an extension may rely on being loaded by an earlier import:
// torch, the backend's own extension package (torch_musa) and torchvision.
std::vector<std::string> context_packages(const backend::Backend& b);

// The program given to `EXE -c`: prints one JSON object (sys.executable, sys.version, sys.prefix,
// site directories, and find_spec of each of `packages`). find_spec of a top-level name imports
// nothing of that package.
std::string query_program(const std::vector<std::string>& packages);

// Parses what query_program printed; an error naming the interpreter when it is not that JSON.
Result<Interpreter> parse_answer(const std::string& interpreter, const std::string& answer);

// An interpreter's answer kept between runs, one file per question (<cache_dir>/python-answer-<hash>.tsv):
// the question is the interpreter, the program, the working directory and the environment Python reads
// (PYTHON*, PATH, HOME, TORCH_USE_RTLD_GLOBAL). It is given again while every file and directory the
// answer depends on (every sys.path entry, .pth file and package found: kept_answers.cpp) has the
// identity it had; starting the interpreter is most of a --python run (72 of 90 ms on the device). Only
// an interpreter that is the program it runs (a venv's python, not a pyenv shim, whose choice depends on
// files no answer names) is kept.
std::string answer_question(const std::string& interpreter, const std::string& program);
std::optional<std::string> kept_answer(const std::string& cache_dir, const std::string& question);
void keep_answer(const std::string& cache_dir, const std::string& question, const std::string& interpreter,
                 const std::string& answer);

}  // namespace mlc::python
