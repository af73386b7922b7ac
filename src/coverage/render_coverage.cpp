// The coverage report's four forms. Text and markdown are for people and reviews; JSON is the
// machine contract (schema musa-linkcheck-coverage/1); HTML is one self-contained page (inline CSS,
// JS and SVG: it opens from a CI artifact with no network) with a sortable table and a chart.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "coverage/coverage.h"
#include "report/escape.h"

namespace mlc::coverage {
namespace {

constexpr Status kStatuses[] = {Status::Exported, Status::HeaderOnly, Status::DeclaredOnly,
                                Status::Missing,  Status::Unmapped,   Status::NoSdk};

const char* color_of(Status s) {
  switch (s) {
    case Status::Exported: return "#2e7d32";
    case Status::HeaderOnly: return "#81c784";
    case Status::DeclaredOnly: return "#f9a825";
    case Status::Missing: return "#c62828";
    case Status::Unmapped: return "#6a1b9a";
    case Status::NoSdk: return "#78909c";
  }
  return "#000";
}

uint32_t count(const std::map<Status, uint32_t>& m, Status s) {
  auto it = m.find(s);
  return it == m.end() ? 0 : it->second;
}

std::string declared(const ApiUse& a) {
  return a.declared_file ? *a.declared_file + ":" + std::to_string(a.declared_line) : "-";
}

std::string headline(const CoverageReport& r) {
  size_t files = 0;
  std::map<std::string, bool> seen;
  for (const auto& a : r.apis)
    for (const auto& f : a.files) seen[f.file] = true;
  files = seen.size();
  return fmt::format("{} CUDA APIs, {} call sites in {} of {} files scanned (backend {}, SDK {}, map {})",
                     r.apis.size(), r.call_sites, files, r.files_scanned, r.backend,
                     r.sdk_home.empty() ? "none" : r.sdk_home,
                     !r.naming_rule.empty() ? "none: counterparts by the naming rule " + r.naming_rule
                     : r.mapping.empty()    ? "none"
                                            : r.mapping);
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : utf8_escaped(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A Markdown table cell: '|' would end the cell, and '<', '>' and '&' would be read as HTML by
// GitHub's and GitLab's renderers (a path named "<img src=x onerror=...>"), so they become entities;
// a backtick would open code.
std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : utf8_escaped(s)) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '`': out += "&#96;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_text(const CoverageReport& r) {
  std::string out = "Porting coverage: " + headline(r) + "\n\n";
  out += fmt::format("{:<9} {:>5} {:>10} {:>8} {:>11} {:>13} {:>7} {:>8}\n", "family", "apis", "call-sites", "exported",
                     "header-only", "declared-only", "missing", "unmapped");
  for (const auto& f : r.families)
    out += fmt::format("{:<9} {:>5} {:>10} {:>8} {:>11} {:>13} {:>7} {:>8}\n", f.family, f.apis, f.call_sites,
                       count(f.by_status, Status::Exported), count(f.by_status, Status::HeaderOnly),
                       count(f.by_status, Status::DeclaredOnly), count(f.by_status, Status::Missing),
                       count(f.by_status, Status::Unmapped));
  out += "\n";
  for (const auto& a : r.apis) {
    out += fmt::format("{} -> {} [{}] {}{}: {} call site{} in {} file{}", utf8_escaped(a.cuda),
                       a.counterpart ? utf8_escaped(*a.counterpart) : "?", a.family, to_string(a.status),
                       a.marked_unsupported ? " (map: unsupported)" : "", a.call_sites, a.call_sites == 1 ? "" : "s",
                       a.files.size(), a.files.size() == 1 ? "" : "s");
    if (a.declared_file) out += "; declared " + declared(a);
    if (a.exported_by) out += "; exported by " + *a.exported_by;
    out += "\n";
  }
  // What a porting team will have to stub or request, in one place.
  std::string todo;
  for (const auto& a : r.apis)
    if (a.status == Status::DeclaredOnly || a.status == Status::Missing)
      todo += fmt::format("  {} ({}): first used at {}:{}\n", a.counterpart ? *a.counterpart : a.cuda,
                          to_string(a.status), a.files.front().file, a.files.front().first_line);
  if (!todo.empty()) out += "\nTo stub or request from the SDK:\n" + todo;
  return out;
}

std::string render_json(const CoverageReport& r, const std::string& tool_version) {
  using nlohmann::json;
  auto by_status = [](const std::map<Status, uint32_t>& m) {
    json o = json::object();
    for (const auto& [s, n] : m) o[to_string(s)] = n;
    return o;
  };
  json j;
  j["schema"] = "musa-linkcheck-coverage/1";
  j["tool_version"] = tool_version;
  j["backend"] = r.backend;
  j["sdk_home"] = r.sdk_home.empty() ? json(nullptr) : json(r.sdk_home);
  j["mapping"] = r.mapping.empty() ? json(nullptr) : json(utf8_escaped(r.mapping));
  j["naming_rule"] = r.naming_rule.empty() ? json(nullptr) : json(r.naming_rule);
  j["roots"] = json::array();
  for (const auto& root : r.roots) j["roots"].push_back(utf8_escaped(root));
  j["files_scanned"] = r.files_scanned;
  j["totals"] = {{"apis", r.apis.size()}, {"call_sites", r.call_sites}, {"by_status", by_status(r.by_status)}};
  j["families"] = json::array();
  for (const auto& f : r.families)
    j["families"].push_back(
        {{"family", f.family}, {"apis", f.apis}, {"call_sites", f.call_sites}, {"by_status", by_status(f.by_status)}});
  j["apis"] = json::array();
  for (const auto& a : r.apis) {
    json files = json::array();
    for (const auto& f : a.files)
      files.push_back({{"file", utf8_escaped(f.file)}, {"count", f.count}, {"first_line", f.first_line}});
    json decl = nullptr;
    if (a.declared_file) decl = {{"file", *a.declared_file}, {"line", a.declared_line}, {"kind", a.declared_kind}};
    j["apis"].push_back({{"cuda", utf8_escaped(a.cuda)},
                         {"family", a.family},
                         {"counterpart", a.counterpart ? json(*a.counterpart) : json(nullptr)},
                         {"marked_unsupported", a.marked_unsupported},
                         {"status", to_string(a.status)},
                         {"declared", decl},
                         {"exported_by", a.exported_by ? json(*a.exported_by) : json(nullptr)},
                         {"call_sites", a.call_sites},
                         {"files", files}});
  }
  j["errors"] = json::array();
  for (const auto& e : r.errors)
    j["errors"].push_back({{"file", utf8_escaped(e.path)}, {"message", utf8_escaped(e.message)}});
  return j.dump(2) + "\n";
}

std::string render_markdown(const CoverageReport& r) {
  std::string out = "# Porting coverage\n\n" + md_cell(headline(r)) + "\n\n";
  out += "| family | APIs | call sites | exported | header-only | declared-only | missing | unmapped |\n";
  out += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& f : r.families)
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", f.family, f.apis, f.call_sites,
                       count(f.by_status, Status::Exported), count(f.by_status, Status::HeaderOnly),
                       count(f.by_status, Status::DeclaredOnly), count(f.by_status, Status::Missing),
                       count(f.by_status, Status::Unmapped));
  out += "\n| CUDA API | family | counterpart | status | declared | exported by | call sites | files |\n";
  out += "|---|---|---|---|---|---|---:|---:|\n";
  for (const auto& a : r.apis)
    out += fmt::format("| `{}` | {} | {} | {}{} | {} | {} | {} | {} |\n", md_cell(a.cuda), a.family,
                       a.counterpart ? "`" + md_cell(*a.counterpart) + "`" : "-", to_string(a.status),
                       a.marked_unsupported ? " (map: unsupported)" : "", md_cell(declared(a)),
                       a.exported_by ? md_cell(*a.exported_by) : "-", a.call_sites, a.files.size());
  return out;
}

std::string render_html(const CoverageReport& r) {
  std::string out = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Porting coverage</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 8px}
table{border-collapse:collapse;margin:12px 0}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#eceff1;cursor:pointer;user-select:none}
th.asc::after{content:" \25B2"}th.desc::after{content:" \25BC"}
td.n{text-align:right}
.s{display:inline-block;padding:0 6px;border-radius:3px;color:#fff}
.legend span{margin-right:12px}
</style></head><body>
<h1>Porting coverage</h1>
)";
  out += "<p id=\"headline\">" + html_escape(headline(r)) + "</p>\n";
  // The chart: one stacked bar per family, APIs by status.
  uint32_t widest = 1;
  for (const auto& f : r.families) widest = std::max(widest, f.apis);
  const int label = 90, bar = 560, row = 26;
  int height = static_cast<int>(r.families.size()) * row + 10;
  out += fmt::format(
      "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"APIs per family by status\">\n",
      label + bar + 60, height);
  int y = 5;
  for (const auto& f : r.families) {
    out += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"13\">{}</text>\n", y + 16, html_escape(f.family));
    double x = label;
    for (Status s : kStatuses) {
      uint32_t n = count(f.by_status, s);
      if (n == 0) continue;
      double w = static_cast<double>(bar) * n / widest;
      out += fmt::format(
          "<rect class=\"bar\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"20\" fill=\"{}\">"
          "<title>{} {}: {}</title></rect>\n",
          x, y, w, color_of(s), html_escape(f.family), to_string(s), n);
      x += w;
    }
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\">{}</text>\n", x + 4, y + 15, f.apis);
    y += row;
  }
  out += "</svg>\n<div class=\"legend\">";
  for (Status s : kStatuses)
    out += fmt::format("<span><span class=\"s\" style=\"background:{}\">{}</span> {}</span>", color_of(s), to_string(s),
                       count(r.by_status, s));
  out += "</div>\n";
  out +=
      "<table id=\"apis\"><thead><tr>"
      "<th data-type=\"s\">CUDA API</th><th data-type=\"s\">family</th><th data-type=\"s\">counterpart</th>"
      "<th data-type=\"s\">status</th><th data-type=\"s\">declared</th><th data-type=\"s\">exported by</th>"
      "<th data-type=\"n\">call sites</th><th data-type=\"n\">files</th></tr></thead><tbody>\n";
  for (const auto& a : r.apis) {
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td><span class=\"s\" style=\"background:{}\">{}</span>{}</td>"
        "<td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
        html_escape(a.cuda), html_escape(a.family), a.counterpart ? html_escape(*a.counterpart) : "-",
        color_of(a.status), to_string(a.status), a.marked_unsupported ? " (map: unsupported)" : "",
        html_escape(declared(a)), a.exported_by ? html_escape(*a.exported_by) : "-", a.call_sites, a.files.size());
  }
  out += "</tbody></table>\n";
  // Sorting: a click on a header sorts by it (again: the other way). "#sort=N" or "#sort=-N" in the
  // address clicks column N once or twice on load, so a headless browser can be scripted by URL.
  out += R"(<script>
(function(){
  var table=document.getElementById('apis');
  var heads=table.tHead.rows[0].cells;
  function key(row,i,num){var t=row.cells[i].textContent;return num?parseFloat(t)||0:t.toLowerCase();}
  function sortBy(i){
    var th=heads[i],asc=!th.classList.contains('asc'),num=th.dataset.type==='n';
    for(var k=0;k<heads.length;k++)heads[k].classList.remove('asc','desc');
    th.classList.add(asc?'asc':'desc');
    var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){var x=key(a,i,num),y=key(b,i,num);var c=x<y?-1:x>y?1:0;return asc?c:-c;});
    rows.forEach(function(r){body.appendChild(r);});
  }
  for(var i=0;i<heads.length;i++)(function(i){heads[i].addEventListener('click',function(){sortBy(i);});})(i);
  var m=/sort=(-?)(\d+)/.exec(location.hash);
  if(m&&heads[+m[2]]){heads[+m[2]].click();if(m[1])heads[+m[2]].click();}
})();
</script>
</body></html>
)";
  return out;
}

}  // namespace mlc::coverage
