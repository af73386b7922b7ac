// A plan's whole-file edits as line replacements, grouped into the fixes SARIF attaches to results.
#include <algorithm>
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
    TextEdit e{.file = f.path,
               .start_line = static_cast<int>(h.first) + 1,
               .end_line = static_cast<int>(h.first + h.count) + 1,
               .end_column = 1,
               .inserted = std::move(h.inserted)};
    if (h.count > 0 && h.first + h.count == lines && unterminated) {
      e.end_line = static_cast<int>(lines);
      e.end_column = code_points(std::string_view(f.before).substr(f.before.rfind('\n') + 1)) + 1;
    }
    edits.push_back(std::move(e));
  }
  return edits;
}

struct Group {
  std::string files;                  // "create A, edit B"
  std::vector<EditPurpose> purposes;  // what the edit does, each once
  std::vector<TextEdit> edits;
};

std::string capitalized(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

// What fixes `symbol` first, then the files, then what else the same edit does (a few named, the
// rest counted: a run with a thousand stubs must not write a thousand names into each result).
std::string describe_part(const Group& g, const std::string& symbol) {
  std::string own, others;
  size_t named = 0, more = 0;
  for (const auto& p : g.purposes) {
    bool mine = std::find(p.symbols.begin(), p.symbols.end(), symbol) != p.symbols.end();
    if (mine) {
      own += (own.empty() ? "" : "; ") + p.what;
    } else if (named < 3) {
      others += (others.empty() ? "" : "; ") + p.what;
      ++named;
    } else {
      ++more;
    }
  }
  std::string text = own + " (" + g.files;
  if (!others.empty()) {
    text += "; the same edit also does: " + others;
    if (more) text += "; and " + std::to_string(more) + " more";
  }
  return text + ")";
}

}  // namespace

std::vector<SymbolFix> sarif_fixes(const Plan& plan, const Report& report, size_t repeat_budget) {
  std::vector<Group> groups;
  std::map<std::string, std::vector<size_t>> groups_of;  // mangled symbol -> indexes into groups
  auto add = [&](const std::vector<const FileEdit*>& files) {
    Group g;
    for (const FileEdit* f : files) {
      if (!f->changed()) continue;
      if (!is_valid_utf8(f->before) || !is_valid_utf8(f->after)) return;
      auto edits = edits_of(*f);
      if (edits.empty()) continue;
      g.edits.insert(g.edits.end(), edits.begin(), edits.end());
      g.files += std::string(g.files.empty() ? "" : ", ") + (f->created ? "create " : "edit ") + f->path;
      for (const auto& p : f->purposes)
        if (std::none_of(g.purposes.begin(), g.purposes.end(), [&](const EditPurpose& q) { return q.what == p.what; }))
          g.purposes.push_back(p);
    }
    if (g.edits.empty()) return;
    for (const auto& p : g.purposes)
      for (const auto& s : p.symbols) {
        auto& list = groups_of[s];
        if (list.empty() || list.back() != groups.size()) list.push_back(groups.size());
      }
    groups.push_back(std::move(g));
  };
  // The stub files belong together (the source includes the header and the runtime header): when one
  // could not be planned, the others are no fix.
  std::vector<const FileEdit*> stub_files;
  for (const auto& f : plan.stub_files) stub_files.push_back(&f);
  if (plan.stub_files_complete) add(stub_files);
  for (const auto& f : plan.cmake_files) add({&f});

  // Each result carries its own copy of the edit. A large edit fixing many symbols (hundreds of
  // stubs) would grow the report with the square of their number, past what code scanning accepts:
  // beyond the budget, only the group's first result carries it and says so.
  std::vector<size_t> results_of(groups.size(), 0), bytes(groups.size(), 0);
  for (const auto& lib : report.libraries)
    for (const auto& u : lib.unresolved)
      if (auto it = groups_of.find(u.symbol); it != groups_of.end())
        for (size_t g : it->second) ++results_of[g];
  for (size_t g = 0; g < groups.size(); ++g)
    for (const auto& e : groups[g].edits) bytes[g] += e.inserted.size() + e.file.size() + 200;
  // One fix per symbol, holding every edit that fixes it, as --apply writes them together: a stub is
  // its files and the entry that puts its source into the build.
  std::vector<bool> given(groups.size(), false);
  std::vector<SymbolFix> fixes;
  for (const auto& lib : report.libraries) {
    for (const auto& u : lib.unresolved) {
      auto it = groups_of.find(u.symbol);
      if (it == groups_of.end()) continue;
      SymbolFix fix{.library = lib.path, .symbol = u.symbol, .description = "", .edits = {}};
      std::string once_note;
      for (size_t g : it->second) {
        bool once = results_of[g] > 1 && bytes[g] * results_of[g] > repeat_budget;
        if (once && given[g]) continue;
        std::string part = describe_part(groups[g], u.symbol);
        fix.description += fix.description.empty() ? capitalized(part) : "; and " + part;
        if (once)
          once_note = "; given here once for all " + std::to_string(results_of[g]) +
                      " results it fixes, to keep the report small";
        fix.edits.insert(fix.edits.end(), groups[g].edits.begin(), groups[g].edits.end());
        given[g] = true;
      }
      if (fix.edits.empty()) continue;
      fix.description += ", as musa-stubgen --apply does" + once_note;
      fixes.push_back(std::move(fix));
    }
  }
  return fixes;
}

}  // namespace mlc::stubgen
