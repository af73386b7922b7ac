// Operational failures travel as values, never as exceptions across the core's API (docs/contributing.md,
// "Errors and findings"). An InputError names the file and says what is wrong with it in one line.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace mlc {

struct InputError {
  std::string path;     // the file the error is about (may be empty for usage errors)
  std::string message;  // one line, no trailing newline
  std::string to_line() const { return path.empty() ? message : path + ": " + message; }
  bool operator==(const InputError&) const = default;
};

// A minimal expected<T, InputError> (std::expected is C++23; Debian bookworm's GCC 12 lacks it).
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(InputError error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const InputError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, InputError> v_;
};

}  // namespace mlc
