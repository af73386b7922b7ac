// Merging generated stubs into unimplemented_functions.cpp/.h: generated stubs live between markers,
// each with a hash of its body so that an edited stub is recognised and kept; what is outside the
// markers is never touched.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "common/file_io.h"
#include "report/said_plan.h"
#include "stubgen/internal.h"

namespace mlc::stubgen::detail {
namespace {

namespace fs = std::filesystem;

constexpr char kCppBegin[] = "// musa-stubgen: begin generated stubs";
constexpr char kCppEnd[] = "// musa-stubgen: end generated stubs";
constexpr char kHdrBegin[] = "// musa-stubgen: begin generated declarations";
constexpr char kHdrEnd[] = "// musa-stubgen: end generated declarations";
constexpr char kStubMark[] = "// musa-stubgen: stub ";
constexpr char kEndMark[] = "// musa-stubgen: end ";

struct Region {
  bool found = false;
  size_t begin = 0, end = 0;                  // [begin, end) covers the marker lines themselves
  std::map<std::string, std::string> blocks;  // key -> whole block text, markers included
  std::map<std::string, bool> edited;         // key -> body differs from its recorded hash
  std::map<std::string, std::string> uses;    // key -> the SDK headers it needs (recorded in its marker)
  std::string error;
};

Region parse_region(const std::string& text, const std::string& begin_marker, const std::string& end_marker) {
  Region r;
  size_t b = text.find(begin_marker);
  if (b == std::string::npos) return r;
  size_t e = text.find(end_marker, b);
  if (e == std::string::npos) {
    r.error = said::plan::RegionNeverClosed{.begin_marker = begin_marker}.words();
    return r;
  }
  r.found = true;
  r.begin = b;
  size_t e_line_end = text.find('\n', e);
  r.end = e_line_end == std::string::npos ? text.size() : e_line_end + 1;
  size_t pos = b;
  while (true) {
    size_t s = text.find(kStubMark, pos);
    if (s == std::string::npos || s >= e) break;
    size_t line_end = text.find('\n', s);
    std::string header = text.substr(s + std::strlen(kStubMark), line_end - s - std::strlen(kStubMark));
    std::istringstream fields(header);
    std::string key, recorded, uses;
    fields >> key >> recorded >> uses;
    std::string end_line = std::string(kEndMark) + key + "\n";
    size_t close = text.find(end_line, line_end);
    if (close == std::string::npos || close > e) {
      r.error = said::plan::StubNeverClosed{.key = key}.words();
      return r;
    }
    std::string body = text.substr(line_end + 1, close - line_end - 1);
    r.blocks[key] = text.substr(s, close + end_line.size() - s);
    r.edited[key] = stub_hash(body) != recorded;
    r.uses[key] = uses;
    pos = close + end_line.size();
  }
  return r;
}

// The marker records the body's hash (to recognise edits) and the SDK headers the stub needs.
std::string wrap_block(const std::string& key, const std::string& body, const std::string& uses) {
  return std::string(kStubMark) + key + " " + stub_hash(body) + (uses.empty() ? "" : " " + uses) + "\n" + body +
         kEndMark + key + "\n";
}

struct MergeResult {
  std::string text;
  std::vector<std::string> warnings;
  std::optional<std::string> error;
  std::set<std::string> uses;  // the SDK headers the final set of stubs needs
};

// One generated region of a stub file: the file, how a new one starts, and what the region holds.
struct RegionSpec {
  const std::string& path;
  const std::string& fresh_preamble;           // a new file's text before the region
  const std::string& region_preamble;          // the region's text before its blocks
  const std::map<std::string, Block>& wanted;  // key -> body for the stubs this run needs
  std::string begin_marker, end_marker;
  bool prune = false;
};

// Existing blocks not wanted are kept unless pruned; edited blocks are always kept.
MergeResult merge(const std::optional<std::string>& existing, const RegionSpec& spec) {
  const auto& [path, fresh_preamble, region_preamble, wanted, begin_marker, end_marker, prune] = spec;
  MergeResult m;
  Region r = existing ? parse_region(*existing, begin_marker, end_marker) : Region{};
  if (!r.error.empty()) {
    m.error = r.error;
    return m;
  }
  std::map<std::string, std::string> blocks;
  auto note_uses = [&](const std::string& uses) {
    std::istringstream in(uses);
    for (std::string h; std::getline(in, h, ',');)
      if (!h.empty()) m.uses.insert(h);
  };
  for (const auto& [key, block] : wanted) {
    if (r.blocks.count(key) && r.edited[key]) {
      blocks[key] = r.blocks[key];
      note_uses(r.uses[key]);
      m.warnings.push_back(said::plan::HandEditedKept{.file = path, .key = key, .unneeded = false}.words());
    } else {
      blocks[key] = wrap_block(key, block.body, block.uses);
      note_uses(block.uses);
    }
  }
  for (const auto& [key, block] : r.blocks) {
    if (blocks.count(key)) continue;
    if (!prune || r.edited[key]) {
      blocks[key] = block;
      note_uses(r.uses[key]);
      if (prune) m.warnings.push_back(said::plan::HandEditedKept{.file = path, .key = key, .unneeded = true}.words());
    }
  }
  std::string region = std::string(begin_marker) + "\n" + region_preamble;
  for (const auto& [key, block] : blocks) region += "\n" + block;
  region += "\n" + std::string(end_marker) + "\n";
  if (!existing) {
    m.text = fresh_preamble + region;
  } else if (!r.found) {
    m.text = *existing + (existing->empty() || existing->back() == '\n' ? "" : "\n") + "\n" + region;
  } else {
    m.text = existing->substr(0, r.begin) + region + existing->substr(r.end);
  }
  return m;
}

// Merges `blocks` into the generated region of `path` and plans the file; nothing when the region is
// broken (the plan has the error, and its stub files are incomplete).
std::optional<MergeResult> merge_file(const RegionSpec& spec, Plan& p) {
  const std::string& path = spec.path;
  auto existing = read_text(path);
  auto m = merge(existing, spec);
  if (m.error) {
    p.errors.push_back({path, *m.error});
    p.stub_files_complete = false;
    return std::nullopt;
  }
  p.stub_files.push_back({path, existing.value_or(""), m.text, !existing, {}});
  return m;
}

}  // namespace

std::string stub_hash(std::string_view s) { return hex64(fnv1a(s, kStubHashBasis)); }

void plan_stub_files(const Report& report, const Triage& t, const StubOptions& o, const backend::Backend& b, Plan& p) {
  if (t.cpp_blocks.empty() && !fs::exists(o.out_cpp)) return;
  std::string header_name = fs::path(o.out_header).filename().string();
  std::string cpp_pre = "#include \"" + header_name + "\"\n\n";
  cpp_pre += t.c10 ? "#include <c10/util/Exception.h>\n" : "#include <stdexcept>\n";
  cpp_pre += "\n#define " + b.stubs_macro + "\n#include \"" + b.stubs_header + "\"\n";
  std::string fresh_cpp =
      "// Stubs for functions the SDK does not provide, so that the library links; calling one is reported by\n"
      "// the stub runtime (" +
      b.stubs_header +
      "). musa-stubgen rewrites the region between its markers and keeps any\n"
      "// stub edited there; everything outside the markers is yours and is never touched.\n\n";
  auto m = merge_file({.path = o.out_cpp,
                       .fresh_preamble = fresh_cpp,
                       .region_preamble = cpp_pre,
                       .wanted = t.cpp_blocks,
                       .begin_marker = kCppBegin,
                       .end_marker = kCppEnd,
                       .prune = o.prune},
                      p);
  if (m) p.warnings.insert(p.warnings.end(), m->warnings.begin(), m->warnings.end());

  std::string hdr_pre;
  for (const auto& inc : m ? m->uses : std::set<std::string>{}) hdr_pre += "#include <" + inc + ">\n";
  hdr_pre += "\n#ifndef __host__\n#define __host__\n#endif\n";
  std::string fresh_hdr = "// Declarations of the stubs in " + fs::path(o.out_cpp).filename().string() +
                          " that no SDK header declares (musa-stubgen).\n#pragma once\n\n";
  merge_file({.path = o.out_header,
              .fresh_preamble = fresh_hdr,
              .region_preamble = hdr_pre,
              .wanted = t.hdr_blocks,
              .begin_marker = kHdrBegin,
              .end_marker = kHdrEnd,
              .prune = o.prune},
             p);
  if (!o.runtime_header.empty()) {
    auto runtime = read_text(o.runtime_header);
    std::string dest = (fs::path(o.out_cpp).parent_path() / b.stubs_header).string();
    if (!runtime) {
      p.errors.push_back({o.runtime_header, "cannot read the stub runtime header"});
      p.stub_files_complete = false;
    } else {
      auto existing_rt = read_text(dest);
      p.stub_files.push_back(
          {dest, existing_rt.value_or(""), backend::stub_runtime_text(b, *runtime), !existing_rt, {}});
    }
  }
  std::map<std::string, std::string> demangled;
  for (const auto& lib : report.libraries)
    for (const auto& u : lib.unresolved) demangled.emplace(u.symbol, u.demangled);
  for (auto& f : p.stub_files)
    for (const auto& st : p.stubs)
      f.purposes.push_back({said::plan::AddStub{.demangled = demangled[st.mangled]}.words(), {st.mangled}});
}

}  // namespace mlc::stubgen::detail
