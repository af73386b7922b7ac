// Where a run's time goes, for the benchmark and for profiling where perf cannot run (the device
// machine): with MLC_PHASE_TIMES set, each timed phase writes "phase NAME MS" to stderr when it ends
// (NAME is "pass" or "pass:file" for a pass of one file).
// Unset (the default), a phase costs one cached getenv and prints nothing.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace mlc {

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
    if (ms.count() >= min_ms_) std::fprintf(stderr, "phase %s %.2f\n", name_.c_str(), ms.count());
  }
  static bool enabled() {
    static const bool on = std::getenv("MLC_PHASE_TIMES") != nullptr;
    return on;
  }

 private:
  std::string name_;
  double min_ms_ = 0;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace mlc
