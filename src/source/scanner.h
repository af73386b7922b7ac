// A tolerant declaration scanner for C, C++, CUDA and MUSA sources. It tracks namespace and class
// scopes and extern "C", skips function bodies, and records what an undefined symbol could have come
// from: function definitions and declarations, explicit instantiations, variables and static data
// members, classes (with their key function, for vtables), and type aliases. Code it cannot parse
// is skipped, never fatal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlc::source {

enum class EntityKind : uint8_t {
  FunctionDefinition,
  FunctionDeclaration,
  ExplicitInstantiation,
  VariableDefinition,
  VariableDeclaration,
  ClassDefinition,
  ClassInstantiation,
  Alias,
  Macro,  // an object-like #define naming namespaces: qualified = macro, extra = "a::b" (may be empty),
          // or a number (an #if reads it); params = the #if branch it is defined in (preprocessor.h; ""
          // when unconditional)
};
const char* to_string(EntityKind kind);

// Lists inside an Entity are joined with this separator (keeps the index compact).
inline constexpr char kListSep = '\x1f';

struct Entity {
  EntityKind kind = EntityKind::FunctionDeclaration;
  uint32_t line = 0;
  bool is_template = false;  // a template, not an instantiation of one
  bool is_inline = false;    // defined in a class body, or declared inline/constexpr
  bool extern_c = false;
  bool const_method = false;
  std::string qualified;        // "at::musa::cub::exclusive_sum_in_common_type"
  std::string params;           // normalized parameter types, kListSep-joined
  std::string template_params;  // template parameter names in scope, kListSep-joined
  std::string template_args;    // explicit instantiation/specialisation arguments, normalized
  std::string extra;            // ClassDefinition: key function "name(params)"; Alias: normalized target
  // A definition written with a qualifier (A::f) where `using namespace N;` is in force: the names the
  // compiler may find it under instead (N::A::f), kListSep-joined. The index keeps the one another
  // declaration confirms (SourceIndex: C++ [namespace.udir], a qualifier is looked up through it).
  std::string using_qualified;
  std::string_view name() const;  // last component of `qualified`
};

// mark_macro_scopes: keep kMacroMark on scope names that may be macros defined elsewhere (the index
// resolves them); otherwise they are returned as written.
std::vector<Entity> scan_source(std::string_view text, bool mark_macro_scopes = false);

// A function declaration as written (comments and export macros dropped, spacing canonical:
// "void** devPtr"), found by its name and the line scan_source reported for it.
struct RawDeclaration {
  std::string return_type;  // "__host__ musaError_t" (storage class and API macros removed)
  std::string name;
  std::vector<std::string> params;  // "void** devPtr", "size_t size" (default arguments removed)
  std::vector<std::string> param_names;
  std::string trailing;  // " const", " noexcept"...
  bool extern_c = false;
};
// `api_macros`: the calling-convention macros a runtime's headers write before a name
// (backend::api_macros(): CUDARTAPI_CDECL, MUSARTAPI_CDECL), dropped as storage classes are.
std::optional<RawDeclaration> raw_declaration(std::string_view text, uint32_t line, std::string_view name,
                                              const std::vector<std::string>& api_macros);

// The canonical, compact spelling of a type used for comparisons: typedefs of fixed-width integers
// resolved (int64_t -> long, size_t -> unsigned long), cv-qualifiers after what they qualify, names
// reduced to their last component, no spaces except between two words. For a parameter, the
// parameter name, a default value and a top-level const are dropped.
std::string normalize_type(std::string_view type, bool is_parameter);

// Marks a scope component that is a macro name ("\x01GFLAGS_NAMESPACE"); the index replaces it with
// the macro's value when some indexed file (or generated header) defines it.
inline constexpr char kMacroMark = '\x01';

// The namespaces an object-like macro body names: "google" -> "google",
// "namespace fmt { inline namespace v9 {" -> "fmt::v9", "" -> "". nullopt for anything else.
std::optional<std::string> macro_scope_value(std::string_view body);

// One spelling for an operator's name, shared by sources and demangled names: "operator*=",
// "operator new[]", "operator\"\"_km", and a conversion's type normalized ("operator char const*").
std::string canonical_operator_name(std::string_view name);

std::vector<std::string> split_list(std::string_view joined);
std::string join_list(const std::vector<std::string>& items);

}  // namespace mlc::source
