// The JSON report reader (--report, --baseline, musa-stubgen's input) on arbitrary bytes, and every
// renderer on whatever it read: the JSON written must parse and read back, SARIF must parse, and the
// text, JUnit and GitHub writers must return.
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "report/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlc;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto report = read_json_report(fuzz::write_file("report.json", bytes));
  if (!report.ok()) {
    if (report.error().to_line().empty()) __builtin_trap();  // an error must say what is wrong
    return 0;
  }
  (void)render_text(*report, TextStyle{});
  std::string json = render_json(*report, "fuzz");
  if (!nlohmann::json::accept(json)) __builtin_trap();
  if (!read_json_report(fuzz::write_file("again.json", json)).ok()) __builtin_trap();  // our own output reads back
  if (!nlohmann::json::accept(render_sarif(*report, SarifOptions{}))) __builtin_trap();
  (void)render_junit(*report);
  (void)render_github(*report);
  return 0;
}
