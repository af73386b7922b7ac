// Macros the scanner reads without a preprocessor: object-like #defines that name namespaces (resolved in
// this file or, marked, by the index against the build's definitions), FOO_NAMESPACE_BEGIN/END pairs, and
// macro families that define symbols (DEFINE_DISPATCH, C10_DEFINE_REGISTRY, REGISTER_*_DISPATCH).
#include "source/scanner_internal.h"

namespace mlc::source {
using namespace detail;

namespace detail {

// A name that is probably a macro: upper case, digits and '_' only.
bool macro_like(std::string_view w) {
  bool upper = false;
  for (char c : w) {
    if (c >= 'a' && c <= 'z') return false;
    upper |= c >= 'A' && c <= 'Z';
  }
  return upper;
}

std::vector<Entity> macro_entities(const std::vector<Define>& defines) {
  std::vector<Entity> out;
  for (const auto& d : defines) {
    if (!macro_like(d.name)) continue;
    auto v = macro_scope_value(d.body);
    // A number (abseil's ABSL_OPTION_USE_INLINE_NAMESPACE 1): the #if that picks a namespace macro reads it.
    if (!v) {
      auto toks = lex(d.body);
      if (toks.size() == 1 && toks[0].kind == Tok::Number) v = std::string(toks[0].text);
    }
    if (!v) continue;
    Entity e;
    e.kind = EntityKind::Macro;
    e.qualified = std::string(d.name);
    e.extra = *v;
    e.params = d.condition;  // which definition the build takes is decided with its -D flags
    out.push_back(std::move(e));
  }
  return out;
}

// The namespace a macro name stands for: its value when this file defines it, else the name
// marked with kMacroMark for the index to resolve against every #define it saw.
std::string Parser::macro_namespace(std::string_view name) const {
  if (auto it = local_macros_.find(name); it != local_macros_.end()) return it->second;
  return std::string(1, kMacroMark) + std::string(name);
}

// Statement-level macros that open or close namespaces, or define symbols (PyTorch's DEFINE_DISPATCH,
// C10_DEFINE_REGISTRY). Returns true when it consumed the statement.
bool Parser::symbol_macro() {
  std::string_view w = t_[i_].text;
  auto ends = [&](std::string_view suf) { return w.size() > suf.size() && w.substr(w.size() - suf.size()) == suf; };
  if (!at("(", 1)) {
    auto local = local_macros_.find(w);
    bool opens = ends("_BEGIN") || ends("BEGIN_NAMESPACE") || ends("NAMESPACE_BEGIN") || ends("_NAMESPACE_START") ||
                 (local != local_macros_.end() && local_opens_.count(w));
    if (opens) {
      scopes_.push_back({Scope::Namespace, macro_namespace(w), {}});
      scopes_.back().from_macro = true;
      ++i_;
      return true;
    }
    bool closes = ends("_END") || ends("END_NAMESPACE") || ends("NAMESPACE_END");
    if (closes && !scopes_.empty() && scopes_.back().from_macro) {
      scopes_.pop_back();
      ++i_;
      return true;
    }
    return false;
  }
  if (dispatch_registration(w)) return true;
  bool variable = w == "DEFINE_DISPATCH";
  bool registry = w == "C10_DEFINE_REGISTRY" || w == "C10_DEFINE_SHARED_REGISTRY" || w == "C10_DEFINE_TYPED_REGISTRY" ||
                  w == "C10_DEFINE_SHARED_REGISTRY_WITHOUT_WARNING" || w == "C10_DEFINE_REGISTRY_WITHOUT_WARNING";
  if (!(variable || registry) || !ident(i_ + 2)) return false;
  Entity e;
  e.kind = variable ? EntityKind::VariableDefinition : EntityKind::FunctionDefinition;
  e.line = t_[i_].line;
  e.qualified = prefix() + std::string(t_[i_ + 2].text);
  out_.push_back(std::move(e));
  skip_statement();
  return true;
}

// PyTorch's CPU kernel registrations. REGISTER_ARCH_DISPATCH(name, arch, fn) expands to
// "template <> name::FnPtr TORCH_API DispatchStub<name::FnPtr, struct name>::arch = fn;", defining
// the static member at::native::DispatchStub<void (*)(...), at::native::name>::arch. The entity
// is that member, with the stub as its template_args (the FnPtr is the stub's own typedef).
// REGISTER_DISPATCH defines the arch the file is compiled for (CPU_CAPABILITY: each kernel file is
// compiled once per capability); in a CUDA unit it registers a static object instead, so its
// entities carry extra = "REGISTER_DISPATCH" for the index to drop them there.
bool Parser::dispatch_registration(std::string_view w) {
  static constexpr std::string_view kAllArchs[] = {"DEFAULT", "AVX2", "AVX512", "VSX", "ZVECTOR"};
  std::vector<std::string_view> archs;
  if (w == "REGISTER_DISPATCH" || w == "REGISTER_ALL_CPU_DISPATCH" || w == "REGISTER_NO_CPU_DISPATCH") {
    archs.assign(std::begin(kAllArchs), std::end(kAllArchs));
  } else if (w == "REGISTER_ARCH_DISPATCH") {
    // the arch is its second argument, read below
  } else if (w == "REGISTER_AVX2_DISPATCH") {
    archs = {"AVX2"};
  } else if (w == "REGISTER_AVX512_DISPATCH" || w == "REGISTER_NO_AVX512_DISPATCH") {
    archs = {"AVX512"};
  } else if (w == "REGISTER_VSX_DISPATCH") {
    archs = {"VSX"};
  } else if (w == "REGISTER_ZVECTOR_DISPATCH") {
    archs = {"ZVECTOR"};
  } else {
    return false;
  }
  // The arguments at top level: the stub (possibly qualified: cpublas::gemm_stub), then the rest.
  size_t close = skip_group(i_ + 1);
  std::vector<std::pair<size_t, size_t>> args;
  size_t from = i_ + 2;
  int depth = 0;
  for (size_t k = i_ + 2; k < close; ++k) {
    const auto& tx = t_[k].text;
    if (tx == "(" || tx == "[" || tx == "{" || tx == "<") ++depth;
    if ((tx == ")" || tx == "]" || tx == "}" || tx == ">") && depth > 0 && k + 1 != close) --depth;
    if ((depth == 0 && tx == ",") || k + 1 == close) {
      args.emplace_back(from, k);
      from = k + 1;
    }
  }
  if (args.empty() || args[0].first == args[0].second) return false;
  if (w == "REGISTER_ARCH_DISPATCH") {
    if (args.size() < 2 || args[1].second != args[1].first + 1 || !ident(args[1].first)) return false;
    archs = {t_[args[1].first].text};
  }
  std::string stub = normalize_type(text(args[0].first, args[0].second), false);
  for (auto arch : archs) {
    Entity e;
    e.kind = EntityKind::VariableDefinition;
    e.line = t_[i_].line;
    e.qualified = "at::native::DispatchStub::" + std::string(arch);
    e.template_args = stub;
    if (w == "REGISTER_DISPATCH") e.extra = "REGISTER_DISPATCH";
    out_.push_back(std::move(e));
  }
  i_ = close;  // the ';' after it is optional (the macro may end in one)
  if (at(";")) ++i_;
  return true;
}

}  // namespace detail

std::optional<std::string> macro_scope_value(std::string_view body) {
  auto toks = detail::lex(body);
  if (toks.empty()) return std::string();
  std::string out;
  // "a::b" or "a": a namespace name.
  bool plain = true;
  for (size_t k = 0; k < toks.size(); ++k)
    if (!(k % 2 == 0 ? toks[k].kind == Tok::Ident : toks[k].text == "::")) plain = false;
  if (plain && toks.size() % 2 == 1) {
    for (const auto& t : toks) out += t.text;
    return out;
  }
  // "namespace a { inline namespace b {": the namespaces it opens.
  for (size_t k = 0; k < toks.size();) {
    if (toks[k].text == "inline") ++k;
    if (k >= toks.size() || toks[k].text != "namespace") return std::nullopt;
    ++k;
    while (k < toks.size() && (toks[k].kind == Tok::Ident || toks[k].text == "::")) {
      out += toks[k].text;
      ++k;
    }
    if (k >= toks.size() || toks[k].text != "{") return std::nullopt;
    ++k;
    if (k < toks.size()) out += "::";
  }
  return out;
}

}  // namespace mlc::source
