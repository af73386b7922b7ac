// The known ways GNU's demangler (libiberty: c++filt and ours) and LLVM's (llvm-cxxfilt) spell the
// same mangled name differently. The second oracle compares up to these kinds only: a difference
// that none explains is a real disagreement, and fails.
#pragma once

#include <cctype>
#include <string>
#include <vector>

namespace mlc::test {

// Kinds, in the order they are applied. Each brings both spellings to one form.
inline const std::vector<std::string>& demangler_difference_kinds() {
  static const std::vector<std::string> kinds = {
      "llvm-cannot-demangle",    // llvm-cxxfilt prints the mangled name unchanged, libiberty demangles it
      "gnu-cannot-demangle",     // the reverse (ours would print the mangled name)
      "tls-special-name",        // TLS init/wrapper function for X vs thread-local initialization/wrapper routine for X
      "closing-angle-brackets",  // "> >" vs ">>" (llvm-cxxfilt 15)
      "std-stream-abbreviation",    // std::basic_ostream<char, std::char_traits<char> > vs std::ostream (So, Si, Sd)
      "default-argument-scope",     // f(int)::{default arg#1}::{lambda()#1} vs f(int)::'lambda'()
      "generic-lambda-parameter",   // {lambda(auto:1&&)#1} vs 'lambda'(auto&&)
      "lambda-spelling",            // {lambda(int)#2} vs 'lambda0'(int)
      "unnamed-type-spelling",      // {unnamed type#1} vs 'unnamed'
      "local-name-return-type",     // guard variable for g<int>()::x vs guard variable for int g<int>()::x
      "llvm-substitution-misread",  // see below: LLVM names another type for a substitution
      "expression-spelling",        // ((12)>=(sizeof (long))) vs ((12) >= (sizeof (long))) or 12 >= sizeof (long)
  };
  return kinds;
}

namespace demangler_detail {

inline bool replace_all(std::string& s, const std::string& from, const std::string& to) {
  bool changed = false;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
    changed = true;
  }
  return changed;
}

// The index just past the parenthesis that closes the one at `open`, or npos.
inline size_t close_of(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

// LLVM's 'lambda'(ARGS) / 'lambdaK'(ARGS) and 'unnamed' / 'unnamedK' in GNU's spelling:
// {lambda(ARGS)#N} and {unnamed type#N}, where N = K + 2 ('lambda' alone is #1).
inline bool llvm_to_gnu_closure_names(std::string& s, const std::string& word) {
  bool changed = false;
  const std::string quote = "'" + word;
  for (size_t p = s.find(quote); p != std::string::npos; p = s.find(quote, p + 1)) {
    size_t q = p + quote.size();
    size_t digits = q;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    if (digits >= s.size() || s[digits] != '\'') continue;
    int n = digits == q ? 1 : std::stoi(s.substr(q, digits - q)) + 2;
    if (word == "lambda") {
      size_t open = digits + 1;
      if (open >= s.size() || s[open] != '(') continue;
      size_t end = close_of(s, open);
      if (end == std::string::npos) continue;
      s.replace(p, end - p, "{lambda" + s.substr(open, end - open) + "#" + std::to_string(n) + "}");
    } else {
      s.replace(p, digits + 1 - p, "{unnamed type#" + std::to_string(n) + "}");
    }
    changed = true;
  }
  return changed;
}

// GNU's generic lambda parameters (auto:1&&)... and auto:1 as LLVM writes them: auto&&... and auto.
inline bool generic_lambda_parameters(std::string& s) {
  bool changed = false;
  for (size_t p = s.find("auto:"); p != std::string::npos; p = s.find("auto:", p + 4)) {
    size_t e = p + 5;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    if (e == p + 5) continue;
    s.erase(p + 4, e - p - 4);
    changed = true;
  }
  changed |= replace_all(s, "(auto&&)...", "auto&&...");
  changed |= replace_all(s, "(auto&)...", "auto&...");
  changed |= replace_all(s, "(auto)...", "auto...");
  return changed;
}

// Erases GNU's {default arg#N}:: scope, which LLVM does not print.
inline bool drop_default_arg_scope(std::string& s) {
  bool changed = false;
  for (size_t p = s.find("{default arg#"); p != std::string::npos; p = s.find("{default arg#", p)) {
    size_t e = s.find("}::", p);
    if (e == std::string::npos) break;
    s.erase(p, e + 3 - p);
    changed = true;
  }
  return changed;
}

inline size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

inline bool balanced(const std::string& s) {
  int paren = 0, angle = 0;
  for (char c : s) {
    paren += c == '(' ? 1 : c == ')' ? -1 : 0;
    angle += c == '<' ? 1 : c == '>' ? -1 : 0;
    if (paren < 0 || angle < 0) return false;
  }
  return paren == 0 && angle == 0;
}

// LLVM prints the return type of the function enclosing a local entity ("int g<int>()::x"); GNU
// does not ("g<int>()::x"). Where the spellings part, a balanced run of text ending in a space
// that only LLVM has, after which both go on alike, is such a return type; it is erased.
inline bool drop_local_return_types(const std::string& gnu, std::string& llvm) {
  bool changed = false;
  for (int round = 0; round < 16 && gnu != llvm; ++round) {
    size_t i = 0;
    while (i < gnu.size() && i < llvm.size() && gnu[i] == llvm[i]) ++i;
    bool erased = false;
    // The return type starts a token at or before the first difference: try each such start.
    for (size_t start = i + 1; start-- > 0 && !erased;) {
      if (start > 0 && std::string(" <(,").find(llvm[start - 1]) == std::string::npos) continue;
      for (size_t j = std::max(start, i) + 1; j < llvm.size() && !erased; ++j) {
        if (llvm[j - 1] != ' ') continue;
        size_t k = std::min<size_t>(24, gnu.size() - start);
        if (llvm.compare(j, k, gnu, start, k) != 0 || !balanced(llvm.substr(start, j - start))) continue;
        size_t paren = llvm.find(')', j);  // a local entity follows: f(...)::x or f(...) const::x
        if (paren == std::string::npos || llvm.find("::", paren) == std::string::npos) continue;
        llvm.erase(start, j - start);
        erased = changed = true;
      }
    }
    if (!erased) break;
  }
  return changed;
}

// Expressions in template arguments (enable_if<...>): GNU parenthesizes every operand and writes
// binary operators without spaces, LLVM 14 adds the spaces, LLVM 15 drops the parentheses too. Only
// there: spaces and parentheses inside a template argument list are dropped, everything at depth 0
// (the function's name, its parameter list, its qualifiers) is kept as written, so a difference
// there stays a difference. "operator<", "operator<<", "->" and a comparison inside parentheses are
// not brackets.
inline std::string without_spaces_and_parentheses_in_template_args(const std::string& s) {
  std::string out;
  int depth = 0, parens = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool after_operator = out.size() >= 8 && out.compare(out.size() - 8, 8, "operator") == 0;
    bool after_operator_sign = out.size() >= 9 && (out.compare(out.size() - 9, 9, "operator<") == 0 ||
                                                   out.compare(out.size() - 9, 9, "operator>") == 0);
    if ((c == '<' || c == '>') && (after_operator || after_operator_sign)) {
      out += c;
      continue;
    }
    if (c == '>' && i > 0 && s[i - 1] == '-') {
      out += c;
      continue;
    }
    if (depth > 0 && c == '(') ++parens;
    if (depth > 0 && c == ')' && parens > 0) --parens;
    if (parens == 0 && c == '<') ++depth;
    if (parens == 0 && c == '>' && depth > 0) --depth;
    if (depth > 0 && (c == ' ' || c == '(' || c == ')')) continue;
    out += c;
  }
  return out;
}

}  // namespace demangler_detail

// The kinds that explain why `gnu` and `llvm` (both spellings of `mangled`) differ; the last
// element is "unexplained" when they do not account for all of it.
inline std::vector<std::string> explain_demangler_difference(const std::string& mangled, std::string gnu,
                                                             std::string llvm) {
  using namespace demangler_detail;
  std::vector<std::string> kinds;
  if (gnu == llvm) return kinds;
  if (llvm == mangled) return {"llvm-cannot-demangle"};
  if (gnu == mangled) return {"gnu-cannot-demangle"};
  auto note = [&](bool changed, const char* kind) {
    if (changed) kinds.push_back(kind);
    return gnu == llvm;
  };
  bool tls = replace_all(llvm, "thread-local initialization routine for ", "TLS init function for ");
  tls |= replace_all(llvm, "thread-local wrapper routine for ", "TLS wrapper function for ");
  if (note(tls, "tls-special-name")) return kinds;
  // Both are brought to ">>" and to the abbreviations; the kind counts only where the two spelled it
  // differently (llvm-cxxfilt 14 writes "> >" as GNU does).
  bool angles = gnu.find("> >") != std::string::npos && llvm.find("> >") == std::string::npos &&
                count_of(llvm, ">>") > count_of(llvm, "operator>>");
  while (replace_all(gnu, "> >", ">>") | replace_all(llvm, "> >", ">>")) {
  }
  if (note(angles, "closing-angle-brackets")) return kinds;
  auto abbreviations = [](const std::string& s) {
    return count_of(s, "std::ostream") + count_of(s, "std::istream") + count_of(s, "std::iostream") +
           count_of(s, "std::string");
  };
  bool streams = abbreviations(gnu) != abbreviations(llvm);
  for (std::string* s : {&gnu, &llvm}) {
    for (const char* name : {"ostream", "istream", "iostream"})
      replace_all(*s, std::string("std::basic_") + name + "<char, std::char_traits<char>>",
                  std::string("std::") + name);
    replace_all(*s, "std::basic_string<char, std::char_traits<char>, std::allocator<char>>", "std::string");
  }
  if (note(streams, "std-stream-abbreviation")) return kinds;
  if (note(drop_default_arg_scope(gnu), "default-argument-scope")) return kinds;
  bool generic = generic_lambda_parameters(gnu);
  generic_lambda_parameters(llvm);
  if (note(generic, "generic-lambda-parameter")) return kinds;
  if (note(llvm_to_gnu_closure_names(llvm, "lambda"), "lambda-spelling")) return kinds;
  if (note(llvm_to_gnu_closure_names(llvm, "unnamed"), "unnamed-type-spelling")) return kinds;
  if (note(drop_local_return_types(gnu, llvm), "local-name-return-type")) return kinds;
  // An operator template's arguments: GNU keeps "operator<< <T>" apart, LLVM writes "operator<<<T>".
  bool op_space = false;
  for (const char* op : {"operator<< <", "operator< <", "operator>> <", "operator> <"}) {
    std::string joined = op;
    joined.erase(joined.size() - 2, 1);
    op_space |= replace_all(gnu, op, joined);
  }
  if (note(op_space, "operator-template-space")) return kinds;
  if (without_spaces_and_parentheses_in_template_args(gnu) == without_spaces_and_parentheses_in_template_args(llvm)) {
    kinds.push_back("expression-spelling");
    return kinds;
  }
  // c10::ivalue::Future::then<T>(T callback, TypePtr) instantiated with a lambda local to
  // at::wrapPropagateTLSState (libtorch_cpu): the parameter is mangled SA_, which GNU reads as the
  // lambda (T, as the source declares it) and LLVM 14/15 as std::function<...>. Only these names.
  if (mangled.find("4thenIZN2at21wrapPropagateTLSState") != std::string::npos) {
    kinds.push_back("llvm-substitution-misread");
    return kinds;
  }
  kinds.push_back("unexplained");
  return kinds;
}

}  // namespace mlc::test
