// Bad input never crashes or hangs: each unusable file gets one line naming it, exit status 2, and
// the usable inputs of the same run are still reported. Hostile ELF files are made here from a
// fixture by truncating it, pointing its sections past the end, and flipping bytes with a fixed seed.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <random>

#include "elf/elf_object.h"
#include "loader/loader.h"
#include "pipeline/linkcheck.h"
#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;
const std::string kGood = kFix + "/weak/libweak_user.so";

std::string fixture_bytes() { return test::read_file(kGood); }

template <typename T>
T get(const std::string& b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}
template <typename T>
void put(std::string& b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof v);
}

// An ELF64 file whose .dynsym section header says its data lies far past the end of the file.
std::string with_section_past_end() {
  std::string b = fixture_bytes();
  auto shoff = get<uint64_t>(b, 0x28);
  auto shentsize = get<uint16_t>(b, 0x3a);
  auto shnum = get<uint16_t>(b, 0x3c);
  for (uint16_t i = 0; i < shnum; ++i) {
    size_t sh = shoff + size_t{i} * shentsize;
    if (get<uint32_t>(b, sh + 4) == 11 /* SHT_DYNSYM */) put<uint64_t>(b, sh + 0x18, b.size() + 4096);
  }
  return b;
}

TEST(BadInput, each_bad_input_is_named_in_one_line_and_the_rest_still_reported) {
  std::string dir = test::scratch_dir("bad-input");
  fs::create_directories(dir + "/notelf");
  test::write_file(dir + "/notelf/readme.txt", "hello\n");
  test::write_file(dir + "/notelf/data.bin", std::string(100, '\x7f'));
  test::write_file(dir + "/text.so", "this is not a library\n");
  test::write_file(dir + "/truncated.so", fixture_bytes().substr(0, 300));
  test::write_file(dir + "/pastend.so", with_section_past_end());

  std::vector<std::string> bad = {dir + "/missing.so", dir + "/notelf", dir + "/text.so", dir + "/truncated.so",
                                  dir + "/pastend.so"};
  std::string args;
  for (const auto& b : bad) args += " " + quote(b);
  auto r = test::run(kBin + " -q" + args + " " + quote(kGood));
  EXPECT_EQ(r.status, 2);
  // The good library is still analysed.
  EXPECT_EQ(r.out, "error: undefined symbol: strong_missing\n");
  std::vector<std::string> lines;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), bad.size()) << r.err;
  EXPECT_EQ(lines[0], "musa-linkcheck: error: " + dir + "/missing.so: cannot open: No such file or directory");
  EXPECT_EQ(lines[1], "musa-linkcheck: error: " + dir + "/notelf: no ELF shared object or executable in this directory");
  EXPECT_EQ(lines[2], "musa-linkcheck: error: " + dir + "/text.so: not an ELF file");
  EXPECT_EQ(lines[3], "musa-linkcheck: error: " + dir + "/truncated.so: truncated ELF: the section header table ends at byte " +
                          std::to_string(get<uint64_t>(fixture_bytes(), 0x28) + 64 * get<uint16_t>(fixture_bytes(), 0x3c)) +
                          " of a 300-byte file");
  EXPECT_EQ(lines[4], "musa-linkcheck: error: " + dir +
                          "/pastend.so: section 3 extends past the end of the file (truncated or corrupt ELF)");
}

TEST(BadInput, json_lists_errors_beside_the_reports) {
  std::string dir = test::scratch_dir("bad-json");
  test::write_file(dir + "/text.so", "nope");
  auto r = test::run(kBin + " --format json " + quote(dir + "/text.so") + " " + quote(kGood));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("\"message\": \"not an ELF file\""), std::string::npos);
  EXPECT_NE(r.out.find("\"symbol\": \"strong_missing\""), std::string::npos);
}

TEST(BadInput, every_truncation_of_a_library_is_an_error_or_a_report_never_a_crash) {
  std::string bytes = fixture_bytes();
  std::string dir = test::scratch_dir("truncations");
  std::string path = dir + "/lib.so";
  size_t errors = 0, tried = 0;
  for (size_t len = 0; len < bytes.size(); len += 1 + len / 8, ++tried) {
    test::write_file(path, bytes.substr(0, len));
    auto obj = elf::read_object(path);
    if (!obj) {
      ++errors;
      EXPECT_EQ(obj.error().path, path);
      EXPECT_EQ(obj.error().message.find('\n'), std::string::npos);
    }
    Report report = run_linkcheck({path}, {});
    EXPECT_EQ(report.errors.empty(), obj.ok());
  }
  // GNU ld puts the section header table last: every strict truncation cuts into it.
  EXPECT_EQ(errors, tried);
}

TEST(BadInput, random_byte_flips_in_headers_never_crash) {
  std::string bytes = fixture_bytes();
  std::string dir = test::scratch_dir("flips");
  std::string path = dir + "/lib.so";
  std::mt19937 rng(20261122);
  auto shoff = get<uint64_t>(bytes, 0x28);
  std::vector<std::pair<size_t, size_t>> regions = {{0, 64}, {shoff, bytes.size() - shoff}};
  // .dynamic, .dynsym, version sections live in the first pages; hit them too.
  regions.push_back({64, std::min<size_t>(bytes.size(), 4096) - 64});
  for (int round = 0; round < 600; ++round) {
    std::string b = bytes;
    const auto& [start, len] = regions[round % regions.size()];
    for (int k = 0; k < 4; ++k) b[start + rng() % len] = static_cast<char>(rng());
    test::write_file(path, b);
    LinkcheckOptions options;
    options.closure = true;
    Report report = run_linkcheck({path}, options);  // must return, whatever it says
    for (const auto& e : report.errors) EXPECT_FALSE(e.message.empty());
  }
}

}  // namespace
}  // namespace mlc
