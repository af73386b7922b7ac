// Splits libiberty's canonical demangled text into its parts. The text is regular enough for a
// bracket-aware scan: parameters are the last balanced "(...)", scopes are split at top-level "::",
// a template's return type ends at the last top-level space, operator names are recognised first.
#include "demangle/symbol_name.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "demangle/demangle.h"

namespace mlc::demangle {
namespace {

bool opens(char c) { return c == '<' || c == '(' || c == '[' || c == '{'; }
bool closes(char c) { return c == '>' || c == ')' || c == ']' || c == '}'; }

// Position of "operator" as a name component at depth 0, or npos.
size_t find_operator(std::string_view s) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (depth == 0 && c == 'o' && s.compare(i, 8, "operator") == 0) {
      bool start_ok = i == 0 || s[i - 1] == ':' || s[i - 1] == ' ';
      char next = i + 8 < s.size() ? s[i + 8] : '\0';
      bool end_ok = !(std::isalnum(static_cast<unsigned char>(next)) || next == '_');
      if (start_ok && end_ok) return i;
    }
    if (opens(c)) ++depth;
    if (closes(c) && depth > 0) --depth;
  }
  return std::string_view::npos;
}

std::vector<std::string> split_scopes(std::string_view s) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (opens(c)) ++depth;
    if (closes(c) && depth > 0) --depth;
    if (depth == 0 && c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      parts.emplace_back(s.substr(start, i - start));
      start = i + 2;
      ++i;
    }
  }
  parts.emplace_back(s.substr(start));
  return parts;
}

size_t last_top_level_space(std::string_view s) {
  int depth = 0;
  size_t found = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (opens(c)) ++depth;
    if (closes(c) && depth > 0) --depth;
    if (depth == 0 && c == ' ') found = i;
  }
  return found;
}

std::string strip_template_args(const std::string& segment) {
  if (segment.empty() || segment.back() != '>' || segment.rfind("operator", 0) == 0) return segment;
  auto lt = segment.find('<');
  return lt == std::string::npos ? segment : segment.substr(0, lt);
}

// Fills scopes/name/template_args from a qualified name such as "at::Foo<int>::bar<float>".
void fill_qualified(std::string_view written, SymbolName& s) {
  // ABI tags ("asString[abi:cxx11]") are not part of the name sources spell; `demangled` keeps them.
  std::string untagged(written);
  for (size_t p = untagged.find("[abi:"); p != std::string::npos; p = untagged.find("[abi:", p)) {
    size_t close = untagged.find(']', p);
    if (close == std::string::npos) break;
    untagged.erase(p, close - p + 1);
  }
  std::string_view qualified = untagged;
  std::string_view head = qualified;
  std::string op;
  if (size_t p = find_operator(qualified); p != std::string_view::npos) {
    op = std::string(qualified.substr(p));
    head = qualified.substr(0, p);
    if (head.size() >= 2 && head.substr(head.size() - 2) == "::") head.remove_suffix(2);
  }
  std::vector<std::string> parts = head.empty() ? std::vector<std::string>{} : split_scopes(head);
  if (!op.empty()) {
    s.name = op;
  } else if (!parts.empty()) {
    std::string last = parts.back();
    parts.pop_back();
    s.name = last;
    if (!last.empty() && last.back() == '>') {
      int depth = 0;
      for (size_t i = 0; i < last.size(); ++i) {
        if (last[i] == '<' && depth++ == 0) {
          s.name = last.substr(0, i);
          s.template_args = split_top_level(std::string_view(last).substr(i + 1, last.size() - i - 2));
          break;
        }
        if (opens(last[i])) ++depth;
      }
    }
  }
  s.scopes = std::move(parts);
  if (!s.scopes.empty()) {
    std::string cls = strip_template_args(s.scopes.back());
    s.is_destructor = s.name == "~" + cls;
    s.is_constructor = s.name == cls;
  }
}

bool only_method_qualifiers(std::string_view suffix) {
  size_t i = 0;
  while (i < suffix.size()) {
    if (suffix[i] == ' ') {
      ++i;
      continue;
    }
    bool matched = false;
    for (std::string_view q : {"const", "volatile", "&&", "&", "noexcept", "restrict"}) {
      if (suffix.substr(i, q.size()) == q) {
        i += q.size();
        matched = true;
        break;
      }
    }
    if (!matched) return false;
  }
  return true;
}

void parse_function_or_data(std::string_view d, SymbolName& s) {
  size_t close = d.rfind(')');
  if (close != std::string_view::npos && only_method_qualifiers(d.substr(close + 1))) {
    int depth = 0;
    size_t open = std::string_view::npos;
    for (size_t i = close + 1; i-- > 0;) {
      if (d[i] == ')') ++depth;
      if (d[i] == '(' && --depth == 0) {
        open = i;
        break;
      }
    }
    if (open != std::string_view::npos && open > 0) {
      s.kind = NameKind::Function;
      s.method_qualifiers = std::string(d.substr(close + 1));
      std::string_view inside = d.substr(open + 1, close - open - 1);
      if (!inside.empty()) s.params = split_top_level(inside);
      std::string_view head = d.substr(0, open);
      size_t op = find_operator(head);
      std::string_view before_op = op == std::string_view::npos ? head : head.substr(0, op);
      size_t space = last_top_level_space(before_op);
      if (space != std::string_view::npos) {
        s.return_type = std::string(head.substr(0, space));
        head = head.substr(space + 1);
      }
      fill_qualified(head, s);
      return;
    }
  }
  s.kind = NameKind::Data;
  fill_qualified(d, s);
}

}  // namespace

std::vector<std::string> split_top_level(std::string_view list, char separator) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  auto push = [&](size_t end) {
    std::string_view part = list.substr(start, end - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    out.emplace_back(part);
  };
  for (size_t i = 0; i < list.size(); ++i) {
    char c = list[i];
    if (opens(c)) ++depth;
    if (closes(c) && depth > 0) --depth;
    if (depth == 0 && c == separator) {
      push(i);
      start = i + 1;
    }
  }
  push(list.size());
  if (out.size() == 1 && out[0].empty()) out.clear();
  return out;
}

std::string SymbolName::qualified() const {
  std::string q;
  for (const auto& scope : scopes) q += strip_template_args(scope) + "::";
  return q + name;
}

SymbolName parse_symbol(std::string_view mangled) {
  if (!is_mangled(mangled)) {
    SymbolName s;
    s.kind = NameKind::CName;
    s.demangled = std::string(mangled);
    s.name = s.demangled;
    return s;
  }
  SymbolName s = parse_demangled(demangle(mangled));
  return s;
}

SymbolName parse_demangled(std::string_view text) {
  SymbolName s;
  s.demangled = std::string(text);
  bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
  });
  if (plain) {
    s.kind = NameKind::CName;
    s.name = s.demangled;
    return s;
  }
  std::string_view d = s.demangled;
  while (!d.empty() && d.back() == ']') {  // " [clone .cold]", " [clone .isra.0]"
    size_t p = d.rfind(" [clone ");
    if (p == std::string_view::npos) break;
    d = d.substr(0, p);
  }
  static const std::array<std::pair<std::string_view, NameKind>, 12> kSpecial = {{
      {"construction vtable for ", NameKind::VTable},
      {"vtable for ", NameKind::VTable},
      {"VTT for ", NameKind::VTable},
      {"typeinfo name for ", NameKind::TypeInfo},
      {"typeinfo fn for ", NameKind::TypeInfo},
      {"typeinfo for ", NameKind::TypeInfo},
      {"guard variable for ", NameKind::GuardVariable},
      {"non-virtual thunk to ", NameKind::Thunk},
      {"covariant return thunk to ", NameKind::Thunk},
      {"virtual thunk to ", NameKind::Thunk},
      {"TLS init function for ", NameKind::Other},
      {"TLS wrapper function for ", NameKind::Other},
  }};
  for (const auto& [prefix, kind] : kSpecial) {
    if (d.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = d.substr(prefix.size());
    if (size_t in = rest.find("-in-"); kind == NameKind::VTable && in != std::string_view::npos)
      rest = rest.substr(0, in);
    s.target = std::string(rest);
    if (kind == NameKind::Thunk || kind == NameKind::GuardVariable || kind == NameKind::Other) {
      parse_function_or_data(rest, s);  // the entity the thunk/guard belongs to
    } else {
      fill_qualified(rest, s);
    }
    s.kind = kind;
    return s;
  }
  parse_function_or_data(d, s);
  return s;
}

}  // namespace mlc::demangle
