// The host programs whose API a plugin leaves undefined for the program that loads it to provide:
// Python's C API for an extension module, Perl's XS API for an XS module.
#pragma once

#include <string_view>

namespace mlc::host {

enum class HostApi { None, Python, Perl };

// Whose API `symbol` belongs to: Python's (Py*, _Py* followed by a capital or '_'), Perl's (Perl_*,
// PL_* its globals, PerlIO* its I/O layers, perl_* perlembed's entry points), else None.
HostApi host_api_of(std::string_view symbol);

// The executable that defines that API for its plugins ("python3", "perl"): a host cause's library.
const char* executable_of(HostApi api);

// The prefix of the library that exports it to a program linking it ("libpython", "libperl").
const char* library_prefix_of(HostApi api);

}  // namespace mlc::host
