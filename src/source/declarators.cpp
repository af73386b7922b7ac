// What a statement declares once the parser has found its extent: a function (its declarator, qualified
// name, normalized parameters, template arguments, and the class's key function for vtables) or a variable
// (static data members, pointer declarators, array extents). Non-static data members have no symbol.
#include "source/scanner_internal.h"

namespace mlc::source::detail {

bool Parser::is_decl_keyword(std::string_view w) {
  return w == "static" || w == "inline" || w == "constexpr" || w == "virtual" || w == "explicit" || w == "extern" ||
         w == "__global__" || w == "__device__" || w == "__host__" || w == "__forceinline__" || w == "__inline__" ||
         w == "consteval" || w == "thread_local" || w == "__noinline__";
}

// Walks back from '(' over "name", "operator ...", "~name", "<args>" and "A::"; nullopt when no name
// precedes it.
std::optional<Parser::Declarator> Parser::function_declarator(size_t start, size_t paren) {
  Declarator out;
  size_t d = paren;
  size_t op = SIZE_MAX;
  for (size_t m = start; m < paren; ++m)
    if (t_[m].text == "operator") op = m;
  if (op != SIZE_MAX) {
    out.name = canonical_operator_name("operator " + text(op + 1, paren));
    d = op;
  } else {
    if (d > start && t_[d - 1].text == ">") {  // f<int>(...)
      int depth = 0;
      size_t m = d;
      while (m-- > start) {
        if (t_[m].text == ">") ++depth;
        if (t_[m].text == "<" && --depth == 0) break;
      }
      if (m > start && m < d && ident(m - 1)) {
        out.targs = normalize_args(text(m + 1, d - 1));
        d = m;
      }
    }
    if (d == start || !ident(d - 1)) return std::nullopt;
    out.name = std::string(t_[d - 1].text);
    --d;
    if (d > start && t_[d - 1].text == "~") {
      out.name = "~" + out.name;
      --d;
    }
  }
  // Qualifiers "A::B<T>::"; a leading global "::name" is fine.
  while (d >= start + 2 && t_[d - 1].text == "::") {
    size_t m = d - 1;
    if (m > start && t_[m - 1].text == ">") {
      int depth = 0;
      while (m-- > start) {
        if (t_[m].text == ">") ++depth;
        if (t_[m].text == "<" && --depth == 0) break;
      }
    }
    if (m == start || !ident(m - 1)) break;
    out.quals.insert(out.quals.begin(), std::string(t_[m - 1].text));
    d = m - 1;
  }
  out.begin = d;
  return out;
}

// The passes: the declarator, the specifiers before it, the parameters and what follows them, then
// the entity (and the class's key function).
void Parser::function_statement(size_t start, size_t paren, bool extern_c, std::vector<std::string> tparams,
                                bool is_template, bool instantiation) {
  std::optional<Declarator> decl = function_declarator(start, paren);
  if (!decl) {
    skip_rest(paren);
    return;
  }
  const std::string& name = decl->name;
  const std::vector<std::string>& quals = decl->quals;
  const size_t d = decl->begin;
  // What precedes the declarator: return type and specifiers.
  bool has_type = false, is_inline = false, is_virtual = false;
  for (size_t m = start; m < d; ++m) {
    std::string_view w = t_[m].text;
    if (w == "inline" || w == "constexpr" || w == "__forceinline__" || w == "__inline__") is_inline = true;
    else if (w == "virtual") is_virtual = true;
    if (!is_decl_keyword(w)) has_type = true;
  }
  Scope* cls = current_class();
  bool ctor_like = name[0] == '~' || name.rfind("operator", 0) == 0 || (cls && quals.empty() && name == cls->name) ||
                   (!quals.empty() && quals.back() == name);
  if (!has_type && !ctor_like) {  // a macro invocation such as REGISTER_DISPATCH(...)
    skip_rest(paren);
    return;
  }
  if (d > start && t_[d - 1].text == "(") {  // "void (*fp)(int)": a variable of function type
    skip_rest(paren);
    return;
  }
  size_t close = skip_group(paren);
  std::vector<std::string> params = parameter_types(paren, close);
  // After the parameters: qualifiers, "= 0", a body, a ctor initializer list.
  const FunctionTail tail = function_tail(close);
  bool body = tail.body;
  i_ = tail.end;
  // "A::~A() = default;" outside the class defines it there; inside the class it defines nothing.
  if (tail.deleted || (tail.defaulted && quals.empty())) return;
  if (tail.defaulted) body = true;

  Entity e;
  e.line = t_[paren].line;
  std::string qual;
  for (const auto& q : quals) qual += q + "::";
  e.qualified = prefix() + qual + name;
  e.using_qualified = using_alternatives(quals, name);
  e.params = join_list(params);
  e.const_method = tail.const_method;
  e.extern_c = extern_c;
  std::vector<std::string> all_tparams = scope_template_params();
  all_tparams.insert(all_tparams.end(), tparams.begin(), tparams.end());
  e.template_params = join_list(all_tparams);
  e.is_template = is_template && !instantiation;
  e.template_args = decl->targs;
  e.is_inline = is_inline || (body && cls != nullptr);
  if (instantiation) {
    e.kind = EntityKind::ExplicitInstantiation;
  } else if (body) {
    e.kind = EntityKind::FunctionDefinition;
  } else {
    e.kind = EntityKind::FunctionDeclaration;
  }
  // The key function (Itanium ABI): the first non-pure, non-inline virtual function declared,
  // not defined, in the class body. Its definition's file emits the vtable.
  if (cls && !cls->key_found && is_virtual && !tail.pure && !body && !is_inline && cls->class_entity < out_.size()) {
    out_[cls->class_entity].extra = name + "(" + e.params + ")";
    cls->key_found = true;
  }
  out_.push_back(std::move(e));
}

// The normalized types of the parameter list from '(' at paren to its ')' just before close (a lone
// "void" is no parameter).
std::vector<std::string> Parser::parameter_types(size_t paren, size_t close) const {
  std::vector<std::string> params;
  size_t ps = paren + 1;
  int depth = 0;
  for (size_t m = paren + 1; m < close; ++m) {
    const auto& tx = t_[m].text;
    if (tx == "(" || tx == "<" || tx == "[" || tx == "{") ++depth;
    if ((tx == ")" || tx == ">" || tx == "]" || tx == "}") && depth > 0 && m + 1 != close) --depth;
    if ((depth == 0 && tx == ",") || m + 1 == close) {
      size_t pe = m + 1 == close ? m : m;
      std::string p = normalize_type(text(ps, pe), true);
      if (!p.empty() && p != "void") params.push_back(p);
      ps = m + 1;
    }
  }
  return params;
}

// After the parameters: qualifiers, "= 0", "= default", "= delete", a constructor's initializer list
// and a body, up to the end of the statement.
Parser::FunctionTail Parser::function_tail(size_t close) const {
  size_t k = close;
  FunctionTail f;
  while (k < t_.size()) {
    const auto& tx = t_[k].text;
    if (tx == ";") {
      ++k;
      break;
    }
    if (tx == "{") {
      f.body = true;
      k = skip_group(k);
      break;
    }
    if (tx == "}") break;
    if (tx == "const") f.const_method = true;
    if (tx == "=" && is(k + 1, "0")) f.pure = true;
    if (tx == "=" && is(k + 1, "default")) f.defaulted = true;
    if (tx == "=" && is(k + 1, "delete")) f.deleted = true;
    if (tx == "(" || tx == "[") {
      k = skip_group(k);
      continue;
    }
    if (tx == ":" && !f.body) {  // constructor initializer list
      ++k;
      while (k < t_.size()) {
        if (t_[k].text == "(") {
          k = skip_group(k);
          continue;
        }
        if (t_[k].text == "{") {
          bool brace_init = k > 0 && (ident(k - 1) || t_[k - 1].text == ">");
          if (brace_init) {
            k = skip_group(k);
            continue;
          }
          break;
        }
        if (t_[k].text == ";" || t_[k].text == "}") break;
        ++k;
      }
      continue;
    }
    ++k;
  }
  f.end = k;
  return f;
}

void Parser::skip_rest(size_t from) {
  i_ = from;
  skip_statement();
}

// name_at/specifiers_end: a parenthesized declarator ("void (*name)(int)") names the variable at
// name_at; the specifiers and type are the tokens before the '(' at specifiers_end.
void Parser::variable_statement(size_t start, size_t end, size_t eq, bool extern_c, size_t name_at,
                                size_t specifiers_end) {
  // end: ';', '{' or '}' (t_[end]); eq: first top-level '='.
  size_t name_end = eq != SIZE_MAX ? eq : end;
  bool brace_init = end < t_.size() && t_[end].text == "{" && eq == SIZE_MAX;
  size_t last = name_at != SIZE_MAX ? name_at + 1 : name_end;
  while (name_at == SIZE_MAX && last > start &&
         t_[last - 1].text == "]") {  // "T name[N][M]": step back over the extents
    size_t m = last - 1;
    int depth = 0;
    bool matched = false;
    while (m > start) {
      --m;
      if (t_[m].text == "]") {
        ++depth;
      } else if (t_[m].text == "[") {
        if (depth == 0) {
          matched = true;
          break;
        }
        --depth;
      }
    }
    if (!matched) {  // unbalanced: not a declaration we can read
      last = start;
      break;
    }
    last = m;
  }
  bool ok = last > start + 1 && ident(last - 1);
  std::string name = ok ? std::string(t_[last - 1].text) : "";
  std::vector<std::string> quals;
  size_t d = last - (ok ? 1 : 0);
  while (ok && d >= start + 2 && t_[d - 1].text == "::" && ident(d - 2)) {
    quals.insert(quals.begin(), std::string(t_[d - 2].text));
    d -= 2;
  }
  bool is_extern = false, is_static = false, has_type = false, is_inline = false;
  for (size_t m = start; m < (specifiers_end != SIZE_MAX ? specifiers_end : d); ++m) {
    auto w = t_[m].text;
    if (w == "extern") is_extern = true;
    if (w == "static") is_static = true;
    if (w == "inline" || w == "constexpr") is_inline = true;
    if (!is_decl_keyword(w) && w != "const" && w != "mutable") has_type = true;
  }
  // Skip to the end of the statement (initialisers may contain braces).
  i_ = end;
  if (i_ < t_.size() && t_[i_].text == "{") {
    i_ = skip_group(i_);
    // "struct { ... } table = {{1}, {0}};": the initializer's braces are groups, not scope closers.
    while (i_ < t_.size() && t_[i_].text != ";" && t_[i_].text != "}") {
      const auto& tx = t_[i_].text;
      i_ = (tx == "{" || tx == "(" || tx == "[") ? skip_group(i_) : i_ + 1;
    }
    if (at(";")) ++i_;
  } else if (at(";")) {
    ++i_;
  }
  if (!ok || !has_type || name == "operator") return;
  if (ident_start(name[0]) && std::isupper(static_cast<unsigned char>(name[0])) && d == start + 1 && !brace_init &&
      eq == SIZE_MAX) {
    // "FOO BAR;" is as likely a macro as a variable; keep it, it only costs an index entry.
  }
  Entity e;
  e.line = t_[last - 1].line;
  std::string qual;
  for (const auto& q : quals) qual += q + "::";
  e.qualified = prefix() + qual + name;
  e.using_qualified = using_alternatives(quals, name);
  e.extern_c = extern_c;
  e.is_inline = is_inline;
  Scope* cls = current_class();
  bool declaration = is_extern && eq == SIZE_MAX && !brace_init;
  if (cls && is_static && !is_inline) declaration = true;  // static data member declared in the class
  if (cls && !is_static) return;                           // non-static data members have no symbol
  e.kind = declaration ? EntityKind::VariableDeclaration : EntityKind::VariableDefinition;
  std::vector<std::string> tp = scope_template_params();
  e.template_params = join_list(tp);
  e.is_template = !tp.empty();
  out_.push_back(std::move(e));
}

}  // namespace mlc::source::detail
