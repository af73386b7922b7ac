// The demangle wrapper and the structured parse of its output, on arbitrary names (deeply nested
// and huge ones included: libiberty has recursion limits of its own, which must hold here).
#include <string>

#include "demangle/demangle.h"
#include "demangle/symbol_name.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string name(reinterpret_cast<const char*>(data), size);
  std::string out = mlc::demangle::demangle(name);
  (void)mlc::demangle::parse_symbol(name);
  (void)mlc::demangle::parse_demangled(out);
  (void)mlc::demangle::parse_demangled(name);
  return 0;
}
