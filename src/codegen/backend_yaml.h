// torchgen's backend yaml, read as data: which kernels a backend's generated registration code calls
// (gen_backend_stubs' `backend`, `cpp_namespace`, `class_name`, `supported`, `autograd`, `symint`;
// torch_musa's `- func: op.overload` list with `dispatch: PrivateUse1: Kernel`), each with its
// file:line, so that an undefined <cpp_namespace>::<Backend>NativeFunctions::<op> is traced to the
// entry a person edits.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "build/model.h"
#include "common/result.h"
#include "demangle/symbol_name.h"

namespace mlc::codegen {

// One listed operator: "add.Tensor" at backend.yaml:7, and the C++ function the generated code calls.
struct KernelEntry {
  std::string op;        // as written: "add.Tensor", "abs", "add_.Tensor"
  std::string base;      // "add", "add_"
  std::string overload;  // "Tensor", "" for the default overload
  uint32_t line = 0;
  std::string section;  // supported | autograd | symint | full_codegen | func (torch_musa)
  std::string scope;    // "demo::PrivateUse1NativeFunctions", "at::musa"
  std::string kernel;   // explicit kernel name (torch_musa's dispatch value), else "" (torchgen's name)
};

// An operator's schema in native_functions.yaml: its parameters as type keys ("Tensor", "Scalar?",
// "int[]") in the dispatcher's order, and whether it has out= arguments (its C++ name gains "_out").
struct OpSchema {
  std::vector<std::string> args;
  bool out = false;
};

struct BackendYaml {
  std::string path;     // absolute
  std::string backend;  // PrivateUse1, XLA, ...
  std::string cpp_namespace;
  std::string class_name;  // default <backend>NativeFunctions
  std::vector<KernelEntry> entries;
  std::string output_dir;                   // where gen_backend_stubs wrote its files, when the build says so
  std::string native_yaml;                  // the native_functions.yaml the generator read, when known
  std::map<std::string, OpSchema> schemas;  // of the listed ops, from native_yaml (read_schemas)
};

// Fills y.schemas from y.native_yaml (nothing when it is empty or unreadable).
void read_schemas(BackendYaml& y);

// Reads a backend yaml (either form). An unreadable file, or one that is neither form, is an error.
Result<BackendYaml> read_backend_yaml(const std::string& path);

// The backend yamls the build passes to gen_backend_stubs (custom commands in build.ninja or the
// Makefiles' build.make), with their output directories and the generator's native_functions.yaml;
// else backend yamls named *native_functions*.yaml or *musa_functions.yaml under the source tree.
struct FoundYaml {
  std::string yaml, output_dir, native_yaml;
};
// Each with the directory that holds its generated <class_name>.h: the generator's -o, else a directory
// the build's compiles include (-I), else where it lies in the source tree.
std::vector<FoundYaml> find_backend_yamls(const build::Model& build);

// The build's include directories (-I, -isystem): compile_commands.json, else the Makefiles' flags.make
// and build.ninja's INCLUDES.
std::vector<std::string> include_dirs(const build::Model& build);

// The generated declaration of a kernel: the header gen_backend_stubs wrote (or `headers` searched),
// file:line and the declaration's text.
struct GeneratedDeclaration {
  std::string file;
  uint32_t line = 0;
  std::string text;  // "static at::Tensor add(const at::Tensor & self, const at::Scalar & other, ...)"
  std::string return_type;
  std::vector<std::string> params;  // as written, with names
};

// The yaml entry (or entries, when the schema cannot tell overloads apart) a symbol names, and its
// generated declaration. Empty when the symbol is no kernel of the yaml.
struct KernelMatch {
  const BackendYaml* yaml = nullptr;
  std::vector<const KernelEntry*> entries;  // best first
  std::optional<GeneratedDeclaration> declaration;
};
KernelMatch match_kernel(const std::vector<BackendYaml>& yamls, const demangle::SymbolName& symbol);

}  // namespace mlc::codegen
