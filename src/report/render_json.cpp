// The "musa-linkcheck/1" JSON report of docs/contract.md: unknown values are null, lists are [].
#include <tbb/parallel_for.h>

#include <nlohmann/json.hpp>

#include "report/escape.h"
#include "report/render.h"

namespace mlc {
namespace {

using nlohmann::json;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json to_json(const UnresolvedSymbol& u) {
  json refs = json::array();
  for (const auto& r : u.referenced_by) {
    refs.push_back(
        {{"library", r.library}, {"function", opt(r.function)}, {"file", opt(r.file)}, {"line", opt(r.line)}});
  }
  json sugg = json::array();
  for (const auto& s : u.suggestions) {
    sugg.push_back(
        {{"symbol", s.symbol}, {"demangled", s.demangled}, {"library", s.library}, {"reason", to_string(s.reason)}});
  }
  json origin = nullptr;
  if (u.origin) {
    origin = {{"file", u.origin->file},
              {"line", opt(u.origin->line)},
              {"kind", to_string(u.origin->kind)},
              {"library", opt(u.origin->library)},
              {"ported_from", opt(u.origin->ported_from)}};
  }
  json counterpart = nullptr;
  if (u.counterpart) counterpart = {{"name", u.counterpart->name}, {"library", opt(u.counterpart->library)}};
  json fix = nullptr;
  if (u.fix) {
    fix = {{"kind", to_string(u.fix->kind)}, {"cmake_file", opt(u.fix->cmake_file)}, {"list", opt(u.fix->list)},
           {"entry", opt(u.fix->entry)},     {"library", opt(u.fix->library)},       {"detail", u.fix->detail}};
  }
  return {{"symbol", u.symbol},
          {"demangled", u.demangled},
          {"version", opt(u.version)},
          {"type", to_string(u.type)},
          {"size", opt(u.size)},
          {"binding", to_string(u.binding)},
          {"referenced_by", refs},
          {"classification", to_string(u.classification)},
          {"reason", u.reason},
          {"origin", origin},
          {"counterpart", counterpart},
          {"suggestions", sugg},
          {"fix", fix},
          {"baselined", u.baselined},
          {"cause", opt(u.cause)}};
}

// Every string (and key) made valid UTF-8 (report/escape.h), so that dump() cannot throw on the
// bytes of a mutated library's symbol names.
void escape_strings(json& j) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (!is_valid_utf8(s)) j = utf8_escaped(s);
  } else if (j.is_array()) {
    for (auto& x : j) escape_strings(x);
  } else if (j.is_object()) {
    // In place; the object is built again only when a key must change (a mutated library's names).
    bool keys_valid = true;
    for (auto& [k, v] : j.items()) {
      escape_strings(v);
      keys_valid = keys_valid && is_valid_utf8(k);
    }
    if (keys_valid) return;
    json out = json::object();
    for (auto& [k, v] : j.items()) out[is_valid_utf8(k) ? k : utf8_escaped(k)] = std::move(v);
    j = std::move(out);
  }
}

// A path's exact bytes when its text cannot carry them (not valid UTF-8, so `path` holds it with \xNN
// escapes): base64, from which a program gets a name it can open. Null for a path valid as text.
json path_bytes(const std::string& path) { return is_valid_utf8(path) ? json(nullptr) : json(base64(path)); }

json to_json(const std::optional<PackageOwner>& o) {
  return o ? json{{"kind", to_string(o->kind)},
                  {"name", o->name},
                  {"version", o->version.empty() ? json(nullptr) : json(o->version)}}
           : json(nullptr);
}

// The environment: the Python context and the run-time look-ups.
void add_environment(const Report& report, json& doc) {
  json lookups = json::array();
  for (const auto& r : report.runtime_lookups) {
    lookups.push_back({{"library", r.library},
                       {"kind", to_string(r.kind)},
                       {"name", r.name},
                       {"provider", opt(r.provider)},
                       {"provider_name", r.provider_name.empty() ? json(nullptr) : json(r.provider_name)},
                       {"searched", r.searched},
                       {"classification", "runtime-lookup"},
                       {"severity", report.runtime_lookups_fatal ? "error" : "warning"},
                       {"driver", r.driver},
                       {"optional", !r.driver}});
  }
  doc["runtime_lookups"] = lookups;
  if (!report.python) {
    doc["python"] = nullptr;
    return;
  }
  const auto& py = *report.python;
  json torch = nullptr;
  if (py.torch_path)
    torch = {{"path", *py.torch_path}, {"version", opt(py.torch_version)}, {"owner", to_json(py.torch_owner)}};
  // `executable` is a deprecated alias of the top-level `interpreter` (docs/contract.md): one value, one source.
  const std::string& executable = report.interpreter.empty() ? py.executable : report.interpreter;
  doc["python"] = {
      {"interpreter", py.interpreter}, {"executable", executable}, {"version", py.version}, {"torch", torch}};
}

// The import of torch a file was checked after (src/python), null when none.
json imported_after_json(const std::optional<ImportedAfter>& a) {
  if (!a) return nullptr;
  return {{"torch", a->torch},
          {"version", a->version ? json(*a->version) : json(nullptr)},
          {"reason", to_string(a->reason)},
          {"evidence", a->evidence}};
}

// One library's object: what it needs, its missing versions, its unresolved symbols, its other load
// failures, and who owns it.
json library_json(const Report& report, const LibraryReport& lib) {
  json needed = json::array();
  for (const auto& n : lib.needed) {
    if (n.path) {
      needed.push_back({{"name", n.name},
                        {"path", *n.path},
                        {"path_bytes", path_bytes(*n.path)},
                        {"how", loader::to_string(n.how)},
                        {"owner", to_json(n.owner)}});
    } else {
      json search = json::array();
      for (const auto& s : n.search)
        search.push_back(
            {{"path", s.path}, {"how", loader::to_string(s.how)}, {"outcome", loader::to_string(s.outcome)}});
      needed.push_back({{"name", n.name},
                        {"path", nullptr},
                        {"path_bytes", nullptr},
                        {"searched", n.searched},
                        {"search", std::move(search)},
                        {"refused", opt(n.refused)},
                        {"baselined", n.baselined},
                        {"cause", opt(n.cause)}});
    }
  }
  json versions = json::array();
  for (const auto& v : lib.missing_versions) {
    versions.push_back({{"version", v.version},
                        {"file", v.file},
                        {"provider", opt(v.provider)},
                        {"baselined", v.baselined},
                        {"cause", opt(v.cause)}});
  }
  json unresolved = json::array();
  for (const auto& u : lib.unresolved) unresolved.push_back(to_json(u));
  json failures = json::array();
  for (const auto& f : lib.load_failures)
    failures.push_back({{"kind", loader::to_string(f.kind)},
                        {"file", f.file},
                        {"message", f.message},
                        {"symbol", opt(f.symbol)},
                        {"fix", f.fix},
                        {"baselined", f.baselined}});
  return {{"path", lib.path},
          {"path_bytes", path_bytes(lib.path)},
          {"soname", lib.soname.empty() ? json(nullptr) : json(lib.soname)},
          {"role", to_string(lib.role)},
          {"loaded_by", opt(lib.loaded_by)},
          {"python_extension", lib.python_extension},
          {"program", lib.program},
          {"needed", std::move(needed)},
          {"missing_versions", std::move(versions)},
          {"unresolved", std::move(unresolved)},
          {"load_failures", std::move(failures)},
          {"owner", to_json(lib.owner)},
          {"host", opt(lib.host)},
          {"imported_after", imported_after_json(lib.imported_after)},
          {"plugin_of", opt(lib.plugin_of)},
          {"loads", lib.role == LibraryRole::Target ? json(!load_fails(report, lib)) : json(nullptr)}};
}

// Each library's object, escaped and dumped on its own, with the indentation of an element of the
// document's "libraries" (dump(2) puts those at 4 spaces): a tree's report holds hundreds, and building
// and dumping them one after the other was a fifth of a warm run over libtorch_cpu's 285 objects.
std::vector<std::string> library_texts(const Report& report) {
  std::vector<std::string> out(report.libraries.size());
  tbb::parallel_for(size_t{0}, out.size(), [&](size_t i) {
    json lib = library_json(report, report.libraries[i]);
    escape_strings(lib);
    const std::string text = lib.dump(2);
    std::string& indented = out[i];
    indented.reserve(text.size() + text.size() / 8);
    for (size_t at = 0; at < text.size();) {
      const size_t end = text.find('\n', at);
      const size_t stop = end == std::string::npos ? text.size() : end + 1;
      if (at > 0) indented += "    ";
      indented.append(text, at, stop - at);
      at = stop;
    }
  });
  return out;
}

}  // namespace

std::string render_json(const Report& report, const std::string& tool_version) {
  json libs = json::array();
  json errors = json::array();
  for (const auto& e : report.errors) errors.push_back({{"file", e.path}, {"message", e.message}});
  json causes = json::array();
  for (const auto& c : report.causes) {
    auto copy = [](const std::optional<LibraryCopy>& l) {
      return l ? json{{"path", l->path}, {"how", shown_how(*l)}} : json(nullptr);
    };
    json others = json::array();
    for (const auto& o : c.others) others.push_back({{"path", o.path}, {"how", shown_how(o)}});
    causes.push_back({{"id", c.id},
                      {"kind", to_string(c.kind)},
                      {"headline", c.headline},
                      {"library", c.library},
                      {"picked", copy(c.picked)},
                      {"other", copy(c.other)},
                      {"missing_versions", c.missing_versions},
                      {"symbols", c.symbols},
                      {"fix", c.fix},
                      {"needed_by", c.needed_by},
                      {"others", std::move(others)}});
  }
  json warnings = json::array();
  for (const auto& w : report.warnings) warnings.push_back(w.text);
  json doc = {{"schema", "musa-linkcheck/1"},
              {"tool_version", tool_version},
              {"libraries", std::move(libs)},
              {"errors", std::move(errors)},
              {"warnings", std::move(warnings)},
              {"causes", std::move(causes)},
              {"interpreter", report.interpreter.empty() ? json(nullptr) : json(report.interpreter)},
              {"with_as_import", report.with_as_import},
              {"summary",
               {{"libraries", report.libraries.size()},
                {"unresolved", report.unresolved_count()},
                {"missing_libraries", report.missing_library_count()},
                {"missing_versions", report.missing_version_count()},
                {"load_failures", report.load_failure_count()},
                {"by_classification", report.by_classification()}}}};
  add_environment(report, doc);
  escape_strings(doc);
  std::string text = doc.dump(2) + "\n";
  // The libraries set where dump() put the empty array: the only key at the top level's indentation (two
  // spaces) named "libraries" (a string's quotes are escaped, so no value holds this text).
  const std::vector<std::string> texts = library_texts(report);
  if (texts.empty()) return text;
  const std::string empty = "\n  \"libraries\": []";
  const size_t at = text.find(empty);
  std::string array = "[\n";
  for (size_t i = 0; i < texts.size(); ++i) {
    array += "    ";
    array += texts[i];
    array += i + 1 < texts.size() ? ",\n" : "\n";
  }
  array += "  ]";
  text.replace(at + empty.size() - 2, 2, array);
  return text;
}

}  // namespace mlc
