// What the scanner's files share, and no part of the source pass's interface: the lexer's tokens and the
// #defines it records (lexer.cpp), two word tests of the type normaliser (type_names.cpp), and the statement
// parser, whose member functions live in scanner.cpp, declarators.cpp and macros.cpp.
#pragma once

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "source/scanner.h"

namespace mlc::source::detail {

enum class Tok : uint8_t { Ident, Punct, String, Number };

struct Token {
  Tok kind;
  std::string_view text;
  uint32_t line;
};

inline bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }
inline bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// An object-like "#define NAME body" (body with comments and continuations as written), and the
// #if branch it sits in (preprocessor.h: "" when unconditional).
struct Define {
  std::string_view name;
  std::string body;
  std::string condition = {};
};

// lexer.cpp: the tokens of `s`; with `defines`, also its object-like #defines and their #if branch.
std::vector<Token> lex(std::string_view s, std::vector<Define>* defines = nullptr);

// type_names.cpp
bool is_builtin_word(std::string_view w);
bool is_cv(std::string_view w);

// A namespace, class or linkage block the parser is inside.
struct Scope {
  enum Kind { Namespace, Class, Linkage } kind;  // Linkage: extern "C" { } or extern "C++" { }
  std::string name;
  std::vector<std::string> template_params;
  size_t class_entity = SIZE_MAX;  // the ClassDefinition entity, for the key function
  bool key_found = false;
  bool c_linkage = false;
  bool from_macro = false;               // opened by a FOO_NAMESPACE_BEGIN-style macro
  std::vector<std::string> usings = {};  // namespaces its `using namespace N;` directives name, resolved
};

// macros.cpp
bool macro_like(std::string_view w);  // upper case, digits and '_' only: probably a macro
std::vector<Entity> macro_entities(const std::vector<Define>& defines);  // the ones naming namespaces

// Statement-level parser over the tokens of one file. Scopes and statements: scanner.cpp; what a
// statement declares (functions, variables): declarators.cpp; macros that open namespaces or define
// symbols: macros.cpp.
class Parser {
 public:
  explicit Parser(std::vector<Token> toks, const std::vector<Define>& defines);
  std::vector<Entity> run();

 private:
  bool at(std::string_view text, size_t k = 0) const { return i_ + k < t_.size() && t_[i_ + k].text == text; }
  bool is(size_t k, std::string_view text) const { return k < t_.size() && t_[k].text == text; }
  bool ident(size_t k) const { return k < t_.size() && t_[k].kind == Tok::Ident; }

  // scanner.cpp: token helpers, scopes, and the statements that open them.
  // Index just past the bracket group starting at k (t_[k] is the opener).
  size_t skip_group(size_t k) const;
  std::string prefix() const;
  // The other names of a definition qualified by `quals`, through the using-directives in force.
  std::string using_alternatives(const std::vector<std::string>& quals, const std::string& name) const;
  bool in_extern_c() const;
  Scope* current_class();
  std::vector<std::string> scope_template_params() const;
  std::string text(size_t from, size_t to) const;
  void skip_statement();
  std::vector<std::string> template_parameter_names(size_t open, size_t close) const;
  void declaration();
  void namespace_decl();
  void template_decl();
  std::string normalize_args(const std::string& inside);
  void clear_pending();
  void using_decl();
  void typedef_decl();
  // "enum [class] X [: T] { ... };": the type is known; its body is skipped.
  void enum_decl();
  // class/struct/union head. Returns false when it is not a definition or forward declaration
  // (e.g. "struct stat st;"), leaving the statement to the general path.
  bool class_decl();
  // The general statement: a function or variable declaration/definition, or something to skip.
  void statement();
  // "(*name)", "(&name)", "(A::*name)", "(* const name[3])" followed by a parameter list or array
  // extents: the declarator of a pointer variable, not a function's parameters. Returns the index of
  // the name (the last identifier before ')'), or SIZE_MAX.
  size_t parenthesized_declarator(size_t paren) const;
  bool current_template_scope() const;

  // declarators.cpp: what a function or variable statement declares.
  static bool is_decl_keyword(std::string_view w);
  void function_statement(size_t start, size_t paren, bool extern_c, std::vector<std::string> tparams, bool is_template,
                          bool instantiation);
  // A function's declarator, read back from its '(': the name, its template arguments, the qualifiers
  // before it ("A::B<T>::"), and its first token (what precedes is the return type and specifiers).
  struct Declarator {
    std::string name, targs;
    std::vector<std::string> quals;
    size_t begin = 0;
  };
  std::optional<Declarator> function_declarator(size_t start, size_t paren);
  std::vector<std::string> parameter_types(size_t paren, size_t close) const;
  struct FunctionTail {
    size_t end = 0;  // just past the statement
    bool const_method = false, pure = false, body = false, defaulted = false, deleted = false;
  };
  FunctionTail function_tail(size_t close) const;
  void skip_rest(size_t from);
  // name_at/specifiers_end: a parenthesized declarator ("void (*name)(int)") names the variable at
  // name_at; the specifiers and type are the tokens before the '(' at specifiers_end.
  void variable_statement(size_t start, size_t end, size_t eq, bool extern_c, size_t name_at = SIZE_MAX,
                          size_t specifiers_end = SIZE_MAX);

  // macros.cpp
  // The namespace a macro name stands for: its value when this file defines it, else the name
  // marked with kMacroMark for the index to resolve against every #define it saw.
  std::string macro_namespace(std::string_view name) const;
  // Statement-level macros that open or close namespaces, or define symbols (PyTorch's DEFINE_DISPATCH,
  // C10_DEFINE_REGISTRY). Returns true when it consumed the statement.
  bool symbol_macro();
  // PyTorch's CPU kernel registrations. REGISTER_ARCH_DISPATCH(name, arch, fn) expands to
  // "template <> name::FnPtr TORCH_API DispatchStub<name::FnPtr, struct name>::arch = fn;", defining
  // the static member at::native::DispatchStub<void (*)(...), at::native::name>::arch. The entity
  // is that member, with the stub as its template_args (the FnPtr is the stub's own typedef).
  // REGISTER_DISPATCH defines the arch the file is compiled for (CPU_CAPABILITY: each kernel file is
  // compiled once per capability); in a CUDA unit it registers a static object instead, so its
  // entities carry extra = "REGISTER_DISPATCH" for the index to drop them there.
  bool dispatch_registration(std::string_view w);

  std::unordered_map<std::string_view, std::string> local_macros_;
  std::unordered_map<std::string_view, bool> local_opens_;
  std::vector<Token> t_;
  size_t i_ = 0;
  std::vector<Scope> scopes_;
  std::vector<std::string> file_usings_;  // using-directives at file scope
  std::vector<Entity> out_;
  std::vector<std::string> pending_template_;
  bool pending_is_template_ = false;
  bool pending_specialization_ = false;
  bool pending_instantiation_ = false;
  bool pending_extern_c_ = false;
};

}  // namespace mlc::source::detail
