// Byte-safe text for every writer: symbol names and paths come from untrusted ELF files and may be
// any bytes, while JSON (and SARIF, JUnit XML...) must be valid UTF-8. One rule for all writers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mlc {

// `text` with every byte that is not part of a valid UTF-8 sequence written as the four characters
// \xNN (uppercase hex). Valid UTF-8 comes back unchanged, so the escape is deterministic and
// lossless for names that do not themselves contain "\x" (ELF symbol names from compilers never do).
std::string utf8_escaped(std::string_view text);

// True when `text` is valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `text` as one line of a terminal report: every C0 control character and DEL written as \xNN, so a
// newline or an escape sequence in a file name cannot break a line or drive the terminal.
std::string controls_escaped(std::string_view text);
bool has_controls(std::string_view text);

// RFC 4648 base64 (with padding): a name's exact bytes in JSON, beside its escaped text. Decoding
// gives nothing for text that is not base64.
std::string base64(std::string_view bytes);
std::optional<std::string> from_base64(std::string_view text);

}  // namespace mlc
