// Symbol lookup as glibc's dl-lookup.c does it: each relocated reference of the checked objects is
// hashed once and looked up through every object's own .gnu.hash in load order, so the cost follows
// the references, not the (far more numerous) definitions of a 284-library closure.
#include "loader/binding.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "common/phase_times.h"

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

bool counts_as_reference(const elf::ElfObject& o, const Symbol& s) {
  // Weak undefined references never fail (glibc leaves them 0); only relocated names matter.
  return s.is_undefined() && !s.name.empty() && (s.binding == Binding::Global || s.binding == Binding::GnuUnique) &&
         (!o.has_relocation_info || s.relocated);
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

int find_loaded(const Process& p, std::string_view name) {
  for (size_t i = 0; i < p.objects.size(); ++i) {
    for (const auto& n : p.objects[i].names)
      if (n == name) return static_cast<int>(i);
    if (p.objects[i].elf.soname == name) return static_cast<int>(i);
  }
  return -1;
}

struct Lookup {
  bool found = false;
  bool wrong_version = false;
  bool hidden_version = false;
  bool hidden_visibility = false;
  std::vector<int> near;
};

// One object's candidates for one reference (do_lookup_x's loop over one map).
void match_in_object(const elf::ElfObject& def_obj, const std::vector<Def>& defs, size_t begin, size_t end,
                     const elf::VersionRequirement* version, Lookup& out) {
  int versioned_count = 0;
  for (size_t k = begin; k < end; ++k) {
    const Symbol d = def_obj.dynamic_symbol(defs[k].index);
    Usable u = usable(d);
    if (u == Usable::Local) out.hidden_visibility = true;
    if (u != Usable::Yes) continue;
    if (!def_obj.has_versym) {
      out.found = true;
      return;
    }
    if (version) {
      std::string_view have = named_version(def_obj, d.version_index);
      if (have == version->name) {
        out.found = true;
        return;
      }
      // An unnamed (base/global) non-hidden definition also satisfies a versioned reference.
      if (have.empty() && !version->hidden && !d.version_hidden) {
        out.found = true;
        return;
      }
      (d.version_hidden ? out.hidden_version : out.wrong_version) = true;
    } else {
      // An unversioned reference takes index 0..2 directly; a later version only when it is the one
      // non-hidden versioned definition in this object.
      if (d.version_index < 3) {
        out.found = true;
        return;
      }
      if (d.version_hidden) {
        out.hidden_version = true;
      } else {
        ++versioned_count;
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
    match_in_object(o, defs, 0, defs.size(), job.version, here);
    if (!here.found && (here.wrong_version || here.hidden_version || here.hidden_visibility)) job.look.near.push_back(obj);
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
      if (!sym.is_undefined() || (sym.binding != Binding::Global && sym.binding != Binding::GnuUnique)) return;
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
void make_jobs(const std::vector<int>& checked, const std::vector<std::vector<Pending>>& pending, std::vector<Ref>& refs,
               std::vector<Job>& jobs) {
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
      while (first_job[slot] != UINT32_MAX && (jobs[first_job[slot]].hash != r.hash || jobs[first_job[slot]].name != r.name))
        slot = (slot + 1) & mask;
      uint32_t job = first_job[slot];
      if (job == UINT32_MAX) {
        job = static_cast<uint32_t>(jobs.size());
        first_job[slot] = job;
      } else {
        uint32_t last = job;
        for (; job != UINT32_MAX && !same_requirement(jobs[job].version, r.version); job = jobs[job].next_same_name) last = job;
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
void record_unresolved(const Process& p, const std::vector<Ref>& refs, const std::vector<Job>& jobs, BindOutcome& result) {
  for (const Ref& r : refs) {
    const Lookup& look = jobs[r.job].look;
    if (look.found) continue;
    const Job& job = jobs[r.job];
    UnresolvedRef u;
    u.object = r.object;
    u.symbol_index = r.symbol;
    u.name = job.name;
    if (job.version) {
      u.version = job.version->name;
      u.version_file = job.version->file;
    }
    if (job.version && find_loaded(p, job.version->file) < 0) {
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

// dl-version.c: every Vernaux must name a Verdef of the loaded file it is required from.
void check_version_requirements(const Process& p, const std::vector<int>& checked, BindOutcome& result) {
  for (int i : checked) {
    const auto& o = p.objects[i].elf;
    for (const auto& req : o.version_requirements) {
      int provider = find_loaded(p, req.file);
      if (provider < 0) continue;  // the missing library is its own finding
      const auto& pe = p.objects[provider].elf;
      if (!pe.has_verdef) continue;  // glibc only warns: "no version information available"
      bool present = std::any_of(pe.version_definitions.begin(), pe.version_definitions.end(),
                                 [&](const elf::VersionDefinition& d) { return d.name == req.name; });
      if (!present) result.missing_versions.push_back({i, std::string(req.name), std::string(req.file), provider, req.weak});
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

BindOutcome bind(const Process& p, const std::vector<int>& checked) {
  // Objects brought in by one load share its scope (glibc gives a dlopen'ed object and the
  // dependencies it maps one l_scope): one look-up pass per load.
  std::map<int, std::vector<int>> by_root;
  for (int i : checked) by_root[p.objects[i].root].push_back(i);
  BindOutcome result;
  for (const auto& [root, objects] : by_root) bind_in_scope(p, objects, lookup_scope(p, root), result);
  return result;
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
  const uint32_t hash = elf::gnu_hash(name);
  std::vector<uint32_t> found;
  std::vector<Def> defs;
  // The referencing object's scope, as bind() looks it up: a definition an earlier RTLD_LOCAL load
  // holds is not one the reference can bind to.
  for (int obj : lookup_scope(p, p.objects[referencing].root)) {
    const elf::ElfObject& d = p.objects[obj].elf;
    found.clear();
    d.find_defined(name, hash, found);
    if (found.empty()) continue;
    defs.clear();
    for (uint32_t index : found) defs.push_back({obj, index});
    Lookup here;
    match_in_object(d, defs, 0, defs.size(), version, here);
    if (here.found) {
      out.provider = obj;
      break;
    }
  }
  return out;
}

}  // namespace mlc::loader
