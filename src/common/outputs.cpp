// A run's outputs against each other and against what it reads, by device and inode (stat(2) follows
// symbolic links, so a link to an input is that input), before anything is written.
#include "common/outputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "common/file_io.h"

namespace mlc {
namespace {

// Where an output lands: an existing file's device and inode, else the path it will be created at.
struct Landing {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  uint64_t size = 0;
  std::string path;  // resolved, for an output that does not exist yet
};

Landing landing_of(const std::string& path) {
  Landing l;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    l.exists = true;
    l.dev = st.st_dev;
    l.ino = st.st_ino;
    l.size = static_cast<uint64_t>(st.st_size);
    return l;
  }
  std::error_code ec;
  auto resolved = std::filesystem::weakly_canonical(path, ec);
  l.path = ec ? path : resolved.string();
  return l;
}

bool same(const Landing& a, const Landing& b) {
  if (a.exists != b.exists) return false;
  return a.exists ? a.dev == b.dev && a.ino == b.ino : a.path == b.path;
}

// Outputs that replace nothing: standard output, descriptor paths, devices and FIFOs.
bool replaces_nothing(const FileWrite& w) { return w.path.empty() || w.path == "-" || written_in_place(w.path); }

std::string as_read(const FileWrite& w, const FileRead& r) {
  return w.option + " " + w.shown + ": it is " + r.what + "; refusing to overwrite a file the run reads";
}

std::string as_write(const FileWrite& w, const FileWrite& earlier) {
  return w.option + " " + w.shown + ": it is also " + earlier.option + " " + earlier.shown +
         "; one file cannot hold two outputs";
}

}  // namespace

std::optional<std::string> clobbered(const std::vector<FileWrite>& writes, const std::vector<FileRead>& reads) {
  std::vector<std::optional<Landing>> landings;
  std::map<std::pair<dev_t, ino_t>, std::vector<size_t>> existing;  // (dev, ino) -> the writes landing there
  std::set<uint64_t> sizes;                                         // their sizes
  for (size_t i = 0; i < writes.size(); ++i) {
    if (replaces_nothing(writes[i])) {
      landings.emplace_back();
      continue;
    }
    landings.push_back(landing_of(writes[i].path));
    if (landings.back()->exists) {
      existing[{landings.back()->dev, landings.back()->ino}].push_back(i);
      sizes.insert(landings.back()->size);
    }
  }
  // Per write, the first read it would replace. A file that does not exist yet is read by no one, so
  // the reads (the source index may hold 10^5 files) are looked at only when an output exists.
  std::vector<const FileRead*> first_read(writes.size(), nullptr);
  if (!existing.empty()) {
    for (const auto& r : reads) {
      if (r.size && !sizes.count(*r.size)) continue;
      struct stat st;
      if (stat(r.path.c_str(), &st) != 0) continue;
      auto it = existing.find({st.st_dev, st.st_ino});
      if (it == existing.end()) continue;
      for (size_t i : it->second) {
        const auto& may = writes[i].may_be;
        if (!first_read[i] && std::find(may.begin(), may.end(), r.kind) == may.end()) first_read[i] = &r;
      }
    }
  }
  for (size_t i = 0; i < writes.size(); ++i) {
    if (!landings[i]) continue;
    for (size_t j = 0; j < i; ++j)
      if (landings[j] && same(*landings[i], *landings[j])) return as_write(writes[i], writes[j]);
    if (first_read[i]) return as_read(writes[i], *first_read[i]);
  }
  return std::nullopt;
}

}  // namespace mlc
