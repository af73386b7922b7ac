// The "musa-linkcheck/1" JSON report read back (musa-stubgen --report): the target libraries'
// unresolved symbols with what stubgen plans from, each kind parsed by report.h's from_string.
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "report/escape.h"
#include "report/render.h"

namespace mlc {
namespace {

using nlohmann::json;

std::optional<std::string> opt(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? std::optional<std::string>(j[key].get<std::string>()) : std::nullopt;
}

struct UnknownKind {
  std::string what;
};

// A kind named by `key`: `fallback` when absent; a name the contract does not have makes the report
// malformed, as a missing key does.
template <typename Kind>
Kind kind_of(const json& j, const char* key, std::optional<Kind> fallback = std::nullopt) {
  if (fallback && !j.contains(key)) return *fallback;
  std::string name = j.at(key).get<std::string>();
  if (auto kind = from_string<Kind>(name)) return *kind;
  throw UnknownKind{std::string("unknown ") + key + " \"" + name + "\""};
}

}  // namespace

Result<Report> read_json_report(const std::string& path) {
  auto text = read_text(path);
  if (!text) return InputError{path, "cannot open the report"};
  return parse_json_report(*text, path);
}

Result<Report> parse_json_report(std::string_view text, const std::string& path) {
  const Pen pen;  // a saved report's classifications and sentences are read back as they were written
  auto doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return InputError{path, "invalid JSON"};
  if (!doc.is_object() || doc.value("schema", "") != "musa-linkcheck/1") {
    return InputError{path, "not a musa-linkcheck/1 report"};
  }
  Report r;
  try {
    for (const auto& lj : doc.at("libraries")) {
      // Stubs go into the named libraries: a dependency's gaps (the default load checks them) are not theirs to fix.
      if (lj.contains("role") && lj["role"].is_string() &&
          from_string<LibraryRole>(lj["role"].get<std::string>()) != LibraryRole::Target)
        continue;
      LibraryReport lib;
      lib.path = lj.at("path").get<std::string>();
      // A name that is not valid UTF-8 is escaped in `path`; its bytes are in `path_bytes`.
      if (auto b = lj.find("path_bytes"); b != lj.end() && b->is_string())
        if (auto bytes = from_base64(b->get<std::string>())) lib.path = *bytes;
      for (const auto& uj : lj.at("unresolved")) {
        UnresolvedSymbol u;
        u.symbol = uj.at("symbol").get<std::string>();
        u.demangled = uj.value("demangled", u.symbol);
        u.version = opt(uj, "version");
        u.type = kind_of(uj, "type", std::optional(SymbolType::NoType));
        if (uj.contains("size") && uj["size"].is_number_unsigned()) u.size = uj["size"].get<uint64_t>();
        u.binding = from_string<ReferenceBinding>(uj.value("binding", "global")).value_or(ReferenceBinding::Global);
        u.reason.write(pen, uj.value("reason", ""));
        u.classification.write(
            pen, from_string<Classification>(uj.value("classification", "unknown")).value_or(Classification::Unknown));
        if (uj.contains("origin") && uj["origin"].is_object()) {
          const auto& oj = uj["origin"];
          u.origin = Origin{
              oj.value("file", ""),
              oj.contains("line") && oj["line"].is_number() ? std::optional<int>(oj["line"].get<int>()) : std::nullopt,
              kind_of<OriginKind>(oj, "kind"), opt(oj, "library"), opt(oj, "ported_from")};
        }
        if (uj.contains("fix") && uj["fix"].is_object()) {
          const auto& fj = uj["fix"];
          u.fix = Fix{kind_of<FixKind>(fj, "kind"), opt(fj, "cmake_file"), opt(fj, "list"), opt(fj, "entry"),
                      opt(fj, "library")};
          u.fix->detail.write(pen, fj.value("detail", ""));
        }
        if (uj.contains("counterpart") && uj["counterpart"].is_object()) {
          u.counterpart = Counterpart{uj["counterpart"].value("name", ""), opt(uj["counterpart"], "library")};
        }
        lib.unresolved.push_back(std::move(u));
      }
      r.libraries.push_back(std::move(lib));
    }
  } catch (const json::exception& e) {
    return InputError{path, std::string("malformed report: ") + e.what()};
  } catch (const UnknownKind& e) {
    return InputError{path, "malformed report: " + e.what};
  }
  return r;
}

}  // namespace mlc
