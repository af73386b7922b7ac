// Follows the grammar of cmake-language(7): bracket arguments and comments use [=*[ ... ]=*],
// quoted arguments may span lines, unquoted arguments may contain balanced parentheses.
#include "build/cmake/cmake_lang.h"

#include "common/paths.h"

#include <cctype>

namespace mlc::build::cmake {
namespace {

class Reader {
 public:
  Reader(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Result<std::vector<CMakeCommand>> run() {
    std::vector<CMakeCommand> out;
    while (skip_space_and_comments(true)) {
      if (!error_.empty()) return fail();
      if (!ident_start(s_[i_])) return fail("expected a command name, found '" + std::string(1, s_[i_]) + "'");
      CMakeCommand cmd;
      cmd.begin = i_;
      cmd.line = line_;
      while (i_ < s_.size() && is_ident_char(s_[i_])) cmd.name += static_cast<char>(std::tolower(s_[i_++]));
      while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
      if (i_ >= s_.size() || s_[i_] != '(') return fail("expected '(' after " + cmd.name);
      ++i_;
      int depth = 1;
      while (true) {
        if (!skip_space_and_comments(false)) return fail("unterminated command " + cmd.name + " (missing ')')");
        if (!error_.empty()) return fail();
        char c = s_[i_];
        if (c == ')') {
          if (--depth == 0) {
            cmd.close_paren = i_++;
            break;
          }
          ++i_;
          continue;
        }
        if (c == '(') {
          ++depth;
          ++i_;
          continue;
        }
        CMakeArg arg;
        arg.begin = i_;
        arg.line = line_;
        if (c == '"') {
          arg.kind = CMakeArg::Kind::Quoted;
          ++i_;
          size_t start = i_;
          while (i_ < s_.size() && s_[i_] != '"') {
            if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
              if (s_[i_ + 1] == '\n') ++line_;
              i_ += 2;
              continue;
            }
            if (s_[i_] == '\n') ++line_;
            ++i_;
          }
          if (i_ >= s_.size()) return fail("unterminated quoted argument", arg.line);
          arg.value = std::string(s_.substr(start, i_ - start));
          ++i_;
        } else if (c == '[' && bracket_open(i_) >= 0) {
          arg.kind = CMakeArg::Kind::Bracket;
          int eq = bracket_open(i_);
          i_ += eq + 2;
          if (i_ < s_.size() && s_[i_] == '\n') ++line_, ++i_;  // a newline right after the opener is dropped
          size_t start = i_;
          std::string close = "]" + std::string(eq, '=') + "]";
          size_t end = s_.find(close, i_);
          if (end == std::string_view::npos) return fail("unterminated bracket argument", arg.line);
          for (size_t k = i_; k < end; ++k) line_ += s_[k] == '\n';
          arg.value = std::string(s_.substr(start, end - start));
          i_ = end + close.size();
        } else {
          size_t start = i_;
          while (i_ < s_.size()) {
            char d = s_[i_];
            if (d == ' ' || d == '\t' || d == '\n' || d == '\r' || d == '(' || d == ')' || d == '#') break;
            if (d == '"') {  // legacy unquoted: quotes inside, e.g. -Da="b c"
              ++i_;
              while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\n') ++i_;
              if (i_ < s_.size() && s_[i_] == '"') ++i_;
              continue;
            }
            if (d == '\\' && i_ + 1 < s_.size()) {
              i_ += 2;
              continue;
            }
            ++i_;
          }
          arg.value = std::string(s_.substr(start, i_ - start));
        }
        arg.end = i_;
        cmd.args.push_back(std::move(arg));
      }
      out.push_back(std::move(cmd));
    }
    if (!error_.empty()) return fail();
    return out;
  }

 private:
  static bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

  // "[==[" at k: the number of '=', or -1.
  int bracket_open(size_t k) const {
    if (k >= s_.size() || s_[k] != '[') return -1;
    size_t m = k + 1;
    while (m < s_.size() && s_[m] == '=') ++m;
    return m < s_.size() && s_[m] == '[' ? static_cast<int>(m - k - 1) : -1;
  }

  // Skips blanks, newlines and comments; false at the end of the text.
  bool skip_space_and_comments(bool) {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        if (int eq = bracket_open(i_ + 1); eq >= 0) {
          std::string close = "]" + std::string(eq, '=') + "]";
          size_t end = s_.find(close, i_);
          if (end == std::string_view::npos) {
            error_ = "unterminated bracket comment";
            error_line_ = line_;
            i_ = s_.size();
            return true;
          }
          for (size_t k = i_; k < end; ++k) line_ += s_[k] == '\n';
          i_ = end + close.size();
        } else {
          while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        }
      } else {
        return true;
      }
    }
    return false;
  }

  InputError fail(const std::string& what = "", uint32_t line = 0) const {
    std::string msg = what.empty() ? error_ : what;
    uint32_t at = line ? line : (what.empty() ? error_line_ : line_);
    return InputError{path_, "broken CMake file: " + msg + " at line " + std::to_string(at)};
  }

  std::string_view s_;
  const std::string& path_;
  size_t i_ = 0;
  uint32_t line_ = 1;
  std::string error_;
  uint32_t error_line_ = 0;
};

}  // namespace

Result<std::vector<CMakeCommand>> parse_cmake(std::string_view text, const std::string& path) {
  return Reader(text, path).run();
}

bool creates_library(const std::string& command, const std::string& backend_helper) {
  return command == "add_library" || command == "cuda_add_library" ||
         (!backend_helper.empty() && command == backend_helper);
}

bool creates_target(const std::string& command, const std::string& backend_helper) {
  return creates_library(command, backend_helper) || command == "add_executable" || command == "cuda_add_executable" ||
         command == "target_sources";
}

std::vector<std::string> referenced_variables(const std::string& raw) {
  std::vector<std::string> out;
  for (size_t open = raw.find("${"); open != std::string::npos; open = raw.find("${", open + 2)) {
    size_t close = raw.find('}', open);
    if (close == std::string::npos) break;
    std::string name = raw.substr(open + 2, close - open - 2);
    if (name.find("${") == std::string::npos && !name.empty()) out.push_back(std::move(name));
  }
  return out;
}

}  // namespace mlc::build::cmake
