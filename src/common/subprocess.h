// One way to run a program: fork/exec with no shell, stdin from /dev/null, stdout and stderr read
// through pipes, in a process group of its own so that a deadline ends it and whatever it started
// (a compiler driver's cc1plus, a Python shim's children), and nothing else.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace mlc {

struct ProgramRun {
  std::vector<std::string> argv = {};  // argv[0] is looked up on PATH when it has no '/' (execvp), as a shell runs it
  std::string directory = {};          // where it runs; "" for here (a directory it cannot enter: exit status 126)
  std::chrono::steady_clock::time_point deadline = {};  // then it and its process group are killed
  bool merge_output = false;                            // stderr into `out`, in the order written (as 2>&1)
};

struct ProgramResult {
  bool started = false;    // false: no process (fork or pipe failed)
  bool timed_out = false;  // killed at the deadline
  int status = 0;          // waitpid's status
  int exec_errno = 0;      // why exec failed (the exit status is 127 then); 0 when it ran
  std::string out, err;
};

ProgramResult run_program(const ProgramRun& run);

}  // namespace mlc
