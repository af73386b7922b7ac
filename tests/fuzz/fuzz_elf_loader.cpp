// The ELF reader and the loader model over a synthetic file system: the input is up to four files
// (split at "\0MLCFILE\0"), written as libfuzz0.so ... into a private directory that is the whole
// search path (no ld.so.cache, no system directories). The first is analysed with its closure, the
// way `musa-linkcheck --closure` does, and the report is rendered: nothing may crash, hang or throw.
#include <string>

#include "fuzz_support.h"
#include "pipeline/linkcheck.h"
#include "report/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlc;
  auto parts = fuzz::split_parts({reinterpret_cast<const char*>(data), size}, {"\0MLCFILE\0", 9}, 4);
  std::vector<std::string> files;
  for (size_t i = 0; i < parts.size(); ++i)
    files.push_back(fuzz::write_file("libfuzz" + std::to_string(i) + ".so", parts[i]));
  LinkcheckOptions options;
  options.closure = true;
  options.env.library_path = {fuzz::scratch_dir()};
  options.env.default_dirs = {fuzz::scratch_dir()};
  options.env.ld_so_cache = fuzz::scratch_dir() + "/no-ld.so.cache";
  options.env.ld_so_conf = fuzz::scratch_dir() + "/no-ld.so.conf";
  if (parts.size() > 1) options.env.with = {files[1]};
  Report report = run_linkcheck({files[0]}, options);
  (void)render_text(report, TextStyle{});
  (void)render_json(report, "fuzz");
  return 0;
}
