// The declaration scanner on arbitrary source text: entities, the raw declaration of each function
// found, and type normalisation of every parameter.
#include "backend/backend.h"
#include "fuzz_support.h"
#include "source/scanner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlc::source;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto entities = scan_source(text);
  for (size_t i = 0; i < entities.size() && i < 64; ++i) {
    (void)raw_declaration(text, entities[i].line, entities[i].name(), mlc::backend::api_macros());
    for (const auto& p : split_list(entities[i].params)) (void)normalize_type(p, true);
  }
  (void)normalize_type(text.substr(0, 4096), true);
  return 0;
}
