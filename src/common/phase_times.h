// Where a run's time goes, for the benchmark and for profiling where perf cannot run (the device
// machine): with MLC_PHASE_TIMES set, each timed phase writes "phase NAME MS" to stderr when it ends
// (NAME is "pass" or "pass:file" for a pass of one file). MLC_PHASE_TIMES=at adds " at START": when the
// phase began, in ms since the program's start (its static initialisation), which shows what waits on what.
// Unset (the default), a phase costs one cached getenv and prints nothing.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

namespace mlc {

// Read during static initialisation (one definition for the program: an inline variable).
inline const std::chrono::steady_clock::time_point kProgramStart = std::chrono::steady_clock::now();

class PhaseTime {
 public:
  // A phase shorter than `min_ms` is not written (per-object phases: only the slow ones).
  explicit PhaseTime(std::string name, double min_ms = 0) : name_(std::move(name)), min_ms_(min_ms) {
    if (enabled()) start_ = std::chrono::steady_clock::now();
  }
  PhaseTime(const PhaseTime&) = delete;
  PhaseTime& operator=(const PhaseTime&) = delete;
  ~PhaseTime() {
    if (!enabled()) return;
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start_;
    if (ms.count() < min_ms_) return;
    if (!with_start()) std::fprintf(stderr, "phase %s %.2f\n", name_.c_str(), ms.count());
    else
      std::fprintf(stderr, "phase %s %.2f at %.2f\n", name_.c_str(), ms.count(),
                   std::chrono::duration<double, std::milli>(start_ - kProgramStart).count());
  }
  static bool enabled() {
    static const bool on = std::getenv("MLC_PHASE_TIMES") != nullptr;
    return on;
  }
  static bool with_start() {
    static const bool on = enabled() && std::string_view(std::getenv("MLC_PHASE_TIMES")) == "at";
    return on;
  }

 private:
  std::string name_;
  double min_ms_ = 0;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace mlc
