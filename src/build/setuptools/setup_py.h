// A setup.py read as text, never run: the extension modules it declares with Extension, CppExtension or
// CUDAExtension (setuptools, torch.utils.cpp_extension), each with its name and its literal sources list
// (inline, or a module-level variable assigned a literal once), every entry with its byte range, so that
// a missing source can be added beside its siblings. Sources that are no literal (glob.glob(...),
// os.path.join(...) entries, a comprehension) are read far enough to say what the user should write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace mlc::build::setuptools {

struct SourceEntry {
  std::string value;  // the string literal's value (the path as written)
  uint32_t line = 0;
  size_t begin = 0, end = 0;  // the literal's byte range, quotes included
};

// sources=glob.glob("csrc/*.cpp") (also glob(...), sorted(...) or list(...) around it): the pattern is
// relative to setup.py's directory, where setuptools runs.
struct GlobCall {
  std::string text;     // the call as written
  std::string pattern;  // the string literal's value
  bool recursive = false;
};

// An element os.path.join(<dir>, "a", "b.cpp") of a sources list: the arguments before the trailing
// string literals (the directory expression, "" when all are literals) and those literals.
struct JoinEntry {
  std::string callee;    // "os.path.join", "osp.join", "join" as written
  std::string dir_args;  // "ROOT", "os.path.dirname(__file__)"; "" when every argument is a literal
  std::vector<std::string> tail;
  char quote = '"';
};

// Which setuptools class an extension is declared with (torch.utils.cpp_extension's two, or setuptools').
enum class ExtensionKind { Extension, CppExtension, CUDAExtension };
// Its name as a setup.py calls it, without a module prefix: "CUDAExtension".
std::string_view to_string(ExtensionKind kind);

struct ExtensionDecl {
  ExtensionKind kind = ExtensionKind::Extension;
  std::string name;   // "myext._C"; "" when the name is not a string literal
  uint32_t line = 0;  // the call's line
  // The literal list (or tuple) of sources, or why there is none to edit.
  bool literal_sources = false;
  std::string not_literal;  // "sources= is the variable SRCS, assigned 2 times", "no sources= argument"...
  std::vector<SourceEntry> sources;
  size_t list_begin = 0, list_end = 0;  // the brackets: '[' or '(', and the byte after the closing one
  // sources=SRCS with SRCS assigned a literal once at module level: the literal is SRCS's.
  std::string variable;
  uint32_t variable_line = 0;
  // What the sources are when no literal: a glob, or a list of os.path.join calls only.
  std::optional<GlobCall> glob;
  std::vector<JoinEntry> joins;
};

struct SetupPy {
  std::string path;  // absolute
  std::string text;
  std::vector<ExtensionDecl> extensions;
};

// Reads `path`. An unreadable file is an error naming it; a file with no extension call is no error (no
// extensions); a malformed one (an unterminated string or bracket) is read as far as it goes.
Result<SetupPy> read_setup_py(const std::string& path);
// The same, of `text` as the file at `path` would hold it (an edit not yet written).
SetupPy parse_setup_py(const std::string& path, std::string text);

// The extension whose built module is `module` (a path: <dir>/<leaf>.cpython-311-x86_64-linux-gnu.so):
// the one whose dotted name is the module's path below the directory of setup.py (an in-place build) or
// ends the module's path (an installed one). Null when none.
const ExtensionDecl* extension_for(const SetupPy& setup, const std::string& module);

// The setup.py that builds `module` and the extension in it: the first setup.py that declares an
// extension for the module, looked for in the module's directory and up to 8 directories above it,
// then likewise from `near` (a source the module compiles, for a build that installed the module
// elsewhere). Nullopt when none does.
struct ExtensionSite {
  SetupPy setup;
  size_t index = 0;  // into setup.extensions
  const ExtensionDecl& extension() const { return setup.extensions[index]; }
};
std::optional<ExtensionSite> find_extension(const std::string& module, const std::string& near);

// How a setup.py names `file` in a sources= list: relative to setup.py's directory when it lies below
// it (setuptools runs from there), else its absolute path.
std::string entry_for(const SetupPy& setup, const std::string& file);

// `text` with `entry` added to the extension's literal list after its last entry, in the quote style,
// indentation and separator of its neighbours, after the last entry's line comment. Nullopt when the
// list is not a literal.
std::optional<std::string> with_source_added(const SetupPy& setup, const ExtensionDecl& ext, const std::string& entry);

// What the user writes for `file` when the sources are no literal to edit: a glob that does not match
// it (a list to add beside the glob), one that does (the module was built before the file: rebuild), or
// the os.path.join(...) its siblings would have, with their directory expression. `Other` when none fits.
struct HandEdit {
  enum class Kind { Other, GlobMisses, GlobCovers, JoinEntry } kind = Kind::Other;
  std::string glob;        // GlobMisses, GlobCovers: the call as written
  std::string expression;  // JoinEntry: the call to add
};
HandEdit hand_edit(const SetupPy& setup, const ExtensionDecl& ext, const std::string& file);

}  // namespace mlc::build::setuptools
