#include "host/host_api.h"

namespace mlc::host {

HostApi host_api_of(std::string_view s) {
  auto upper_after = [&](size_t n) { return s.size() > n && ((s[n] >= 'A' && s[n] <= 'Z') || s[n] == '_'); };
  if ((s.starts_with("Py") && upper_after(2)) || (s.starts_with("_Py") && upper_after(3))) return HostApi::Python;
  if (s.starts_with("Perl_") || s.starts_with("PL_") || s.starts_with("PerlIO") || s.starts_with("perl_"))
    return HostApi::Perl;
  return HostApi::None;
}

const char* executable_of(HostApi api) {
  switch (api) {
    case HostApi::Python: return "python3";
    case HostApi::Perl: return "perl";
    case HostApi::None: return "";
  }
  return "";
}

const char* library_prefix_of(HostApi api) {
  switch (api) {
    case HostApi::Python: return "libpython";
    case HostApi::Perl: return "libperl";
    case HostApi::None: return "";
  }
  return "";
}

}  // namespace mlc::host
