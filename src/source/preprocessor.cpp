// Preprocessor conditions: the branch of an #if chain as one expression, and a small evaluator for
// such expressions with the build's -D/-U definitions (an unknown identifier is 0, as in cpp).
#include "source/preprocessor.h"

#include <cctype>
#include <cstdlib>

#include "common/text.h"

namespace mlc::source {
namespace {

// A directive's text as a condition: trimmed, a trailing // comment dropped (a /* */ one ends the
// directive's text already).
std::string condition_text(std::string_view s) {
  std::string t = trim(s);
  if (auto c = t.find("//"); c != std::string::npos) t = trim(std::string_view(t).substr(0, c));
  return t;
}

std::string first_word(std::string_view s) {
  std::string t = condition_text(s);
  size_t n = 0;
  while (n < t.size() && (std::isalnum(static_cast<unsigned char>(t[n])) || t[n] == '_')) ++n;
  return t.substr(0, n);
}

// Recursive descent over the expression's tokens.
class Evaluator {
 public:
  Evaluator(std::string_view s, const std::map<std::string, std::string>& defined) : s_(s), defined_(defined) {}

  std::optional<long long> run() {
    auto v = disjunction();
    skip();
    if (!ok_ || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(std::string_view op) {
    skip();
    if (s_.compare(i_, op.size(), op) != 0) return false;
    // "<" is not the start of "<=", "!" not of "!=", "&" not "&&"...
    if (op.size() == 1 && i_ + 1 < s_.size() && (s_[i_ + 1] == '=' || s_[i_ + 1] == s_[i_]) && op != "(" && op != ")")
      return false;
    i_ += op.size();
    return true;
  }
  std::string identifier() {
    skip();
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    return std::string(s_.substr(b, i_ - b));
  }
  long long disjunction() {
    long long v = conjunction();
    while (ok_ && eat("||")) v = conjunction() || v;
    return v;
  }
  long long conjunction() {
    long long v = equality();
    while (ok_ && eat("&&")) v = equality() && v;
    return v;
  }
  long long equality() {
    long long v = relation();
    for (;;) {
      if (eat("==")) v = v == relation();
      else if (eat("!=")) v = v != relation();
      else return v;
    }
  }
  long long relation() {
    long long v = unary();
    for (;;) {
      if (eat("<=")) v = v <= unary();
      else if (eat(">=")) v = v >= unary();
      else if (eat("<")) v = v < unary();
      else if (eat(">")) v = v > unary();
      else return v;
    }
  }
  long long unary() {
    if (eat("!")) return !unary();
    if (eat("(")) {
      long long v = disjunction();
      if (!eat(")")) ok_ = false;
      return v;
    }
    skip();
    if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      char* end = nullptr;
      long long v = std::strtoll(s_.data() + i_, &end, 0);
      i_ = static_cast<size_t>(end - s_.data());
      while (i_ < s_.size() && (s_[i_] == 'L' || s_[i_] == 'l' || s_[i_] == 'U' || s_[i_] == 'u')) ++i_;
      return v;
    }
    std::string id = identifier();
    if (id.empty()) {
      ok_ = false;
      return 0;
    }
    if (id == "defined") {
      bool paren = eat("(");
      std::string name = identifier();
      if (name.empty() || (paren && !eat(")"))) ok_ = false;
      return defined_.count(name) ? 1 : 0;
    }
    skip();
    if (i_ < s_.size() && s_[i_] == '(') {  // a function-like macro: not evaluated here
      ok_ = false;
      return 0;
    }
    auto it = defined_.find(id);
    if (it == defined_.end()) return 0;
    if (depth_ > 8) {
      ok_ = false;
      return 0;
    }
    // A macro's value is itself an expression ("-DUSE_X" means 1).
    Evaluator inner(it->second.empty() ? std::string_view("1") : std::string_view(it->second), defined_);
    inner.depth_ = depth_ + 1;
    auto v = inner.run();
    if (!v) ok_ = false;
    return v.value_or(0);
  }

  std::string_view s_;
  const std::map<std::string, std::string>& defined_;
  size_t i_ = 0;
  bool ok_ = true;
  int depth_ = 0;
};

}  // namespace

void ConditionStack::directive(std::string_view keyword, std::string_view rest) {
  if (keyword == "ifdef" || keyword == "ifndef") {
    std::string name = first_word(rest);
    frames_.push_back({{}, (keyword == "ifdef" ? "defined(" : "!defined(") + name + ")"});
  } else if (keyword == "if") {
    frames_.push_back({{}, condition_text(rest)});
  } else if (keyword == "elif" || keyword == "elifdef" || keyword == "elifndef" || keyword == "else") {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    f.taken_before.push_back(f.branch);
    if (keyword == "else") f.branch.clear();
    else if (keyword == "elif") f.branch = condition_text(rest);
    else f.branch = (keyword == "elifdef" ? "defined(" : "!defined(") + first_word(rest) + ")";
  } else if (keyword == "endif") {
    if (!frames_.empty()) frames_.pop_back();
  }
}

std::string ConditionStack::current() const {
  std::string out;
  auto add = [&](const std::string& c) { out += (out.empty() ? "" : " && ") + c; };
  for (const auto& f : frames_) {
    for (const auto& before : f.taken_before) add("!(" + before + ")");
    if (!f.branch.empty()) add("(" + f.branch + ")");
  }
  return out;
}

std::optional<bool> evaluate_condition(std::string_view expr, const std::map<std::string, std::string>& defined) {
  if (condition_text(expr).empty()) return true;
  auto v = Evaluator(expr, defined).run();
  if (!v) return std::nullopt;
  return *v != 0;
}

void add_command_definitions(const std::vector<std::string>& argv, std::map<std::string, std::string>& defined) {
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string a = argv[i];
    char flag = 0;
    if ((a == "-D" || a == "-U") && i + 1 < argv.size()) {
      flag = a[1];
      a = argv[++i];
    } else if (a.size() > 2 && (a.compare(0, 2, "-D") == 0 || a.compare(0, 2, "-U") == 0)) {
      flag = a[1];
      a = a.substr(2);
    } else {
      continue;
    }
    auto eq = a.find('=');
    std::string name = a.substr(0, eq);
    if (flag == 'U') defined.erase(name);
    else defined[name] = eq == std::string::npos ? "1" : a.substr(eq + 1);
  }
}

}  // namespace mlc::source
