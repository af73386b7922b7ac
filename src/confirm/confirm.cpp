// Confirmation by the real compiler: runs the build's compile command for candidate sources the
// tracer could not settle by text, reads the object's .symtab, and restates the classification.
// Only the compiler runs; the analysed library is never executed.
#include "confirm/confirm.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "build/model.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "elf/elf_object.h"
#include "report/said.h"
#include "source/source_index.h"
#include "trace/trace.h"
#include "verdict/verdict.h"

namespace mlc::confirm {
namespace {

// A failed compile as the run warns of it: once per file.
Warning compile_failed(const said::CompileFailed& f) { return said::warning(f); }

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How a failed compile's warning begins ("--confirm: compiling F failed: ...").

using build::absolute_in;

std::string first_error_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, first;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (first.empty()) first = line;
    if (line.find("error") != std::string::npos) return line;
  }
  return first;
}

struct RunResult {
  bool started = false, exited_ok = false, timed_out = false;
  std::string diagnostics;
};

// Runs the compile command in its directory (common/subprocess.h: a timeout kills the driver and its
// cc1plus alike).
RunResult run_compiler(const CompileCommand& cmd, Clock::time_point deadline) {
  RunResult r;
  const auto started = Clock::now();
  ProgramResult ran =
      run_program({.argv = cmd.argv, .directory = cmd.directory, .deadline = deadline, .merge_output = true});
  if (!ran.started) {
    r.diagnostics = "cannot start a process";
    return r;
  }
  r.started = true;
  r.timed_out = ran.timed_out;
  const int status = ran.status;
  if (r.timed_out) {
    long seconds = std::llround(std::chrono::duration<double>(deadline - started).count());
    r.diagnostics = "did not finish within " + std::to_string(seconds) + " s (a hung compiler)";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    r.diagnostics = "compiler " + cmd.argv[0] + " not found";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    r.exited_ok = true;
  } else {
    r.diagnostics = first_error_line(ran.out);
    if (r.diagnostics.empty()) r.diagnostics = "the compiler failed";
  }
  return r;
}

bool read_cache(const std::string& path, FileResult& r) {
  std::ifstream in(path);
  if (!in) return false;
  std::string status, line;
  if (!std::getline(in, status) || !std::getline(in, line) || line.compare(0, 5, "from ") != 0) return false;
  r.command_from = line.substr(5);
  if (status == "ok") {
    r.ok = true;
  } else if (status.compare(0, 5, "fail ") == 0) {
    r.warning = status.substr(5);
  } else {
    return false;
  }
  while (std::getline(in, line)) {
    if (line.rfind("U ", 0) == 0) r.undefined.push_back(line.substr(2));
    else if (!line.empty()) r.defined.push_back(line);
  }
  r.from_cache = true;
  return true;
}

void write_cache(const std::string& path, const FileResult& r) {
  std::string text = (r.ok ? std::string("ok") : "fail " + r.warning) + "\nfrom " + r.command_from + "\n";
  for (const auto& s : r.defined) text += s + "\n";
  for (const auto& s : r.undefined) text += "U " + s + "\n";  // a symbol name has no blank: "U x" is unambiguous
  (void)write_atomic(path, text, Parents::Create);
}

// In the order given (the best-ranked first, should the budget run out), each file once.
std::vector<std::string> once_in_order(const std::vector<std::string>& files_in) {
  std::vector<std::string> files;
  std::set<std::string> once;
  for (const auto& f : files_in)
    if (once.insert(f).second) files.push_back(f);
  return files;
}

// The cache key of one compile: the source's bytes, the directory and the command (the object's
// scratch path left out, as it differs between runs).
std::string compile_key(const std::string& file, const CompileCommand& cmd, const std::string& object) {
  std::string content;
  {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    content = ss.str();
  }
  std::string key = "v2\0" + content + '\0' + cmd.directory;  // v2: undefined references cached too
  for (const auto& a : cmd.argv) key += '\0' + (a == object ? std::string("<object>") : a);
  return key;
}

// The global symbols the object defines and the strong ones it references, each sorted once.
void read_object_symbols(const std::string& object, FileResult& r) {
  elf::ReadOptions ro;
  ro.static_symbols = true;
  ro.relocations = false;
  auto obj = elf::read_object(object, ro);
  if (!obj) {
    r.warning = "the compiler's object could not be read: " + obj.error().message;
    return;
  }
  r.ok = true;
  for (const auto& s : obj.value().static_symbols) {
    if (s.is_undefined() && !s.name.empty() && s.binding == elf::Binding::Global) r.undefined.emplace_back(s.name);
    if (s.is_undefined() || s.name.empty() || s.binding == elf::Binding::Local) continue;
    if (s.type == elf::SymbolType::Section || s.type == elf::SymbolType::File) continue;
    r.defined.emplace_back(s.name);
  }
  std::sort(r.defined.begin(), r.defined.end());
  r.defined.erase(std::unique(r.defined.begin(), r.defined.end()), r.defined.end());
  std::sort(r.undefined.begin(), r.undefined.end());
  r.undefined.erase(std::unique(r.undefined.begin(), r.undefined.end()), r.undefined.end());
}

// What every worker shares: the commands, the scratch directory, the cache and the time one compile may take.
struct CompileJob {
  const build::BuildCommands& commands;
  const std::string& scratch;
  const std::string& cache_dir;
  double timeout_seconds;
};

// One file's compile, prepared: its command and cache entry; `run` when the budget gives it a compile.
struct Prepared {
  CompileCommand cmd;
  std::string object, cache;
  bool run = false;
};

// Prepares file number `i`: its command (the build's own, or a sibling's) and its cached answer, if any.
// True when it needs the compiler.
bool prepare_one(const CompileJob& job, size_t i, FileResult& r, Prepared& p) {
  p.object = job.scratch + "/" + std::to_string(i) + ".o";
  if (!command_for(job.commands.db, r.file, p.object, p.cmd, r.command_from, job.commands.cuda_compiler)) {
    r.skipped = true;
    if (is_cuda_source(r.file))
      r.warning =
          "the build names no CUDA compiler (CMAKE_CUDA_COMPILER, CUDA_NVCC_EXECUTABLE) and its commands are "
          "the host compiler's, which compiles no .cu";
    return false;
  }
  std::string key = compile_key(r.file, p.cmd, p.object);
  p.cache = job.cache_dir.empty() ? "" : job.cache_dir + "/confirm-" + fnv1a_hex(key) + ".syms";
  return p.cache.empty() || !read_cache(p.cache, r);
}

// Compiles a prepared file and reads what its object defines.
void compile_one(const CompileJob& job, FileResult& r, const Prepared& p) {
  std::error_code ec;
  RunResult run =
      run_compiler(p.cmd, Clock::now() + std::chrono::milliseconds(static_cast<long long>(job.timeout_seconds * 1000)));
  if (run.exited_ok && !fs::exists(p.object)) {
    // Read where the compiler was told to write it; a driver that exits 0 without it compiled nothing.
    r.warning =
        "the compiler exited without writing an object (" + base_name(p.cmd.argv[0]) + " with -o " + p.object + ")";
  } else if (run.exited_ok) {
    read_object_symbols(p.object, r);
  } else {
    r.warning = run.diagnostics;
    if (run.timed_out) r.skipped = true;
  }
  // A hung compile is not a property of the file: only settled outcomes are cached.
  if (!p.cache.empty() && !run.timed_out && run.started) write_cache(p.cache, r);
  fs::remove(p.object, ec);
}

// The counts and warnings of the outcome, and each file's result.
void tally(ConfirmOutcome& outcome, std::vector<FileResult>& results) {
  for (auto& r : results) {
    if (r.from_cache) ++outcome.stats.cached;
    if (r.skipped) {
      ++outcome.stats.skipped;
    } else if (!r.ok) {
      ++outcome.stats.failed;
    }
    if (!r.warning.empty()) outcome.failures.push_back({.file = r.file, .error = r.warning});
    outcome.files[r.file] = std::move(r);
  }
}

}  // namespace

// The passes: each file once, the build's commands, a scratch directory, the files the budget gives
// a compile, the compiles on a pool of workers, then the tally.
ConfirmOutcome confirm_files(const std::vector<std::string>& files_in, const ConfirmOptions& options) {
  ConfirmOutcome outcome;
  std::vector<std::string> files = once_in_order(files_in);
  outcome.stats.files = files.size();
  if (files.empty()) return outcome;
  build::BuildCommands commands = build::read_build_commands(options.build_dir);
  if (commands.db.empty()) {
    outcome.warnings.push_back(
        said::warning(said::NoCompileDatabase{.build_dir = options.build_dir, .files = files.size()}));
    outcome.stats.skipped = files.size();
    for (const auto& f : files) {
      FileResult& r = outcome.files[f];
      r.file = f;
      r.skipped = true;
    }
    return outcome;
  }
  // Scratch objects live in a private directory that is removed whatever happens.
  std::string base = !options.cache_dir.empty() ? options.cache_dir : options.build_dir;
  std::error_code ec;
  fs::create_directories(base, ec);
  std::string tmpl = base + "/confirm-tmp-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  std::string scratch = mkdtemp(buf.data()) ? std::string(buf.data()) : "";
  if (scratch.empty()) {
    outcome.warnings.push_back(said::warning(said::NoScratchDirectory{.under = base}));
    outcome.stats.skipped = files.size();
    return outcome;
  }

  // Which files the compiler runs on is decided here, in the order given, before any runs: the
  // first `budget_compiles` that the cache cannot answer. The same input compiles the same files on
  // an idle machine and a loaded one.
  std::vector<FileResult> results(files.size());
  std::vector<Prepared> prepared(files.size());
  const CompileJob job{.commands = commands,
                       .scratch = scratch,
                       .cache_dir = options.cache_dir,
                       .timeout_seconds = options.compile_timeout_seconds};
  std::vector<size_t> to_compile;
  for (size_t i = 0; i < files.size(); ++i) {
    results[i].file = files[i];
    if (!prepare_one(job, i, results[i], prepared[i])) continue;
    if (to_compile.size() < options.budget_compiles) to_compile.push_back(i);
    else results[i].skipped = true;
  }
  std::atomic<size_t> next{0};
  auto start = Clock::now();
  auto worker = [&] {
    for (size_t k; (k = next++) < to_compile.size();) compile_one(job, results[to_compile[k]], prepared[to_compile[k]]);
  };
  unsigned jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(std::max<size_t>(1, to_compile.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < jobs && !to_compile.empty(); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  fs::remove_all(scratch, ec);

  const size_t compiled = to_compile.size();
  outcome.stats.compiled = compiled;
  outcome.stats.compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  tally(outcome, results);
  return outcome;
}

namespace {

// An unsettled symbol and the sources that may define it.
struct Want {
  UnresolvedSymbol* u;
  demangle::SymbolName name;
  std::vector<RankedSource> files;  // text matching's candidates (tier 0), then the ranked ones
  bool settled = false;
  std::optional<said::OtherMangling> other;  // a definition of the same entity under another mangling
};

// Open: unknown, or known only by a declaration in the sources. A symbol the SDK declares and no
// SDK library exports (sdk-declared-only, cuda-only) is settled by the SDK, not by compiling.
bool is_open(const UnresolvedSymbol& u) {
  const Classification now = verdict::current(u);
  return now == Classification::Unknown || (u.origin && u.origin->kind == OriginKind::Declaration &&
                                            now != Classification::SdkDeclaredOnly && now != Classification::CudaOnly);
}

// The symbols worth compiling for, each with the uncompiled sources text matching says define it.
std::vector<Want> unsettled(const trace::TraceContext& ctx, const std::vector<UnresolvedSymbol*>& symbols) {
  std::vector<Want> wants;
  for (UnresolvedSymbol* u : symbols) {
    auto sym = demangle::parse_symbol(u->symbol);
    if (sym.name.empty()) continue;
    // Placed already in a source the configure compiles since its library was built: the rebuild is the fix.
    if (u->origin && !u->referenced_by.empty() &&
        ctx.build->awaits_rebuild(u->origin->file, u->referenced_by.front().library))
      continue;
    std::string qualified = sym.kind == demangle::NameKind::CName ? sym.name : sym.qualified();
    std::vector<RankedSource> files;
    for (const auto* e : ctx.sources->lookup(sym.name)) {
      if (e->qualified != qualified) continue;
      const std::string& path = ctx.sources->file_of(*e).path;
      // (a source the configure compiles since the library was built is one: its object says what the
      // rebuild will define)
      const bool awaiting =
          !u->referenced_by.empty() && ctx.build->awaits_rebuild(path, u->referenced_by.front().library);
      if (!source::is_compiled_source(path, backend::file_kinds()) || (ctx.build->is_compiled(path) && !awaiting))
        continue;
      if (std::none_of(files.begin(), files.end(), [&](const auto& f) { return f.file == path; }))
        files.push_back(
            {.file = path, .tier = 0, .line = e->line, .evidence = {}, .place = candidate_place(ctx, *u, path)});
    }
    // A file only an if() branch the configure did not take lists (another platform's twin) is tried last.
    std::stable_partition(files.begin(), files.end(),
                          [&](const RankedSource& f) { return !ctx.build->untaken.count(f.file); });
    // Unsettled: unknown or declaration-only (whatever text found), or defined in several uncompiled
    // sources (text cannot see which #if the build takes).
    bool open = is_open(*u);
    bool ambiguous = verdict::current(*u) == Classification::MissingSource && files.size() > 1;
    if (!open && !ambiguous) continue;
    if (!open && files.empty()) continue;
    wants.push_back({.u = u, .name = sym, .files = std::move(files), .settled = false, .other = std::nullopt});
  }
  return wants;
}

// Compiles candidate files within what is left of the budget, and settles a symbol by what a compiled file defines.
struct Confirmer {
  const trace::TraceContext& ctx;
  const ConfirmOptions& options;
  std::vector<Warning>& warnings;
  std::vector<said::CompileFailed>* failures_told = nullptr;  // each failure said, as evidence too

  void tell(const said::CompileFailed& f) {
    warnings.push_back(compile_failed(f));
    if (failures_told) failures_told->push_back(f);
  }
  const Clock::time_point start;
  ConfirmStats total;
  std::map<std::string, FileResult> results;
  std::map<std::string, size_t> placed_by;  // file -> symbols it was found to define

  void compile(const std::vector<std::string>& files) {
    if (files.empty()) return;
    ConfirmOptions o = options;
    o.budget_compiles = options.budget_compiles > total.compiled ? options.budget_compiles - total.compiled : 0;
    ConfirmOutcome out = confirm_files(files, o);
    // A candidate's failed compile is said later, for a symbol nothing settled (tell_failures).
    for (auto& w : out.warnings) warnings.push_back(std::move(w));
    if (options.verbose)
      for (const auto& f : out.failures) tell(f);
    total.files += out.stats.files;
    total.compiled += out.stats.compiled;
    total.cached += out.stats.cached;
    total.failed += out.stats.failed;
    total.skipped += out.stats.skipped;
    total.compile_ms += out.stats.compile_ms;
    for (auto& [f, r] : out.files) results[f] = std::move(r);
  }

  // Whether compiling `f` defines the symbol; if so it is missing-source there, with the fix that
  // adds `f` to the list of the target that builds a library referencing it.
  bool settle(Want& w, const RankedSource& f) {
    auto it = results.find(f.file);
    if (it == results.end() || !it->second.ok) return false;
    const FileResult& r = it->second;
    UnresolvedSymbol& u = *w.u;
    if (!std::binary_search(r.defined.begin(), r.defined.end(), u.symbol)) {
      for (const auto& d : r.defined) {
        if (w.other || d.find(w.name.name) == std::string::npos) continue;
        auto s = demangle::parse_symbol(d);
        if (s.name == w.name.name && s.qualified() == w.name.qualified())
          w.other = said::OtherMangling{.file = f.file, .other = demangle::demangle(d)};
      }
      return false;
    }
    std::optional<std::string> ported_from;
    if (u.origin && u.origin->file == f.file) ported_from = u.origin->ported_from;
    // A source the configure compiles since the library was built (a second --apply before the rebuild):
    // the rebuild is the fix, as the tracer says of a text match there.
    const std::string library = u.referenced_by.empty() ? "" : u.referenced_by.front().library;
    const bool awaiting = !library.empty() && ctx.build->awaits_rebuild(f.file, library);
    verdict::claim(u, EvidencePass::Compiler, awaiting ? Classification::Unknown : Classification::MissingSource);
    u.origin = Origin{.file = f.file,
                      .line = f.line ? std::optional<int>(static_cast<int>(f.line)) : std::nullopt,
                      .kind = OriginKind::Definition,
                      .library = std::nullopt,
                      .ported_from = ported_from};
    say(u, said::CompilerPlaced{
               .file = f.file, .command_from = r.command_from != f.file ? r.command_from : "", .basis = f.evidence});
    if (awaiting) {
      said::DefinitionAt at;
      at.file = f.file;
      at.line = f.line;
      say(u, said::CompiledButOlder{.at = at, .library = library});
      u.fix = Fix{FixKind::None, {}, {}, {}, {}, {}, saying(said::RebuildOlder{.library = library, .file = f.file})};
      w.settled = true;
      ++placed_by[f.file];
      return true;
    }
    std::string target;
    for (const auto& ref : u.referenced_by)
      if (const auto* t = ctx.build->target_for_artifact(ref.library); t && target.empty()) target = t->name;
    u.fix = trace::add_source_fix(build::choose_list(*ctx.build, f.file, target, ctx.porting_dir), f.file);
    w.settled = true;
    ++placed_by[f.file];
    return true;
  }

  // The rounds: by place first (the target's own directories, then other targets', then elsewhere, tests
  // and other platforms last), within a place by tier (0: the sources text matching names, then the
  // ranked evidence); each round settles what it can before the next one compiles, while the budget lasts.
  void rounds(std::vector<Want>& wants) {
    std::map<std::string, std::string> texts;
    for (auto& w : wants) {
      if (w.settled || !is_open(*w.u)) continue;
      for (auto& r : rank_sources(ctx, *w.u, texts))
        if (std::none_of(w.files.begin(), w.files.end(), [&](const auto& f) { return f.file == r.file; }))
          w.files.push_back(std::move(r));
    }
    texts.clear();
    for (int place = 0; place <= 3; ++place)
      for (int tier = 0; tier <= 3; ++tier) {
        std::vector<std::string> files;
        for (const auto& w : wants)
          if (!w.settled)
            for (const auto& f : w.files)
              if (f.place == place && f.tier == tier && !results.count(f.file)) files.push_back(f.file);
        if (files.empty()) continue;
        if (total.compiled >= options.budget_compiles) {
          total.files += files.size();
          total.skipped += files.size();
          continue;
        }
        compile(files);
        for (auto& w : wants) {
          if (w.settled) continue;
          for (const auto& f : w.files)
            if (std::make_pair(f.place, f.tier) <= std::make_pair(place, tier) && settle(w, f)) break;
          // What a file compiled for another symbol defines settles this one too (glog's GetStackTrace
          // comes from a header utilities.cc includes through a macro: no text names it).
          if (w.settled || !is_open(*w.u)) continue;
          for (const auto& file : files)
            if (settle(w, RankedSource{.file = file, .tier = tier, .line = 0, .evidence = {}, .place = place})) break;
        }
      }
  }

  // The compiler's error of each candidate of a symbol no candidate settled: why it stays open. A
  // candidate of a settled symbol that failed is only counted (say_outcome). Returns how many failed
  // compiles were not said.
  size_t tell_failures(const std::vector<Want>& wants) {
    std::set<std::string> told;
    for (const auto& w : wants) {
      if (w.settled) continue;
      for (const auto& f : w.files) {
        auto it = results.find(f.file);
        if (it == results.end() || it->second.warning.empty() || !told.insert(f.file).second) continue;
        if (!options.verbose) tell({.file = f.file, .error = it->second.warning});
      }
    }
    size_t unsaid = 0;
    for (const auto& [file, r] : results) unsaid += !r.warning.empty() && !told.count(file) && !options.verbose;
    return unsaid;
  }

  // What confirming cost, so a user can weigh it against the budget, and what the compiler placed
  // where: the report says what was compiled to settle what.
  void say_outcome(size_t wanted, size_t unsaid) {
    const ConfirmStats& s = total;
    warnings.push_back(said::warning(said::ConfirmCost{.files = s.files,
                                                       .compiled = s.compiled,
                                                       .cached = s.cached,
                                                       .failed = s.failed,
                                                       .unsaid = unsaid,
                                                       .skipped = s.skipped,
                                                       .compile_ms = s.compile_ms}));
    warnings.push_back(said::warning(said::CompilerPlacedCount{
        .settled = s.settled, .wanted = wanted, .by_file = {placed_by.begin(), placed_by.end()}}));
  }
};

}  // namespace

namespace {

// The passes: the unsettled symbols, their candidates (the sources text names, then the ranked ones)
// compiled round by round, then what it cost and what it placed; each compile failure it says is also
// given as evidence (`failures_told`, when given).
ConfirmStats confirm_symbols_telling(const trace::TraceContext& ctx, const std::vector<UnresolvedSymbol*>& symbols,
                                     const ConfirmOptions& options, std::vector<Warning>& warnings,
                                     std::vector<said::CompileFailed>* failures_told) {
  if (!ctx.sources || !ctx.build) return {};
  const auto start = Clock::now();
  std::vector<Want> wants = unsettled(ctx, symbols);
  if (wants.empty()) return {};
  Confirmer confirmer{.ctx = ctx,
                      .options = options,
                      .warnings = warnings,
                      .failures_told = failures_told,
                      .start = start,
                      .total = {},
                      .results = {},
                      .placed_by = {}};
  confirmer.rounds(wants);
  for (auto& w : wants)
    if (!w.settled && w.other) also(*w.u, *w.other);

  confirmer.total.settled =
      static_cast<size_t>(std::count_if(wants.begin(), wants.end(), [](const Want& w) { return w.settled; }));
  size_t unsaid = confirmer.tell_failures(wants);
  if (confirmer.total.files == 0)
    return confirmer.total;  // nothing could be compiled: no cost to report, nothing placed
  confirmer.say_outcome(wants.size(), unsaid);
  return confirmer.total;
}

}  // namespace

ConfirmStats confirm_symbols(const trace::TraceContext& ctx, const std::vector<UnresolvedSymbol*>& symbols,
                             const ConfirmOptions& options, std::vector<Warning>& warnings) {
  return confirm_symbols_telling(ctx, symbols, options, warnings, nullptr);
}

AfterPatch after_patch(const Report& report, const std::vector<std::string>& stubbed,
                       const std::vector<std::string>& unreached, const ConfirmOptions& options,
                       std::vector<Warning>& warnings) {
  AfterPatch a;
  std::set<std::string> stubs(stubbed.begin(), stubbed.end());
  const std::set<std::string> left(unreached.begin(), unreached.end());
  // Only the sources the patch gives back: a symbol stubbed, or whose entry does not reach the build,
  // needs no compile to be counted.
  std::vector<std::string> files;
  for (const auto& lib : report.libraries)
    for (const auto& u : lib.unresolved)
      if (u.fix && u.fix->kind == FixKind::AddSource && u.origin && !left.count(u.symbol) && !stubs.count(u.symbol))
        files.push_back(u.origin->file);
  ConfirmOutcome out = confirm_files(files, options);
  for (auto& w : out.warnings) warnings.push_back(std::move(w));
  for (const auto& f : out.failures) warnings.push_back(compile_failed(f));
  a.stats = out.stats;
  for (const auto& lib : report.libraries) {
    for (const auto& u : lib.unresolved) {
      ++a.total;
      if (stubs.count(u.symbol)) continue;
      if (u.fix && u.fix->kind == FixKind::AddSource && u.origin && !left.count(u.symbol)) {
        auto it = out.files.find(u.origin->file);
        if (it != out.files.end() && std::binary_search(it->second.defined.begin(), it->second.defined.end(), u.symbol))
          continue;
        // Not compiled here (a failed or skipped compile proves nothing either way): the source's text
        // defines it, so the patch is expected to resolve it, but only the rebuild can say.
        if ((it == out.files.end() || !it->second.ok) && verdict::current(u) == Classification::MissingSource &&
            u.origin->kind == OriginKind::Definition) {
          ++a.by_text;
          continue;
        }
      }
      ++a.still;
    }
  }
  return a;
}

namespace {

// The shared libraries the build links into `target` (its dependencies' artifacts, and theirs in turn).
std::vector<std::string> linked_artifacts(const build::Model* build, const std::string& target) {
  std::vector<std::string> out;
  if (!build || target.empty()) return out;
  std::set<std::string> seen;
  std::vector<std::string> todo{target};
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (!seen.insert(name).second) continue;
    for (const auto& t : build->targets) {
      if (t.name != name) continue;
      if (name != target && t.type == build::TargetType::SharedLibrary)
        for (const auto& a : t.artifacts)
          if (fs::exists(a)) out.push_back(a);
      todo.insert(todo.end(), t.dependencies.begin(), t.dependencies.end());
    }
  }
  return out;
}

// What the libraries define already: their own references to it are not the patch's business. Their
// symbol tables too: a library built with hidden visibility (nng) exports none of its internal names.
// And what the libraries the build links into the target define (abseil's strings links
// strings_internal, which --as-needed dropped while no kept source used it): the rebuild links them.
std::set<std::string> known_definitions(const Report& report, const build::Model* build, const std::string& target) {
  std::set<std::string> known;
  auto define = [&](const std::string& path, bool statics) {
    elf::ReadOptions ro;
    ro.relocations = false;
    ro.static_symbols = statics;
    if (auto obj = elf::read_object(path, ro)) {
      for (const auto& s : obj.value().dynamic_symbols)
        if (!s.is_undefined() && !s.name.empty()) known.insert(std::string(s.name));
      for (const auto& s : obj.value().static_symbols)
        if (!s.is_undefined() && !s.name.empty()) known.insert(std::string(s.name));
    }
  };
  for (const auto& lib : report.libraries) {
    for (const auto& u : lib.unresolved) known.insert(u.symbol);
    define(lib.path, true);
  }
  for (const auto& dependency : linked_artifacts(build, target)) define(dependency, false);
  return known;
}

}  // namespace

size_t close_over_sources(Report& report, const trace::TraceContext& ctx, const loader::Process* process,
                          const std::string& target, const ConfirmOptions& options, std::vector<Warning>& warnings) {
  if (report.libraries.empty()) return 0;
  std::set<std::string> known = known_definitions(report, ctx.build, target);
  auto given_back = [&]() {
    std::set<std::string> files;
    for (const auto& lib : report.libraries)
      for (const auto& u : lib.unresolved)
        if (verdict::current(u) == Classification::MissingSource && u.fix && u.fix->kind == FixKind::AddSource &&
            u.origin && !u.origin->file.empty() && !(ctx.build && ctx.build->is_compiled(u.origin->file)))
          files.insert(u.origin->file);
    return files;
  };
  const build::Target* built = nullptr;
  if (ctx.build)
    for (const auto& t : ctx.build->targets)
      if (t.name == target) built = &t;
  size_t added = 0;
  std::set<std::string> done;
  for (int round = 0; round < 8; ++round) {
    std::vector<std::string> fresh;
    for (const auto& f : given_back())
      if (done.insert(f).second) fresh.push_back(f);
    if (fresh.empty()) break;
    ConfirmOutcome out = confirm_files(fresh, options);
    for (auto& w : out.warnings) warnings.push_back(std::move(w));
    for (const auto& f : out.failures) warnings.push_back(compile_failed(f));
    std::set<std::string> wanted;
    for (const auto& [file, r] : out.files) {
      known.insert(r.defined.begin(), r.defined.end());
      wanted.insert(r.undefined.begin(), r.undefined.end());
    }
    size_t before = added;
    std::vector<UnresolvedSymbol> traced;  // what the given-back sources need, traced by text
    for (const auto& symbol : wanted) {
      if (known.count(symbol)) continue;
      known.insert(symbol);
      // Defined by what the library loads (libc's setenv is no reason to compile a Windows port).
      bool loaded = false;
      std::vector<uint32_t> found;
      if (process)
        for (const auto& o : process->objects) {
          o.elf.find_defined(symbol, elf::gnu_hash(symbol), found);
          if ((loaded = !found.empty())) break;
        }
      if (loaded) continue;
      UnresolvedSymbol u;
      u.symbol = symbol;
      u.demangled = demangle::demangle(symbol);
      u.type = SymbolType::Func;
      u.binding = ReferenceBinding::Global;
      // The library the given-back sources go into references it now: its target's directories rank.
      u.referenced_by.push_back({report.libraries.front().path, std::nullopt, std::nullopt, std::nullopt});
      trace::trace_symbol(nullptr, -1, ctx, u);
      // Defined in a source the target compiles already: the link resolves it once a given-back source
      // uses it (libarchive's archive_acl.c, whose hidden functions --gc-sections dropped while no kept
      // source called them). Nothing to give back, and no other candidate to compile.
      if (built && u.origin && !u.origin->file.empty() && ctx.build->compiled_by(*built, u.origin->file)) continue;
      traced.push_back(std::move(u));
    }
    // What text leaves unsettled (a flag a macro defines in another left-out source), the compiler settles.
    {
      std::vector<UnresolvedSymbol*> open;
      for (auto& u : traced) open.push_back(&u);
      std::vector<Warning> quiet;  // the pass's summary lines concern the first report, not these
      std::vector<said::CompileFailed> failed;
      confirm_symbols_telling(ctx, open, options, quiet, &failed);
      for (const auto& f : failed) warnings.push_back(compile_failed(f));
    }
    for (auto& u : traced) {
      if (verdict::current(u) != Classification::MissingSource || !u.origin || u.origin->file.empty()) continue;
      // The tracer had no referencing library to name the target: the fix is aimed at ours.
      if (ctx.build && u.fix && u.fix->kind == FixKind::AddSource) {
        if (auto choice = build::choose_list(*ctx.build, u.origin->file, target, ctx.porting_dir); choice)
          u.fix = trace::add_source_fix(choice, u.origin->file);
      }
      also(u, said::NeededByGivenBack{});
      report.libraries.front().unresolved.push_back(std::move(u));
      ++added;
    }
    if (added == before) break;
  }
  return added;
}

}  // namespace mlc::confirm
