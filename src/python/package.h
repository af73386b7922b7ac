// What Python runs before it imports a file, read from the package's sources (never run): importing
// `pkg.sub._C` executes pkg/__init__.py, then pkg/sub/__init__.py, and whatever modules of the package they
// import, before the extension is loaded. A module-level `import torch` anywhere in that chain means the
// extension is loaded into a process where torch's import is done.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <tbb/concurrent_unordered_map.h>

namespace mlc::python {

// The packages above a file: the directories from the topmost one holding __init__.py down to the file's
// own, each with its __init__.py. Empty when the file's directory is no package.
struct PackageChain {
  std::string site;                   // the directory holding the top package ("" when none)
  std::vector<std::string> packages;  // package directories, top first
};
PackageChain package_chain(const std::string& file);

// The module of the chain (an __init__.py, or a module of the same package one of them imports, followed
// to at most `limit` files) that imports `package` at module level: `import torch`, `import torch.nn as nn`,
// `from torch import ...`, `import os, torch`, also inside a top-level try/if/with block, not inside a def
// or class. Nullopt when none does.
std::optional<std::string> module_importing(const PackageChain& chain, const std::string& package, size_t limit = 64);

// An extension module whose import runs before a file's: importing `vext._v` runs vext/__init__.py, whose
// module-level `import aaa` runs aaa/__init__.py, whose `from . import _a` loads aaa/_a.*.so first.
struct ImportedFirst {
  std::string module;    // the extension module's file
  std::string importer;  // the Python file whose module-level line imports it
};

// The extension modules that importing the chain's packages loads, in the order CPython runs them: each
// __init__.py of the chain top first, each module-level import followed into the module or package it names,
// across packages of `site_dirs` (the chain's own site directory first), depth first, each file once, at most
// `limit` Python files read. Stops at `target` (the file whose import is asked about): what comes after it
// runs after it. torch and its subpackages are not followed (the import of torch is planned on its own), nor
// modules not found in those directories (the standard library).
// What the walks of a run's chains share, read once: each Python file's module-level import lines, and where
// each module name is found under each root (a venv's 800 files walk the same packages' imports again and again).
// What CPython's import finds for a dotted name under a root: a package's __init__.py, a module's .py, or an
// extension module (name.so, name.abi3.so, name.<tag>.so; the first in name order), with the __init__.py
// files of the packages above it, in the order they run.
struct FoundModule {
  std::vector<std::string> inits;  // the packages' __init__.py, top first
  std::string py;                  // the module's own .py ("" for a package or an extension)
  std::string extension;           // the extension module's file
};
// The maps are asked and filled from several threads at once (a tree's loads plan in parallel, its
// package walks run in parallel) without a lock: TBB's concurrent maps, whose elements never move. What a
// look-up reads or lists is done before it is stored, and the first answer stored is kept. (A mutex around
// std::maps made a venv's 110 parallel walks wait on each other: 5.6 s of CPU for 364 ms of wall on 16
// cores.)
struct PairHash {
  size_t operator()(const std::pair<std::string, std::string>& p) const {
    return std::hash<std::string>{}(p.first) * 31 ^ std::hash<std::string>{}(p.second);
  }
};
struct ImportCache {
  tbb::concurrent_unordered_map<std::string, std::vector<std::string>> import_lines;  // by file: its import lines
  tbb::concurrent_unordered_map<std::string, std::vector<std::string>> listings;  // by directory: its sorted entries
  tbb::concurrent_unordered_map<std::pair<std::string, std::string>, std::optional<FoundModule>, PairHash>
      found;  // by (root, name)
};
std::vector<ImportedFirst> extensions_imported_first(const PackageChain& chain,
                                                     const std::vector<std::string>& site_dirs,
                                                     const std::string& target, size_t limit = 256,
                                                     ImportCache* cache = nullptr);

// Whether one line of Python source imports `package` (the line's own text; indentation is the caller's).
bool line_imports(const std::string& line, const std::string& package);

}  // namespace mlc::python
