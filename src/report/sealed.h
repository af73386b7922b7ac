// Fields every pass reads and only the resolver and the report write: a finding's classification
// (src/verdict decides it from the passes' claims), its sentences and a load failure's message
// (src/report writes them from the passes' evidence, or reads them back from a saved report).
//
// A Sealed<T> reads like a const T. Writing one takes a Pen, and only the functions named below can
// make a Pen, so a pass that assigns a classification or a sentence does not compile. Copying a whole
// finding copies its sealed fields as they are (what a writer wrote travels with it).
#pragma once

#include <concepts>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace mlc {

struct UnresolvedSymbol;
struct Report;
struct TextStyle;

namespace verdict {
void resolve(UnresolvedSymbol& u);
}
namespace report {
void write_sentences(Report& report);
void write_sentences(UnresolvedSymbol& u);
}  // namespace report
Result<Report> parse_json_report(std::string_view text, const std::string& name);
std::string render_text(const Report& report, const TextStyle& style);  // escapes a copy's control bytes

// The key to every Sealed field. The writers make one and hand it to their helpers.
class Pen {
  Pen() = default;
  friend void verdict::resolve(UnresolvedSymbol& u);
  friend void report::write_sentences(Report& report);
  friend void report::write_sentences(UnresolvedSymbol& u);
  friend Result<Report> parse_json_report(std::string_view text, const std::string& name);
  friend std::string render_text(const Report& report, const TextStyle& style);
};

// `Initial...`: the value before any write (none: T's own default).
template <class T, auto... Initial>
class Sealed {
  T value_{Initial...};

 public:
  Sealed() = default;
  const T& operator*() const { return value_; }
  const T* operator->() const { return &value_; }
  operator const T&() const { return value_; }  // not explicit: it reads as a T
  void write(Pen, T value) { value_ = std::move(value); }
  friend bool operator==(const Sealed& a, const Sealed& b) { return a.value_ == b.value_; }
  friend bool operator==(const Sealed& a, const T& b) { return a.value_ == b; }
  // Any ostream, where T can be streamed. Not any class with an operator<<: gtest's Message has a member
  // template taking every type, and clang finds the two equally good (it streams into its own ostream).
  template <class Stream>
  requires std::derived_from<Stream, std::ostream>
  friend auto operator<<(Stream& out, const Sealed& s) -> decltype(out << std::declval<const T&>()) {
    return out << s.value_;
  }
};

}  // namespace mlc
