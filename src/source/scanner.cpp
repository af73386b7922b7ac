// A tolerant statement-level parser over the lexer's tokens (scanner.h): namespaces, classes, templates,
// aliases and enums, and where each statement starts and ends. Function bodies, initialisers and enum bodies
// are skipped by brace matching, which is what makes a 134 MB source tree scan in about a second.
#include "source/scanner.h"

#include "source/scanner_internal.h"

namespace mlc::source {
namespace detail {

Parser::Parser(std::vector<Token> toks, const std::vector<Define>& defines) : t_(std::move(toks)) {
  for (const auto& d : defines)
    if (macro_like(d.name))
      if (auto v = macro_scope_value(d.body)) {
        local_macros_[d.name] = *v;
        if (d.body.find("namespace") != std::string::npos) local_opens_[d.name] = true;
      }
}

std::vector<Entity> Parser::run() {
  while (i_ < t_.size()) {
    size_t before = i_;
    declaration();
    if (i_ == before) ++i_;  // never stall on a token nothing understood
  }
  return std::move(out_);
}

// Index just past the bracket group starting at k (t_[k] is the opener).
size_t Parser::skip_group(size_t k) const {
  std::string_view open = t_[k].text;
  std::string_view close = open == "(" ? ")" : open == "[" ? "]" : open == "{" ? "}" : ">";
  int depth = 0;
  for (; k < t_.size(); ++k) {
    if (t_[k].kind != Tok::Punct) continue;
    if (t_[k].text == open) ++depth;
    if (t_[k].text == close && --depth == 0) return k + 1;
    // A '<' group cannot contain these: it was a less-than after all.
    if (open == "<" && (t_[k].text == ";" || t_[k].text == "{" || t_[k].text == "}")) return k;
  }
  return t_.size();
}

std::string Parser::prefix() const {
  std::string p;
  for (const auto& s : scopes_)
    if (s.kind != Scope::Linkage) p += s.name + "::";
  return p;
}

std::string Parser::using_alternatives(const std::vector<std::string>& quals, const std::string& name) const {
  if (quals.empty()) return "";  // "void f() {}" after "using namespace N;" is ::f, a new function
  std::string rest;
  for (const auto& q : quals) rest += q + "::";
  rest += name;
  std::vector<std::string> out;
  // Outermost first: a directive at file scope, then those of each enclosing scope.
  auto add = [&](const std::vector<std::string>& usings, const std::string& at) {
    for (const auto& n : usings) {
      out.push_back(at + n + "::" + rest);
      if (!at.empty()) out.push_back(n + "::" + rest);  // written relative to that scope, or from the top
    }
  };
  add(file_usings_, "");
  std::string p;
  for (const auto& s : scopes_) {
    if (s.kind != Scope::Linkage) p += s.name + "::";
    add(s.usings, p);
  }
  return join_list(out);
}

bool Parser::in_extern_c() const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (it->kind == Scope::Linkage) return it->c_linkage;
  return false;
}

Scope* Parser::current_class() {
  return !scopes_.empty() && scopes_.back().kind == Scope::Class ? &scopes_.back() : nullptr;
}

std::vector<std::string> Parser::scope_template_params() const {
  std::vector<std::string> all;
  for (const auto& s : scopes_) all.insert(all.end(), s.template_params.begin(), s.template_params.end());
  return all;
}

std::string Parser::text(size_t from, size_t to) const {
  std::string out;
  for (size_t k = from; k < to && k < t_.size(); ++k) {
    if (!out.empty() && ident_char(out.back()) && ident_char(t_[k].text[0])) out += ' ';
    out += t_[k].text;
  }
  return out;
}

void Parser::skip_statement() {
  while (i_ < t_.size()) {
    const auto& tk = t_[i_];
    if (tk.kind == Tok::Punct && (tk.text == "(" || tk.text == "[" || tk.text == "{")) {
      bool brace = tk.text == "{";
      i_ = skip_group(i_);
      if (brace && !at(";") && !at(",") && !at("=")) return;  // a body ends the statement
      continue;
    }
    if (tk.text == ";") {
      ++i_;
      return;
    }
    if (tk.text == "}") return;  // leave the scope's closer to the caller
    ++i_;
  }
}

std::vector<std::string> Parser::template_parameter_names(size_t open, size_t close) const {
  std::vector<std::string> names;
  size_t start = open + 1;
  int depth = 0;
  for (size_t k = open + 1; k <= close && k < t_.size(); ++k) {
    const auto& tx = t_[k].text;
    if (tx == "<" || tx == "(") ++depth;
    if ((tx == ">" || tx == ")") && depth > 0 && k != close) --depth;
    if ((depth == 0 && tx == ",") || k == close) {
      size_t end = k;
      for (size_t m = start; m < k; ++m)
        if (t_[m].text == "=") {
          end = m;
          break;
        }
      for (size_t m = end; m-- > start;) {
        if (t_[m].kind == Tok::Ident && t_[m].text != "typename" && t_[m].text != "class") {
          names.emplace_back(t_[m].text);
          break;
        }
        if (t_[m].text != "...") break;
      }
      start = k + 1;
    }
  }
  return names;
}

void Parser::declaration() {
  const Token& tk = t_[i_];
  if (tk.text == ";") {
    ++i_;
    return;
  }
  if (tk.text == "}") {
    ++i_;
    if (!scopes_.empty()) scopes_.pop_back();
    return;
  }
  if (tk.kind == Tok::Ident) {
    if (tk.text == "namespace") return namespace_decl();
    if (tk.text == "inline" && at("namespace", 1)) {
      ++i_;
      return namespace_decl();
    }
    if (tk.text == "extern" && i_ + 1 < t_.size() && t_[i_ + 1].kind == Tok::String &&
        (t_[i_ + 1].text == "\"C\"" || t_[i_ + 1].text == "\"C++\"")) {
      bool c = t_[i_ + 1].text == "\"C\"";
      i_ += 2;
      if (at("{")) {
        ++i_;
        Scope linkage{Scope::Linkage, "", {}};
        linkage.c_linkage = c;
        scopes_.push_back(std::move(linkage));
        return;
      }
      pending_extern_c_ = c;
      return;
    }
    if ((tk.text == "public" || tk.text == "private" || tk.text == "protected") && at(":", 1)) {
      i_ += 2;
      return;
    }
    if (tk.text == "template") return template_decl();
    if (tk.text == "using") return using_decl();
    if (tk.text == "typedef") return typedef_decl();
    if (tk.text == "static_assert" || tk.text == "friend" || tk.text == "asm" || tk.text == "__asm__") {
      skip_statement();
      return;
    }
    if (tk.text == "enum") return enum_decl();
    if ((tk.text == "class" || tk.text == "struct" || tk.text == "union") && class_decl()) return;
    if (macro_like(tk.text) && symbol_macro()) return;
  }
  statement();
}

void Parser::namespace_decl() {
  ++i_;  // "namespace"
  std::vector<std::string> names;
  while (ident(i_)) {
    if (t_[i_].text == "inline") {
      ++i_;
      continue;
    }
    names.push_back(macro_like(t_[i_].text) ? macro_namespace(t_[i_].text) : std::string(t_[i_].text));
    ++i_;
    if (at("::")) ++i_;
  }
  while (i_ < t_.size() && t_[i_].text == "__attribute__") i_ = skip_group(i_ + 1);
  if (!at("{")) {  // namespace alias or garbage
    skip_statement();
    return;
  }
  ++i_;
  if (names.empty()) names.push_back("(anonymous namespace)");
  // "namespace a::b {" opens two scopes that one "}" closes: merge them into one scope name.
  std::string joined;
  for (size_t k = 0; k < names.size(); ++k) joined += (k ? "::" : "") + names[k];
  scopes_.push_back({Scope::Namespace, joined, {}});
}

void Parser::template_decl() {
  ++i_;  // "template"
  if (at("<")) {
    size_t close = skip_group(i_);
    pending_template_ = template_parameter_names(i_, close - 1);
    pending_is_template_ = !pending_template_.empty();
    pending_specialization_ = pending_template_.empty();
    i_ = close;
    // template <...> class X ...; or a function
    if (i_ < t_.size() && (t_[i_].text == "class" || t_[i_].text == "struct" || t_[i_].text == "union")) {
      if (class_decl()) return;
    }
    if (at("using")) return using_decl();  // an alias template: its parameters stay with it
    if (at("typedef")) {
      skip_statement();
      clear_pending();
      return;
    }
    statement();
    return;
  }
  // Explicit instantiation: "template void f<int>(...);", "template class X<float>;"
  if (i_ < t_.size() && (t_[i_].text == "class" || t_[i_].text == "struct")) {
    size_t start = i_ + 1;
    size_t k = start;
    while (k < t_.size() && t_[k].text != ";" && t_[k].text != "{") ++k;
    if (k < t_.size() && t_[k].text == ";") {
      Entity e;
      e.kind = EntityKind::ClassInstantiation;
      e.line = t_[i_].line;
      std::string name = text(start, k);
      auto lt = name.find('<');
      e.qualified = prefix() + name.substr(0, lt);
      if (lt != std::string::npos) e.template_args = normalize_args(name.substr(lt + 1, name.size() - lt - 2));
      out_.push_back(std::move(e));
      i_ = k + 1;
      return;
    }
  }
  pending_instantiation_ = true;
  statement();
}

std::string Parser::normalize_args(const std::string& inside) {
  std::vector<std::string> args;
  int depth = 0;
  size_t start = 0;
  for (size_t k = 0; k <= inside.size(); ++k) {
    char c = k < inside.size() ? inside[k] : ',';
    if (c == '<' || c == '(') ++depth;
    if ((c == '>' || c == ')') && depth > 0) --depth;
    if (depth == 0 && c == ',') {
      args.push_back(normalize_type(std::string_view(inside).substr(start, k - start), false));
      start = k + 1;
    }
  }
  return join_list(args);
}

void Parser::clear_pending() {
  pending_template_.clear();
  pending_is_template_ = false;
  pending_specialization_ = false;
  pending_instantiation_ = false;
  pending_extern_c_ = false;
}

void Parser::using_decl() {
  size_t start = i_;
  if (at("namespace", 1)) {  // "using namespace a::b;": a directive, in force to the end of its scope
    std::string named;
    size_t k = i_ + 2;
    for (; k < t_.size() && (ident(k) || t_[k].text == "::"); ++k)
      named +=
          macro_like(t_[k].text) && t_[k].kind == Tok::Ident ? macro_namespace(t_[k].text) : std::string(t_[k].text);
    if (named.rfind("::", 0) == 0) named = named.substr(2);
    if (!named.empty() && k < t_.size() && t_[k].text == ";") {
      (scopes_.empty() ? file_usings_ : scopes_.back().usings).push_back(named);
      i_ = k + 1;
      clear_pending();
      return;
    }
  }
  if (ident(i_ + 1) && at("=", 2)) {
    Entity e;
    e.kind = EntityKind::Alias;
    e.line = t_[i_].line;
    e.qualified = prefix() + std::string(t_[i_ + 1].text);
    size_t k = i_ + 3;
    size_t end = k;
    while (end < t_.size() && t_[end].text != ";") ++end;
    e.extra = normalize_type(text(k, end), false);
    // "template <typename Char> using buffer_context = basic_format_context<..., Char>;": the
    // parameters are substituted when a type names it with arguments.
    e.template_params = join_list(pending_template_);
    e.is_template = pending_is_template_;
    out_.push_back(std::move(e));
    i_ = std::min(t_.size(), end + 1);
    clear_pending();
    return;
  }
  i_ = start;
  skip_statement();
  clear_pending();
}

void Parser::typedef_decl() {
  size_t start = ++i_;
  size_t end = start;
  while (end < t_.size() && t_[end].text != ";") {
    // "typedef enum X { ... } name;" and "typedef struct { ... } name;": skip the body.
    end = t_[end].text == "{" ? skip_group(end) : end + 1;
  }
  if (end >= t_.size()) {
    i_ = t_.size();
    return;
  }
  Entity e;
  e.kind = EntityKind::Alias;
  e.line = t_[start].line;
  // "typedef void (*name)(void*);": the name is inside the first parentheses.
  for (size_t k = start; k + 2 < end; ++k) {
    if (t_[k].text == "(" && t_[k + 1].text == "*" && ident(k + 2)) {
      e.qualified = prefix() + std::string(t_[k + 2].text);
      e.extra = "(*)";
      break;
    }
  }
  if (e.qualified.empty() && end - start >= 2 && ident(end - 1)) {
    e.qualified = prefix() + std::string(t_[end - 1].text);
    size_t body = start;
    while (body < end - 1 && t_[body].text != "{") ++body;
    e.extra = body < end - 1 ? std::string(t_[start + 1].text) : normalize_type(text(start, end - 1), false);
  }
  if (!e.qualified.empty()) out_.push_back(std::move(e));
  i_ = end + 1;
}

// "enum [class] X [: T] { ... };": the type is known; its body is skipped.
void Parser::enum_decl() {
  size_t k = i_ + 1;
  if (is(k, "class") || is(k, "struct")) ++k;
  if (ident(k)) {
    size_t after = k + 1;
    if (is(after, ":"))
      while (after < t_.size() && t_[after].text != "{" && t_[after].text != ";") ++after;
    if (is(after, "{")) {
      Entity e;
      e.kind = EntityKind::ClassDefinition;
      e.line = t_[k].line;
      e.qualified = prefix() + std::string(t_[k].text);
      out_.push_back(std::move(e));
    }
  }
  skip_statement();
}

// class/struct/union head. Returns false when it is not a definition or forward declaration
// (e.g. "struct stat st;"), leaving the statement to the general path.
bool Parser::class_decl() {
  size_t k = i_ + 1;
  while (k < t_.size() && (t_[k].text == "__attribute__" || t_[k].text == "alignas" || t_[k].text == "[")) {
    k = t_[k].text == "[" ? skip_group(k) : skip_group(k + 1);
  }
  // Export macros before the name: "class TORCH_API Foo".
  while (ident(k) && ident(k + 1) && t_[k + 1].text != "final") ++k;
  if (!ident(k)) {
    if (is(k, "{")) {  // anonymous struct/union: skip as a statement
      return false;
    }
    return false;
  }
  std::string name(t_[k].text);
  size_t after = k + 1;
  while (is(after, "::") && ident(after + 1)) {  // out-of-line nested class definition
    name += "::" + std::string(t_[after + 1].text);
    after += 2;
  }
  if (is(after, "<")) after = skip_group(after);  // specialisation arguments
  if (is(after, "final")) ++after;
  if (is(after, ";")) {  // forward declaration
    i_ = after + 1;
    clear_pending();
    return true;
  }
  if (is(after, ":")) {
    while (after < t_.size() && t_[after].text != "{" && t_[after].text != ";") {
      after = t_[after].text == "<" ? skip_group(after) : after + 1;
    }
  }
  if (!is(after, "{")) return false;
  Entity e;
  e.kind = EntityKind::ClassDefinition;
  e.line = t_[k].line;
  e.qualified = prefix() + name;
  e.is_template = pending_is_template_;
  e.template_params = join_list(pending_template_);
  out_.push_back(std::move(e));
  Scope s{Scope::Class, name, pending_template_};
  s.class_entity = out_.size() - 1;
  scopes_.push_back(std::move(s));
  i_ = after + 1;
  clear_pending();
  return true;
}

// The general statement: a function or variable declaration/definition, or something to skip.
void Parser::statement() {
  size_t start = i_;
  bool extern_c = pending_extern_c_ || in_extern_c();
  std::vector<std::string> tparams = pending_template_;
  bool is_template = pending_is_template_ || current_template_scope();
  bool instantiation = pending_instantiation_;
  clear_pending();

  // Find the end: ';' or a body '{' at depth 0, and the first top-level '(' before any '='.
  size_t k = start, paren = SIZE_MAX, eq = SIZE_MAX;
  int angle = 0;
  while (k < t_.size()) {
    const auto& tx = t_[k].text;
    if (tx == "operator" && t_[k].kind == Tok::Ident && paren == SIZE_MAX && eq == SIZE_MAX && angle == 0) {
      // The operator's own tokens ("=", "==", "<=", "()", "new[]") are its name, not an initializer.
      size_t m = k + 1;
      if (is(m, "(") && is(m + 1, ")")) m += 2;
      while (m < t_.size() && t_[m].text != "(" && t_[m].text != ";" && t_[m].text != "{" && t_[m].text != "}") ++m;
      if (is(m, "(")) {
        paren = m;
        k = skip_group(m);
        continue;
      }
    }
    if (t_[k].kind == Tok::Punct) {
      if (tx == ";" || tx == "}") break;
      if (tx == "{") break;
      if (tx == "=" && eq == SIZE_MAX && paren == SIZE_MAX && angle == 0) eq = k;
      if (tx == "<" && paren == SIZE_MAX && eq == SIZE_MAX && k > start && ident(k - 1) &&
          t_[k - 1].text != "operator") {
        ++angle;
      } else if (tx == ">" && angle > 0 && paren == SIZE_MAX) {
        --angle;
      }
      if (tx == "(") {
        if (paren == SIZE_MAX && eq == SIZE_MAX && angle == 0) {
          // "operator()" names the function; its parameter list is the next group.
          if (k > start && t_[k - 1].text == "operator" && is(k + 1, ")")) {
            k += 2;
            continue;
          }
          paren = k;
        }
        k = skip_group(k);
        continue;
      }
      if (tx == "[") {
        k = skip_group(k);
        continue;
      }
    }
    ++k;
  }
  if (paren != SIZE_MAX) {
    if (size_t name_at = parenthesized_declarator(paren); name_at != SIZE_MAX) {
      // "void (*exitfunc)(int) = &exit;", "int (*table)[4];": a variable of pointer type.
      size_t eq_at = SIZE_MAX;
      for (size_t m = skip_group(paren); m < k;) {
        const auto& tx = t_[m].text;
        if (tx == "=") {
          eq_at = m;
          break;
        }
        m = (tx == "(" || tx == "[") ? skip_group(m) : m + 1;
      }
      variable_statement(start, k, eq_at, extern_c, name_at, paren);
      return;
    }
    function_statement(start, paren, extern_c, tparams, is_template, instantiation);
  } else {
    variable_statement(start, k, eq, extern_c);
  }
}

// "(*name)", "(&name)", "(A::*name)", "(* const name[3])" followed by a parameter list or array
// extents: the declarator of a pointer variable, not a function's parameters. Returns the index of
// the name (the last identifier before ')'), or SIZE_MAX.
size_t Parser::parenthesized_declarator(size_t paren) const {
  size_t m = paren + 1;
  while (ident(m) && is(m + 1, "::")) m += 2;  // a pointer to member's class
  if (!(is(m, "*") || is(m, "&") || is(m, "&&"))) return SIZE_MAX;
  ++m;
  while (ident(m) && is_cv(t_[m].text)) ++m;
  if (!ident(m)) return SIZE_MAX;
  size_t name = m++;
  while (is(m, "::") && ident(m + 1)) {
    name = m + 1;
    m += 2;
  }
  while (is(m, "[")) m = skip_group(m);
  if (!is(m, ")")) return SIZE_MAX;
  return is(m + 1, "(") || is(m + 1, "[") ? name : SIZE_MAX;
}

bool Parser::current_template_scope() const {
  for (const auto& s : scopes_)
    if (!s.template_params.empty()) return true;
  return false;
}

}  // namespace detail

std::vector<Entity> scan_source(std::string_view text, bool mark_macro_scopes) {
  std::vector<detail::Define> defines;
  auto toks = detail::lex(text, &defines);
  std::vector<Entity> out = detail::Parser(std::move(toks), defines).run();
  if (!mark_macro_scopes)
    for (auto& e : out) std::erase(e.qualified, kMacroMark);
  // Object-like macros that name namespaces, for the index to resolve other files' scopes with.
  for (auto& e : detail::macro_entities(defines)) out.push_back(std::move(e));
  return out;
}

}  // namespace mlc::source
