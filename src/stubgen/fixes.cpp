// A plan's whole-file edits as line replacements, grouped into the fixes SARIF attaches to results.
#include <cctype>
#include <map>

#include "report/escape.h"
#include "stubgen/diff.h"
#include "stubgen/stubgen.h"

namespace mlc::stubgen {
namespace {

// Columns count Unicode code points (the SARIF run says so): every byte but a continuation byte.
int code_points(std::string_view s) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The replacements of one file, in its original line numbers. A deletion that runs to the end of a
// last line without a newline ends at that line's end column, since there is no next line to end at.
std::vector<TextEdit> edits_of(const FileEdit& f) {
  std::vector<TextEdit> edits;
  size_t lines = 0;
  for (char c : f.before) lines += c == '\n';
  bool unterminated = !f.before.empty() && f.before.back() != '\n';
  if (unterminated) ++lines;
  for (auto& h : line_hunks(f.before, f.after)) {
    TextEdit e{.file = f.path, .start_line = static_cast<int>(h.first) + 1,
               .end_line = static_cast<int>(h.first + h.count) + 1, .end_column = 1, .inserted = std::move(h.inserted)};
    if (h.count > 0 && h.first + h.count == lines && unterminated) {
      e.end_line = static_cast<int>(lines);
      e.end_column = code_points(std::string_view(f.before).substr(f.before.rfind('\n') + 1)) + 1;
    }
    edits.push_back(std::move(e));
  }
  return edits;
}

struct Group {
  std::string description;
  std::vector<TextEdit> edits;
};

}  // namespace

std::vector<SymbolFix> sarif_fixes(const Plan& plan, const Report& report) {
  std::vector<Group> groups;
  std::map<std::string, std::vector<size_t>> groups_of;  // mangled symbol -> indexes into groups
  auto add = [&](const std::vector<const FileEdit*>& files, const std::string& what) {
    Group g;
    std::vector<std::string> symbols;
    std::string how;
    for (const FileEdit* f : files) {
      if (!f->changed()) continue;
      if (!is_valid_utf8(f->before) || !is_valid_utf8(f->after)) return;
      auto edits = edits_of(*f);
      if (edits.empty()) continue;
      g.edits.insert(g.edits.end(), edits.begin(), edits.end());
      how += std::string(how.empty() ? "" : ", ") + (f->created ? "create " : "edit ") + f->path;
      symbols.insert(symbols.end(), f->symbols.begin(), f->symbols.end());
    }
    if (g.edits.empty()) return;
    g.description = what + " (as musa-stubgen --apply does): " + how;
    for (const auto& s : symbols) {
      auto& list = groups_of[s];
      if (list.empty() || list.back() != groups.size()) list.push_back(groups.size());
    }
    groups.push_back(std::move(g));
  };
  // The stub files belong together: the source includes the header and the runtime header.
  std::vector<const FileEdit*> stub_files;
  for (const auto& f : plan.stub_files) stub_files.push_back(&f);
  if (!plan.stubs.empty()) {
    add(stub_files, "Add " + std::to_string(plan.stubs.size()) + " stub" + (plan.stubs.size() == 1 ? "" : "s") +
                        " for what the SDK lacks");
  }
  for (const auto& f : plan.cmake_files) {
    std::string what;
    for (const auto& c : f.changes) what += (what.empty() ? "" : "; ") + c;
    if (!what.empty()) what[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(what[0])));
    add({&f}, what.empty() ? "Patch the CMake file" : what);
  }

  std::vector<SymbolFix> fixes;
  for (const auto& lib : report.libraries) {
    for (const auto& u : lib.unresolved) {
      auto it = groups_of.find(u.symbol);
      if (it == groups_of.end()) continue;
      for (size_t g : it->second)
        fixes.push_back({.library = lib.path, .symbol = u.symbol, .description = groups[g].description,
                         .edits = groups[g].edits});
    }
  }
  return fixes;
}

}  // namespace mlc::stubgen
