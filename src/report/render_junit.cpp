// JUnit XML in the shape Jenkins (junit plugin) and GitLab (artifacts:reports:junit) read:
// <testsuites> / <testsuite name tests failures errors skipped> / <testcase classname name> with a
// <failure message type> whose body is the diagnosis. Baselined findings are <skipped>.
#include <fmt/format.h>

#include "report/ci_findings.h"
#include "report/render.h"

namespace mlc {
namespace {

// XML 1.0 character data and attribute values: the five predefined entities, newlines kept in bodies
// and written as &#10; in attributes (which would otherwise normalise them to spaces).
std::string xml(const std::string& s, bool attribute) {
  std::string out;
  for (char c : ci::printable_utf8(s, true)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += attribute ? "&quot;" : "\""; break;
      case '\'': out += attribute ? "&apos;" : "'"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      default: out += c;
    }
  }
  return out;
}

std::string file_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

std::string render_junit(const Report& report, const SourceExists& source_exists) {
  auto found = ci::findings(report, source_exists);
  std::string suites;
  size_t tests = 0, failures = 0, skipped = 0;
  for (const auto& lib : report.libraries) {
    std::string cases;
    size_t n = 0, failed = 0, baselined = 0;
    std::string classname = xml(lib.soname.empty() ? file_name(lib.path) : lib.soname, true);
    // Who installed the library, where known: a suite property (JUnit puts properties before the cases).
    if (lib.owner) {
      cases += fmt::format("    <properties>\n      <property name=\"owner\" value=\"{}\"/>\n    </properties>\n",
                           xml(std::string(to_string(lib.owner->kind)) + " " + lib.owner->name +
                                   (lib.owner->version.empty() ? "" : " " + lib.owner->version),
                               true));
    }
    for (const auto& f : found) {
      if (f.library != &lib) continue;
      ++n;
      std::string body = f.title;
      for (const auto& d : f.details) body += "\n" + d;
      cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\"", classname, xml(f.name, true));
      if (f.file) cases += fmt::format(" file=\"{}\"", xml(*f.file, true));
      if (f.file && f.line) cases += fmt::format(" line=\"{}\"", *f.line);
      cases += ">\n";
      if (f.baselined) {
        ++baselined;
        cases += fmt::format("      <skipped message=\"baselined: {}\"/>\n", xml(f.title, true));
      } else {
        ++failed;
        cases += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml(f.title, true),
                             xml(ci::rule_id(f.rule), true), xml(body, false));
      }
      cases += "    </testcase>\n";
    }
    // A library without findings still shows as one passing case, so a green run is visible.
    if (n == 0) {
      ++n;
      cases += fmt::format("    <testcase classname=\"{}\" name=\"every symbol resolves\"/>\n", classname);
    }
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n{}"
        "  </testsuite>\n",
        xml(lib.path, true), n, failed, baselined, cases);
    tests += n;
    failures += failed;
    skipped += baselined;
  }
  // Run-time look-ups: one case each; a failure only when the run makes them fatal (--fail-on runtime),
  // else a passing case whose output carries the warning.
  if (auto lookups = ci::runtime_findings(report); !lookups.empty()) {
    std::string cases;
    size_t failed = 0;
    for (const auto& f : lookups) {
      std::string body = f.title;
      for (const auto& d : f.details) body += "\n" + d;
      const auto& r = *f.lookup;
      cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", xml(file_name(r.library), true),
                           xml(std::string(to_string(r.kind)) + "(\"" + r.name + "\")", true));
      if (f.fatal) {
        ++failed;
        cases += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml(f.title, true),
                             ci::rule_id(ci::kRuntimeLookupRule), xml(body, false));
      } else {
        cases += fmt::format("      <system-out>warning: {}</system-out>\n", xml(body, false));
      }
      cases += "    </testcase>\n";
    }
    suites += fmt::format(
        "  <testsuite name=\"runtime-lookups\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
        "skipped=\"0\">\n{}  </testsuite>\n",
        lookups.size(), failed, cases);
    tests += lookups.size();
    failures += failed;
  }
  // Unusable inputs are errors (not failures): the check could not run on them.
  if (!report.errors.empty()) {
    std::string cases;
    for (const auto& e : report.errors) {
      cases += fmt::format(
          "    <testcase classname=\"inputs\" name=\"{}\">\n      <error message=\"{}\" type=\"bad-input\"/>\n"
          "    </testcase>\n",
          xml(e.path, true), xml(e.to_line(), true));
    }
    suites += fmt::format(
        "  <testsuite name=\"inputs\" tests=\"{}\" failures=\"0\" errors=\"{}\" skipped=\"0\">\n{}"
        "  </testsuite>\n",
        report.errors.size(), report.errors.size(), cases);
    tests += report.errors.size();
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"musa-linkcheck\" tests=\"{}\" "
      "failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n{}</testsuites>\n",
      tests, failures, report.errors.size(), skipped, suites);
}

}  // namespace mlc
