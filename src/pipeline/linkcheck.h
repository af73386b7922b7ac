// The whole analysis as one list of passes (read ELF -> emulate the loader -> bind -> demangle ->
// classify -> report). Tools build LinkcheckOptions, call run_linkcheck and render the Report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <optional>

#include "installed/installed.h"
#include "loader/loader.h"
#include "python/interpreter.h"
#include "report/report.h"
#include "trace/resources.h"

namespace mlc {

// Where tracing looks and the indexes it builds live with trace/ (trace/resources.h); the tools
// and tests have always named them mlc::TraceOptions and mlc::TraceResources.
using trace::TraceOptions;
using trace::TraceResources;

struct LinkcheckOptions {
  loader::LoaderEnv env;
  // Which objects are checked. Default: the named files and every object loading them brings in
  // (what dlopen(RTLD_NOW) binds), not those already loaded by --with/--python.
  bool closure = false;     // every loaded object, as `ldd -r` does (--with's too)
  bool only_named = false;  // the named files only, not what loading them binds
  TraceOptions trace;
  // Where other versions of a missing library may be installed, off the search path (the SDK's
  // lib/ is added from trace.sdk_home): /usr/local/musa*/lib, conda and venv lib dirs...
  std::vector<installed::Place> places;
  // --python: the interpreter's answer (the tool ran it). Every file's process then has that interpreter
  // as its main program, and the torch it imports is loaded first for the files that need torch.
  std::optional<python::Interpreter> python = std::nullopt;
  std::string dpkg_dir = "/var/lib/dpkg";  // whose lists name each library's package ("" for none)
  // The interpreter that is the main program of the process of a file Python loads (an extension module,
  // a library of modules, a file of a package): --python's executable, else the first ELF python3 on PATH
  // ("" for none). Read, never run: its exported C API and its own load (libm...) bind what such files
  // leave undefined, and its site directories hold the torch a package imports (src/python).
  std::string host_python = "";
  // The --with libraries given without :global or :local. Before an extension module they are loaded as
  // Python's import loads torch's libraries (RTLD_LOCAL: the module binds only what it links); before any
  // other file with RTLD_GLOBAL (LD_PRELOAD, ctypes.CDLL(lib, RTLD_GLOBAL)).
  std::vector<std::string> with_unscoped = {};
  // Called after each named file is checked (done of total); the tool draws a progress line with it.
  std::function<void(size_t done, size_t total)> progress = nullptr;
  // Called with each named file's process as its findings see it (the environment of its import,
  // its checked objects' relocations read), in input order: explain reads the binding of its symbol
  // there (explain::binding_in) instead of loading the file a second time, in another environment.
  std::function<void(const loader::Process& process)> inspect = nullptr;
  // The caller's process ends once the run is out (musa-linkcheck ends with end_run): a single input's
  // process is left to the exit (leave_to_exit) instead of freed. A tree's are freed as it goes, which
  // bounds its memory.
  bool ends_with_process = false;
};

// One symbol, traced without a library (musa-linkcheck explain SYMBOL).
Report explain_symbol(const std::string& symbol, const std::vector<std::string>& inputs,
                      const LinkcheckOptions& options);

// Several symbols traced with one set of indexes (what explain does, in bulk).
Report explain_symbols(const std::vector<std::string>& symbols, const LinkcheckOptions& options);

// Files and directories as the user named them (directories: every ELF file below them).
// Relative paths are taken as they are; the tool makes them absolute before calling.
Report run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options);
void run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options, TraceResources& resources,
                   Report& report);

// The ELF files a list of inputs names; errors for missing paths and for directories without any.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::vector<InputError>& errors);

}  // namespace mlc
