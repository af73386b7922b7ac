// The question put to an interpreter and the parsing of its answer: nothing here runs (the tool runs the
// interpreter, the core reads its answer).
#include "python/query.h"

#include <nlohmann/json.hpp>

namespace mlc::python {

std::vector<std::string> context_packages(const backend::Backend& b) {
  std::vector<std::string> packages{"torch"};
  if (!b.python_package.empty()) packages.push_back(b.python_package);
  packages.push_back("torchvision");
  return packages;
}

std::string query_program(const std::vector<std::string>& packages) {
  std::string list;
  for (const auto& p : packages) list += (list.empty() ? "'" : ", '") + p + "'";
  return "import importlib.util, json, os, sys\n"
         "out = {'executable': sys.executable, 'version': '%d.%d.%d' % sys.version_info[:3], 'prefix': sys.prefix,\n"
         "       'torch_use_rtld_global': bool(os.getenv('TORCH_USE_RTLD_GLOBAL')),\n"
         "       'site': [p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))], 'packages': {}}\n"
         "for name in [" +
         list +
         "]:\n"
         "    try:\n"
         "        spec = importlib.util.find_spec(name)\n"
         "    except Exception:\n"
         "        spec = None\n"
         "    if spec is not None:\n"
         "        out['packages'][name] = {'origin': spec.origin, 'locations': list(spec.submodule_search_locations or "
         "[])}\n"
         // What the answer depends on besides the packages found (kept_answers.cpp, witnesses): the whole of
         // sys.path, the user site directory whether or not it exists yet, the .pth files of the site directories, and
         // the sitecustomize and usercustomize modules imported at start-up.
         "site_mod = sys.modules.get('site')\n"
         "out['path'] = sys.path\n"
         "out['user_site'] = site_mod.USER_SITE if site_mod is not None and site_mod.ENABLE_USER_SITE else None\n"
         "out['pth'] = [os.path.join(d, f) for d in out['site'] + [out['user_site'] or ''] if d and os.path.isdir(d)\n"
         "              for f in sorted(os.listdir(d)) if f.endswith('.pth')]\n"
         "out['customize'] = [getattr(sys.modules.get(m), '__file__', None) for m in ('sitecustomize', "
         "'usercustomize') if getattr(sys.modules.get(m), '__file__', None)]\n"
         "print(json.dumps(out))\n";
}

Result<Interpreter> parse_answer(const std::string& interpreter, const std::string& answer) {
  auto bad = InputError{interpreter, "the interpreter did not answer the package query (not a Python 3 interpreter?)"};
  auto doc = nlohmann::json::parse(answer, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("executable") || !doc["executable"].is_string())
    return bad;
  Interpreter env;
  env.named = interpreter;
  env.asked = true;
  env.executable = doc["executable"].get<std::string>();
  if (doc.contains("version") && doc["version"].is_string()) env.version = doc["version"].get<std::string>();
  if (doc.contains("prefix") && doc["prefix"].is_string()) env.prefix = doc["prefix"].get<std::string>();
  if (doc.contains("torch_use_rtld_global") && doc["torch_use_rtld_global"].is_boolean())
    env.torch_use_rtld_global = doc["torch_use_rtld_global"].get<bool>();
  if (doc.contains("site") && doc["site"].is_array())
    for (const auto& s : doc["site"])
      if (s.is_string()) env.site_dirs.push_back(s.get<std::string>());
  if (doc.contains("packages") && doc["packages"].is_object()) {
    for (const auto& [name, spec] : doc["packages"].items()) {
      if (!spec.is_object()) continue;
      PythonPackage p;
      if (spec.contains("origin") && spec["origin"].is_string()) p.origin = spec["origin"].get<std::string>();
      if (spec.contains("locations") && spec["locations"].is_array())
        for (const auto& l : spec["locations"])
          if (l.is_string()) p.locations.push_back(l.get<std::string>());
      env.packages.emplace(name, std::move(p));
    }
  }
  if (env.executable.empty()) return bad;
  return env;
}

}  // namespace mlc::python
