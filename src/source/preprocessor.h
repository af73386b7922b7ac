// Preprocessor conditions as the compiler sees them: the #if/#ifdef/#elif/#else branch a line sits in,
// written as one expression, and that expression evaluated with the build's own definitions (the -D
// and -U flags of its compile commands), so that a macro defined in two branches resolves to one.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlc::source {

// Follows the conditional directives of one file, in order.
class ConditionStack {
 public:
  // `keyword` is the directive's name (if, ifdef, ifndef, elif, else, endif; others are ignored),
  // `rest` the text after it.
  void directive(std::string_view keyword, std::string_view rest);
  // The condition under which the current line is compiled ("" : always), e.g.
  // "!(defined(SOME_BUILD_SYSTEM))" (a header guard's !defined(X_H) is part of it, and true).
  std::string current() const;

 private:
  struct Frame {
    std::vector<std::string> taken_before;  // conditions of the earlier branches of this #if chain
    std::string branch;                     // this branch's own condition ("" for #else)
  };
  std::vector<Frame> frames_;
};

// The value of a condition written by ConditionStack (or an #if expression): defined(X), identifiers
// (an undefined one is 0, as in the preprocessor), integers, ! && || == != < > <= >= and parentheses.
// nullopt when it cannot be evaluated (a function-like macro, a non-integer value).
std::optional<bool> evaluate_condition(std::string_view expr, const std::map<std::string, std::string>& defined);

// The macros a compile command defines (-DNAME, -DNAME=VALUE, -D NAME) less those it undefines (-U),
// added to `defined`.
void add_command_definitions(const std::vector<std::string>& argv, std::map<std::string, std::string>& defined);

}  // namespace mlc::source
