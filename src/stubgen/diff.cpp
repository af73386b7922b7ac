// A line LCS (our edits touch files of a few hundred lines), then hunks with 3 lines of context, or
// the bare line replacements that SARIF fixes carry.
#include "stubgen/diff.h"

#include <algorithm>
#include <vector>

namespace mlc::stubgen {
namespace {

std::vector<std::string> lines_of(const std::string& text, bool& missing_newline) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(start));
      missing_newline = true;
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

struct Op {
  char kind;    // ' ', '-', '+'
  size_t a, b;  // line indexes in before / after
};

// The edit script turning lines `a` into lines `b`.
std::vector<Op> edit_ops(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  // Common prefix and suffix first: the LCS table only covers the middle.
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  size_t n = a.size() - pre - suf, m = b.size() - pre - suf;
  std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[pre + i] == b[pre + j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<Op> ops;
  for (size_t k = 0; k < pre; ++k) ops.push_back({' ', k, k});
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[pre + i] == b[pre + j]) {
      ops.push_back({' ', pre + i, pre + j});
      ++i, ++j;
    } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      ops.push_back({'+', pre + i, pre + j});
      ++j;
    } else {
      ops.push_back({'-', pre + i, pre + j});
      ++i;
    }
  }
  for (size_t k = 0; k < suf; ++k) ops.push_back({' ', a.size() - suf + k, b.size() - suf + k});
  return ops;
}

// The lines of `text` with their terminators, so that joining them gives `text` back byte for byte.
std::vector<std::string> terminated_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

}  // namespace

std::string unified_diff(const std::string& path, const std::string& before, const std::string& after, bool created) {
  if (before == after) return "";
  bool a_nonl = false, b_nonl = false;
  auto a = lines_of(before, a_nonl);
  auto b = lines_of(after, b_nonl);
  std::vector<Op> ops = edit_ops(a, b);
  // A relative path gets git's a/ and b/ (patch -p1); an absolute one is written as it is (patch -p0),
  // never "b/tmp/...".
  const bool absolute = !path.empty() && path[0] == '/';
  std::string out = created ? "--- /dev/null\n" : (absolute ? "--- " : "--- a/") + path + "\n";
  out += (absolute ? "+++ " : "+++ b/") + path + "\n";
  const size_t ctx = 3;
  size_t k = 0;
  while (k < ops.size()) {
    while (k < ops.size() && ops[k].kind == ' ') ++k;
    if (k == ops.size()) break;
    size_t start = k >= ctx ? k - ctx : 0;
    size_t end = k;
    // Extend the hunk while changes are within 2*ctx of each other.
    while (end < ops.size()) {
      if (ops[end].kind != ' ') {
        ++end;
        continue;
      }
      size_t run = end;
      while (run < ops.size() && ops[run].kind == ' ') ++run;
      if (run == ops.size() || run - end > 2 * ctx) {
        end = std::min(ops.size(), end + ctx);
        break;
      }
      end = run;
    }
    size_t a_start = ops[start].a, b_start = ops[start].b, a_len = 0, b_len = 0;
    std::string body;
    for (size_t q = start; q < end; ++q) {
      const Op& op = ops[q];
      if (op.kind != '+') ++a_len;
      if (op.kind != '-') ++b_len;
      const std::string& text = op.kind == '+' ? b[op.b] : a[op.a];
      body += op.kind + text + "\n";
      bool last_a = op.kind != '+' && op.a == a.size() - 1 && a_nonl;
      bool last_b = op.kind != '-' && op.b == b.size() - 1 && b_nonl;
      if ((op.kind == '-' && last_a) || (op.kind == '+' && last_b) || (op.kind == ' ' && (last_a || last_b))) {
        body += "\\ No newline at end of file\n";
      }
    }
    auto range = [](size_t s, size_t len) {
      if (len == 0) return std::to_string(s) + ",0";
      return std::to_string(s + 1) + (len == 1 ? "" : "," + std::to_string(len));
    };
    out += "@@ -" + range(a_start, a_len) + " +" + range(b_start, b_len) + " @@\n" + body;
    k = end;
  }
  return out;
}

std::vector<LineHunk> line_hunks(const std::string& before, const std::string& after) {
  std::vector<LineHunk> hunks;
  if (before == after) return hunks;
  auto a = terminated_lines(before);
  auto b = terminated_lines(after);
  std::vector<Op> ops = edit_ops(a, b);
  for (size_t k = 0; k < ops.size();) {
    if (ops[k].kind == ' ') {
      ++k;
      continue;
    }
    // A run of changes: the deleted lines of `before` from where it starts, the added lines of `after`.
    LineHunk h{.first = ops[k].a, .count = 0, .inserted = {}};
    for (; k < ops.size() && ops[k].kind != ' '; ++k) {
      if (ops[k].kind == '-') ++h.count;
      else h.inserted += b[ops[k].b];
    }
    hunks.push_back(std::move(h));
  }
  return hunks;
}

}  // namespace mlc::stubgen
