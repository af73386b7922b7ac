// Symbol lookup as glibc's dl-lookup.c does it: each relocated reference of the checked objects is
// hashed once and looked up through every object's own .gnu.hash in load order, so the cost follows
// the references, not the (far more numerous) definitions of a 284-library closure.
#include "loader/binding.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "common/paths.h"
#include "common/phase_times.h"
#include "loader/kept_bindings.h"
#include "loader/relocation_checks.h"

namespace mlc::loader {
namespace {

using elf::Binding;
using elf::Symbol;
using elf::SymbolType;
using elf::Visibility;

struct Def {
  int object;
  uint32_t index;
};

// Weak undefined references never fail (glibc leaves them 0): only a global (or unique) undefined name counts.
bool strong_undefined(const Symbol& s) {
  return s.is_undefined() && (s.binding == Binding::Global || s.binding == Binding::GnuUnique);
}

// Only relocated names matter (ld.so looks up what relocations name).
bool counts_as_reference(const elf::ElfObject& o, const Symbol& s) {
  return strong_undefined(s) && !s.name.empty() && (!o.has_relocation_info || s.relocated);
}

// check_match's tests that do not involve versions.
enum class Usable { Yes, Local, NoValue };
Usable usable(const Symbol& s) {
  switch (s.type) {
    case SymbolType::NoType:
    case SymbolType::Object:
    case SymbolType::Func:
    case SymbolType::Common:
    case SymbolType::Tls:
    case SymbolType::GnuIfunc: break;
    default: return Usable::NoValue;
  }
  if (s.value == 0 && s.shndx != elf::kShnAbs && s.type != SymbolType::Tls) return Usable::NoValue;
  if (s.binding == Binding::Local || s.binding == Binding::Other) return Usable::Local;
  // "Hidden and internal symbols are local, ignore them."
  if (s.visibility == Visibility::Hidden || s.visibility == Visibility::Internal) return Usable::Local;
  return Usable::Yes;
}

// The name glibc records for a definition's version index: none for the base version or for indexes
// without a Verdef (their hash is 0 in l_versions).
std::string_view named_version(const elf::ElfObject& o, uint16_t index) {
  const auto* d = o.definition(index);
  return d && !d->is_base ? d->name : std::string_view();
}

// dl-misc.c _dl_name_match_p: the object's l_name or a name it was requested by (its soname once
// a request used it).
bool answers_to(const LoadedObject& o, std::string_view name) {
  return o.realname == name || std::find(o.names.begin(), o.names.end(), name) != o.names.end();
}

// dl-version.c find_needed: the loaded object a Verneed entry's file names - any object of the
// process, then the requiring object's own dependencies; -1 when none answers to it.
int find_needed(const Process& p, int requiring, std::string_view file) {
  for (size_t i = 0; i < p.objects.size(); ++i)
    if (answers_to(p.objects[i], file)) return static_cast<int>(i);
  for (int i : lookup_scope(p, requiring))
    if (answers_to(p.objects[i], file)) return i;
  return -1;
}

// _dl_check_map_versions's assertion, said for the report.
LoadFailure version_file_unmatched(const Process& p, int requiring, const elf::VersionRequirement& req) {
  const auto& o = p.objects[requiring];
  std::string file, expanded;
  for (const auto& n : o.needed)
    if (n.name == req.file && n.object >= 0) {
      file = p.objects[n.object].path;
      expanded = n.expanded;
    }
  return {.kind = FailureKind::VersionFileUnmatched,
          .object = requiring,
          .file = file.empty() ? o.path : file,
          .symbol = "",
          .facts = {.by = base_name(o.path),
                    .provider = "",
                    .symbol = "",
                    .version = std::string(req.name),
                    .needed = std::string(req.file),
                    .expanded = expanded}};
}

// Whether a requirement's file is one of the object's DT_NEEDED entries that was not found: the
// missing library is then the finding (glibc fails on it before it checks versions).
bool needed_missing(const LoadedObject& o, std::string_view file) {
  return std::any_of(o.needed.begin(), o.needed.end(),
                     [&](const NeededEntry& n) { return n.object < 0 && (n.name == file || n.expanded == file); });
}

struct Lookup {
  bool found = false;
  uint32_t found_index = 0;  // the .dynsym index of the definition found
  int aborted_in = -1;       // the object check_match's assertion stops the process in
  bool wrong_version = false;
  bool hidden_version = false;
  bool hidden_visibility = false;
  std::vector<int> near;
};

// One object's candidates for one reference (do_lookup_x's loop over one map). `names_file`: the
// object answers to the file the reference's version is required from.
void match_in_object(const elf::ElfObject& def_obj, const std::vector<Def>& defs,
                     const elf::VersionRequirement* version, bool names_file, Lookup& out) {
  int versioned_count = 0;
  for (size_t k = 0; k < defs.size(); ++k) {
    const Symbol d = def_obj.dynamic_symbol(defs[k].index);
    Usable u = usable(d);
    // check_match: a versioned reference met in the very object its version is required from, which
    // has no .gnu.version, fails "assert (version->filename == NULL || ! _dl_name_match_p (...))":
    // ld.so aborts (before visibility is looked at).
    if (u != Usable::NoValue && version && !def_obj.has_versym && names_file) {
      out.aborted_in = defs[k].object;
      return;
    }
    if (u == Usable::Local) out.hidden_visibility = true;
    if (u != Usable::Yes) continue;
    if (!def_obj.has_versym) {
      out.found = true;
      out.found_index = defs[k].index;
      return;
    }
    if (version) {
      std::string_view have = named_version(def_obj, d.version_index);
      if (have == version->name) {
        out.found = true;
        out.found_index = defs[k].index;
        return;
      }
      // An unnamed (base/global) non-hidden definition also satisfies a versioned reference.
      if (have.empty() && !version->hidden && !d.version_hidden) {
        out.found = true;
        out.found_index = defs[k].index;
        return;
      }
      (d.version_hidden ? out.hidden_version : out.wrong_version) = true;
    } else {
      // An unversioned reference takes index 0..2 directly; a later version only when it is the one
      // non-hidden versioned definition in this object.
      if (d.version_index < 3) {
        out.found = true;
        out.found_index = defs[k].index;
        return;
      }
      if (d.version_hidden) {
        out.hidden_version = true;
      } else if (versioned_count++ == 0) {
        out.found_index = defs[k].index;
      }
    }
  }
  if (versioned_count == 1) {
    out.found = true;
    return;
  }
  if (versioned_count > 1) out.wrong_version = true;
}

// What one look-up needs: the name, its GNU hash (computed once, as ld.so does), the version
// the reference requires, and the outcome so far.
struct Job {
  std::string_view name;
  uint32_t hash = 0;
  const elf::VersionRequirement* version = nullptr;
  uint32_t next_same_name = UINT32_MAX;  // other jobs for the same name (other versions)
  Lookup look;
};

// _dl_lookup_symbol_x for one look-up: the objects in load order, stopping at the first with a
// matching definition; objects passed over with a near miss (wrong or hidden version, hidden
// visibility) are remembered. Only `candidates` - the objects whose hash tables hold the name's
// hash, in load order - can define it, so only they are probed.
void look_up(const Process& p, Job& job, const uint32_t* candidates, size_t count, std::vector<uint32_t>& scratch,
             std::vector<Def>& defs) {
  for (size_t c = 0; c < count && !job.look.found; ++c) {
    const int obj = candidates[c];
    const elf::ElfObject& o = p.objects[obj].elf;
    scratch.clear();
    if (o.gnu_hash.may_define(job.hash)) o.find_defined(job.name, job.hash, scratch);
    if (scratch.empty()) continue;
    defs.clear();
    for (uint32_t index : scratch) defs.push_back({obj, index});
    Lookup here;
    const bool names_file = job.version && !o.has_versym && answers_to(p.objects[obj], job.version->file);
    match_in_object(o, defs, job.version, names_file, here);
    if (here.aborted_in >= 0) {
      job.look.aborted_in = here.aborted_in;
      return;
    }
    if (!here.found && (here.wrong_version || here.hidden_version || here.hidden_visibility))
      job.look.near.push_back(obj);
    job.look.found = here.found;
    job.look.wrong_version |= here.wrong_version;
    job.look.hidden_version |= here.hidden_version;
    job.look.hidden_visibility |= here.hidden_visibility;
  }
}

// Which objects may define each wanted hash, in load order. A .gnu.hash chain stores the hash of
// every defined symbol it covers (bit 0 marks a chain's end), so one pass over the chains - 4 bytes
// per definition, no name read or hashed - finds them; objects without .gnu.hash have their defined
// names hashed instead. Slots are an open-addressing table of the wanted hashes (bit 0 cleared).
class CandidateIndex {
 public:
  explicit CandidateIndex(const std::vector<Job>& jobs) {
    size_t cap = 64;
    while (cap < jobs.size() * 2) cap *= 2;
    keys_.assign(cap, kEmpty);
    tail_.assign(cap, kNone);
    head_.assign(cap, kNone);
    filter_.assign(kFilterBits / 64, 0);
    for (const Job& j : jobs) {
      insert(j.hash >> 1);
      uint32_t bit = (j.hash >> 1) & (kFilterBits - 1);
      filter_[bit / 64] |= uint64_t{1} << (bit % 64);
    }
  }

  // The table slots of the wanted hashes an object's definitions carry (read-only: objects are
  // matched in parallel, then added in load order with add()).
  void match(const Process& p, uint32_t obj, std::vector<uint32_t>& slots) const {
    const elf::ElfObject& o = p.objects[obj].elf;
    const elf::GnuHashTable& t = o.gnu_hash;
    auto consider = [&](uint32_t key) {
      // Most definitions are never referenced: a bit per hash value (128 KiB, cache-resident)
      // turns them away before the table is probed.
      uint32_t bit = key & (kFilterBits - 1);
      if (!((filter_[bit / 64] >> (bit % 64)) & 1)) return;
      uint32_t s = find(key);
      if (s != kNone) slots.push_back(s);
    };
    if (t.present()) {
      for (size_t i = t.symoffset; i < o.dynsym_count; ++i) consider(t.chains[i - t.symoffset] >> 1);
      return;
    }
    for (size_t i = 1; i < o.dynamic_symbol_count(); ++i) {
      elf::Symbol s = o.dynamic_symbol(i);
      if (!s.is_undefined()) consider(elf::gnu_hash(o.name_of(s)) >> 1);
    }
  }

  void add(uint32_t obj, const std::vector<uint32_t>& slots) {
    for (uint32_t s : slots) note(s, obj);
  }

  // The candidate objects for a hash, in load order.
  void candidates(uint32_t hash, std::vector<uint32_t>& out) const {
    out.clear();
    uint32_t s = find(hash >> 1);
    for (uint32_t e = s == kNone ? kNone : head_[s]; e != kNone; e = next_[e]) out.push_back(object_[e]);
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;  // no 31-bit key equals it
  static constexpr uint32_t kNone = UINT32_MAX;

  uint32_t find(uint32_t key) const {
    size_t mask = keys_.size() - 1;
    for (size_t i = (key * 2654435761u) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == key) return static_cast<uint32_t>(i);
      if (keys_[i] == kEmpty) return kNone;
    }
  }

  void insert(uint32_t key) {
    size_t mask = keys_.size() - 1;
    size_t i = (key * 2654435761u) & mask;
    while (keys_[i] != key && keys_[i] != kEmpty) i = (i + 1) & mask;
    keys_[i] = key;
  }

  void note(uint32_t s, uint32_t obj) {
    if (tail_[s] != kNone && object_[tail_[s]] == obj) return;  // several symbols, one object
    uint32_t e = static_cast<uint32_t>(object_.size());
    object_.push_back(obj);
    next_.push_back(kNone);
    (tail_[s] == kNone ? head_[s] : next_[tail_[s]]) = e;
    tail_[s] = e;
  }

  static constexpr uint32_t kFilterBits = 1u << 20;
  std::vector<uint64_t> filter_;
  std::vector<uint32_t> keys_, head_, tail_, next_;
  std::vector<uint32_t> object_;
};

// A relocated reference of a checked object, with the look-up it shares with every reference of the
// same name and version requirement.
struct Ref {
  int object;
  uint32_t symbol;
  uint32_t job;
};

// A reference as read, before it is given a look-up.
struct Pending {
  uint32_t symbol;
  uint32_t hash;
  std::string_view name;
  const elf::VersionRequirement* version;
};

// Every relocated reference of the checked objects (ld.so looks up only what relocations name; the
// relative ones name nothing), read in parallel: the reads touch cold .dynsym, .gnu.version and
// .dynstr pages, and the name's GNU hash is computed while its bytes are read, as ld.so does.
std::vector<std::vector<Pending>> read_references(const Process& p, const std::vector<int>& checked) {
  std::vector<std::vector<Pending>> pending(checked.size());
  tbb::parallel_for(size_t{0}, checked.size(), [&](size_t k) {
    const auto& o = p.objects[checked[k]].elf;
    auto& out = pending[k];
    auto consider = [&](uint32_t s, bool relocated) {
      Symbol sym = o.dynamic_symbol(s);
      if (!strong_undefined(sym)) return;
      sym.relocated = relocated;
      uint32_t hash = 0;
      sym.name = o.name_and_hash(sym.name_offset, hash);
      if (!counts_as_reference(o, sym)) return;
      const elf::VersionRequirement* version = nullptr;
      if (o.has_versym && sym.version_index >= 2) version = o.requirement(sym.version_index);
      out.push_back({s, hash, sym.name, version});
    };
    if (o.has_relocation_info) {
      out.reserve(o.relocated_symbols.size());
      for (uint32_t s : o.relocated_symbols) consider(s, true);
    } else {
      for (uint32_t s = 1; s < o.dynamic_symbol_count(); ++s) consider(s, false);
    }
  });
  return pending;
}

// One look-up per name and version requirement: an open-addressing table of each name's first job,
// keyed by the GNU hash (other versions of the name are chained through next_same_name).
void make_jobs(const std::vector<int>& checked, const std::vector<std::vector<Pending>>& pending,
               std::vector<Ref>& refs, std::vector<Job>& jobs) {
  auto same_requirement = [](const elf::VersionRequirement* a, const elf::VersionRequirement* b) {
    if (!a || !b) return a == b;
    return a->name == b->name && a->file == b->file && a->hidden == b->hidden;
  };
  size_t expected = 0;
  for (const auto& v : pending) expected += v.size();
  refs.reserve(expected);
  jobs.reserve(expected / 2 + 1);
  size_t cap = 64;
  while (cap < expected * 2) cap *= 2;
  std::vector<uint32_t> first_job(cap, UINT32_MAX);
  const size_t mask = cap - 1;
  for (size_t k = 0; k < checked.size(); ++k) {
    for (const Pending& r : pending[k]) {
      size_t slot = (size_t{r.hash} * 0x9E3779B97F4A7C15ull >> 20) & mask;
      while (first_job[slot] != UINT32_MAX &&
             (jobs[first_job[slot]].hash != r.hash || jobs[first_job[slot]].name != r.name))
        slot = (slot + 1) & mask;
      uint32_t job = first_job[slot];
      if (job == UINT32_MAX) {
        job = static_cast<uint32_t>(jobs.size());
        first_job[slot] = job;
      } else {
        uint32_t last = job;
        for (; job != UINT32_MAX && !same_requirement(jobs[job].version, r.version); job = jobs[job].next_same_name)
          last = job;
        if (job == UINT32_MAX) {
          job = static_cast<uint32_t>(jobs.size());
          jobs[last].next_same_name = job;
        }
      }
      if (job == jobs.size()) jobs.push_back({r.name, r.hash, r.version, UINT32_MAX, {}});
      refs.push_back({checked[k], r.symbol, job});
    }
  }
}

// The look-ups, in parallel, each over the candidates the index gives for its hash.
void look_up_jobs(const Process& p, const CandidateIndex& index, std::vector<Job>& jobs) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, jobs.size(), 512), [&](const tbb::blocked_range<size_t>& range) {
    std::vector<uint32_t> candidates;
    std::vector<uint32_t> scratch;
    std::vector<Def> defs;
    for (size_t j = range.begin(); j != range.end(); ++j) {
      index.candidates(jobs[j].hash, candidates);
      look_up(p, jobs[j], candidates.data(), candidates.size(), scratch, defs);
    }
  });
}

// Each reference whose look-up found nothing, with why (its library missing, a wrong or hidden version,
// hidden visibility, or no definition).
void record_unresolved(const Process& p, const std::vector<Ref>& refs, const std::vector<Job>& jobs,
                       BindOutcome& result) {
  std::set<int> aborted;  // referencing objects: the first abort ends the process, one failure each
  for (const Ref& r : refs) {
    const Lookup& look = jobs[r.job].look;
    if (look.found) continue;
    const Job& job = jobs[r.job];
    if (look.aborted_in >= 0) {
      if (aborted.insert(r.object).second)
        result.failures.push_back(version_without_versym(p, r.object, look.aborted_in, job.name,
                                                         job.version ? job.version->name : std::string_view()));
      continue;
    }
    UnresolvedRef u;
    u.object = r.object;
    u.symbol_index = r.symbol;
    u.name = job.name;
    if (job.version) {
      u.version = job.version->name;
      u.version_file = job.version->file;
    }
    if (job.version && find_needed(p, r.object, job.version->file) < 0) {
      u.miss = Miss::LibraryMissing;
    } else if (look.wrong_version) {
      u.miss = Miss::WrongVersion;
    } else if (look.hidden_version) {
      u.miss = Miss::HiddenVersion;
    } else if (look.hidden_visibility) {
      u.miss = Miss::HiddenVisibility;
    }
    u.near_definitions = look.near;
    result.unresolved.push_back(std::move(u));
  }
}

// dl-version.c _dl_check_map_versions: every Vernaux must name a Verdef of the loaded file it is
// required from (weak ones only warn; a file without version definitions only warns). A file no
// loaded object answers to - a DT_NEEDED spelled with a dynamic string token, which the loader
// matched under its expansion - fails its assertion `needed != NULL': ld.so aborts.
void check_version_requirements(const Process& p, const std::vector<int>& checked, BindOutcome& result) {
  for (int i : checked) {
    const auto& o = p.objects[i].elf;
    std::set<std::string_view> unmatched;
    for (const auto& req : o.version_requirements) {
      int provider = find_needed(p, i, req.file);
      if (provider < 0) {
        if (!needed_missing(p.objects[i], req.file) && unmatched.insert(req.file).second)
          result.failures.push_back(version_file_unmatched(p, i, req));
        continue;  // the missing library is its own finding
      }
      const auto& pe = p.objects[provider].elf;
      if (!pe.has_verdef) continue;  // glibc only warns: "no version information available"
      bool present = std::any_of(pe.version_definitions.begin(), pe.version_definitions.end(),
                                 [&](const elf::VersionDefinition& d) { return d.name == req.name; });
      if (!present)
        result.missing_versions.push_back({i, std::string(req.name), std::string(req.file), provider, req.weak});
    }
  }
}

// The references of `checked` looked up in one scope (lookup_scope: the objects in the order ld.so
// walks them). The passes: read the references, share their look-ups, index the scope's candidates,
// look up, record what is unresolved, then check the version requirements. No defined name of any
// object is read or hashed unless a reference's GNU hash leads to it.
void bind_in_scope(const Process& p, const std::vector<int>& checked, const std::vector<int>& scope,
                   BindOutcome& result) {
  std::optional<PhaseTime> step(std::in_place, "bind.references");
  std::vector<std::vector<Pending>> pending = read_references(p, checked);
  step.emplace("bind.jobs");
  std::vector<Ref> refs;
  std::vector<Job> jobs;
  make_jobs(checked, pending, refs, jobs);
  pending = {};
  // Candidates from the hash tables (scope order), then the look-ups, in parallel.
  step.emplace("bind.index");
  CandidateIndex index(jobs);
  {
    std::vector<std::vector<uint32_t>> slots(scope.size());
    tbb::parallel_for(size_t{0}, scope.size(),
                      [&](size_t k) { index.match(p, static_cast<uint32_t>(scope[k]), slots[k]); });
    for (size_t k = 0; k < scope.size(); ++k) index.add(static_cast<uint32_t>(scope[k]), slots[k]);
  }
  step.emplace("bind.lookups");
  look_up_jobs(p, index, jobs);
  step.reset();
  record_unresolved(p, refs, jobs, result);
  check_version_requirements(p, checked, result);
}

}  // namespace

// The look-ups' outcome as kept between runs: each unresolved reference by its object and .dynsym index.
static KeptLookups to_kept(const BindOutcome& result) {
  KeptLookups out;
  out.unresolved.reserve(result.unresolved.size());
  for (const auto& u : result.unresolved)
    out.unresolved.push_back({.object = u.object,
                              .symbol = static_cast<uint32_t>(u.symbol_index),
                              .miss = u.miss,
                              .near = u.near_definitions});
  out.missing_versions = result.missing_versions;
  return out;
}

// A kept outcome as bind_in_scope gives it: the names read again from the referencing object, as
// read_references reads them (its version requirement, through .gnu.version). False, `out` partly
// filled, when an entry does not fit the process (an object or symbol it does not have, a reference no
// look-up would make): the process is bound again.
static bool from_kept(const Process& p, const KeptLookups& kept, BindOutcome& out) {
  const int objects = static_cast<int>(p.objects.size());
  auto valid = [&](int i) { return i >= 0 && i < objects; };
  for (const auto& k : kept.unresolved) {
    if (!valid(k.object)) return false;
    const elf::ElfObject& o = p.objects[k.object].elf;
    if (k.symbol == 0 || k.symbol >= o.dynamic_symbol_count()) return false;
    const Symbol sym = o.dynamic_symbol(k.symbol);
    if (!strong_undefined(sym)) return false;
    UnresolvedRef u;
    u.object = k.object;
    u.symbol_index = k.symbol;
    u.name = o.name_of(sym);
    if (u.name.empty()) return false;
    if (o.has_versym && sym.version_index >= 2)
      if (const elf::VersionRequirement* version = o.requirement(sym.version_index)) {
        u.version = version->name;
        u.version_file = version->file;
      }
    u.miss = k.miss;
    for (int n : k.near)
      if (!valid(n)) return false;
    u.near_definitions = k.near;
    out.unresolved.push_back(std::move(u));
  }
  for (const auto& m : kept.missing_versions) {
    if (!valid(m.object) || !valid(m.provider)) return false;
    out.missing_versions.push_back(m);
  }
  return true;
}

// check_match's assertion, said for the report: where the process stops and why.
LoadFailure version_without_versym(const Process& p, int referencing, int provider, std::string_view symbol,
                                   std::string_view version) {
  const std::string& file = p.objects[provider].path;
  const std::string& by = p.objects[referencing].path;
  return {.kind = FailureKind::VersionWithoutVersym,
          .object = referencing,
          .file = file,
          .symbol = std::string(symbol),
          .facts = {.by = base_name(by),
                    .provider = base_name(file),
                    .symbol = std::string(symbol),
                    .version = std::string(version)}};
}

BindOutcome bind(const Process& p, const std::vector<int>& checked, const LoaderEnv& env, const KeptBindings* kept) {
  BindOutcome result;
  const std::string key = kept ? kept->key(p, checked) : std::string();
  std::optional<KeptLookups> answer;
  if (!key.empty()) {
    PhaseTime t("bind.kept");
    answer = kept->find(key);
  }
  const bool bound = !answer || !from_kept(p, *answer, result);
  // What a fresh bind keeps: its look-ups, before the relocation checks add theirs. The look-ups'
  // assertions (failures) are not kept: such a process is bound again.
  std::optional<KeptLookups> keep;
  if (bound) {
    result = {};
    // Objects brought in by one load share its scope (glibc gives a dlopen'ed object and the
    // dependencies it maps one l_scope): one look-up pass per load.
    std::map<int, std::vector<int>> by_root;
    for (int i : checked) by_root[p.objects[i].root].push_back(i);
    for (const auto& [root, objects] : by_root) bind_in_scope(p, objects, lookup_scope(p, root), result);
    if (result.failures.empty() && !key.empty()) keep = to_kept(result);
  }
  check_copy_relocations(p, checked, result);
  // Where the initial-exec references bind is kept with the look-ups; the static TLS block they fill is
  // the environment's (its surplus), and is worked out on every run.
  TlsProviders tls;
  if (!bound)
    for (const auto& t : answer->tls) tls[{t.object, t.symbol}] = t.provider;
  check_static_tls(p, env, result, tls);
  if (keep) {
    for (const auto& [ref, provider] : tls) keep->tls.push_back({ref.first, ref.second, provider});
    kept->store(key, p, *keep);
  }
  return result;
}

Definition find_definition(const Process& p, int referencing, std::string_view name,
                           const elf::VersionRequirement* version, int skip) {
  const uint32_t hash = elf::gnu_hash(name);
  std::vector<uint32_t> found;
  std::vector<Def> defs;
  // The referencing object's scope, as bind() looks it up: a definition an earlier RTLD_LOCAL load
  // holds is not one the reference can bind to.
  for (int obj : lookup_scope(p, p.objects[referencing].root)) {
    if (obj == skip) continue;
    const elf::ElfObject& d = p.objects[obj].elf;
    found.clear();
    d.find_defined(name, hash, found);
    if (found.empty()) continue;
    defs.clear();
    for (uint32_t index : found) defs.push_back({obj, index});
    Lookup here;
    const bool names_file = version && !d.has_versym && answers_to(p.objects[obj], version->file);
    match_in_object(d, defs, version, names_file, here);
    if (here.aborted_in >= 0) return {.object = -1, .symbol = 0, .aborted_in = obj};
    if (here.found) return {.object = obj, .symbol = here.found_index, .aborted_in = -1};
  }
  return {};
}

OneBinding bind_one(const Process& p, int referencing, std::string_view name) {
  OneBinding out;
  const auto& o = p.objects[referencing].elf;
  const elf::VersionRequirement* version = nullptr;
  for (size_t s = 1; s < o.dynamic_symbol_count(); ++s) {
    Symbol sym = o.dynamic_symbol(s);
    if (!sym.is_undefined() || o.name_of(sym) != name) continue;
    if (sym.binding != Binding::Global && sym.binding != Binding::GnuUnique && sym.binding != Binding::Weak) continue;
    out.referencing = referencing;
    out.weak = sym.binding == Binding::Weak;
    if (o.has_versym && sym.version_index >= 2) version = o.requirement(sym.version_index);
    break;
  }
  if (out.referencing < 0) return out;
  out.provider = find_definition(p, referencing, name, version).object;
  return out;
}

}  // namespace mlc::loader
