// Bad input never crashes or hangs: each unusable file gets one line naming it, exit status 2, and
// the usable inputs of the same run are still reported. Hostile ELF files are made here from a
// fixture by truncating it, pointing its sections past the end, and flipping bytes with a fixed seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
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
  EXPECT_EQ(r.out, "error: loading libweak_user.so would fail: 1 cause\nerror: undefined symbol: strong_missing\n");
  std::vector<std::string> lines;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), bad.size()) << r.err;
  EXPECT_EQ(lines[0], "musa-linkcheck: error: " + dir + "/missing.so: cannot open: No such file or directory");
  EXPECT_EQ(lines[1],
            "musa-linkcheck: error: " + dir + "/notelf: no ELF shared object or executable in this directory");
  EXPECT_EQ(lines[2], "musa-linkcheck: error: " + dir + "/text.so: not an ELF file");
  EXPECT_EQ(lines[3],
            "musa-linkcheck: error: " + dir + "/truncated.so: truncated ELF: the section header table ends at byte " +
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

// The sorted names of the unresolved symbols of the first library in a report.
std::vector<std::string> unresolved_names(const Report& r) {
  std::vector<std::string> names;
  if (r.libraries.empty()) return names;
  for (const auto& u : r.libraries[0].unresolved) names.push_back(u.symbol);
  std::sort(names.begin(), names.end());
  return names;
}

// Look-ups go through each library's own .gnu.hash. A provider whose table is corrupt must not
// crash the run: a table whose counts do not fit its section is set aside and the provider's
// definitions are scanned, giving the findings of the intact file; a table that fits but leads
// nowhere only loses definitions.
TEST(BadInput, a_corrupt_gnu_hash_table_falls_back_to_a_scan_or_finds_less_never_crashes) {
  // libver_user.so takes ver_old@VER_1 and ver_new@VER_2 from run/libver.so.1 (its RUNPATH).
  const std::string dir = test::scratch_dir("bad-gnu-hash");
  const std::string user = dir + "/libver_user.so", provider = dir + "/run/libver.so.1";
  fs::create_directories(dir + "/run");
  fs::copy_file(kFix + "/ver/libver_user.so", user);
  const std::string intact = test::read_file(kFix + "/ver/run/libver.so.1");
  test::write_file(provider, intact);
  LinkcheckOptions options;
  options.trace.cuda_home = "";
  Report base = run_linkcheck({user}, options);
  ASSERT_TRUE(base.errors.empty()) << base.errors[0].to_line();
  const std::vector<std::string> expected = unresolved_names(base);
  ASSERT_FALSE(expected.empty());
  auto read = elf::read_object(provider);
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(read->gnu_hash.present());

  // Where .gnu.hash lies, and the provider's own look-ups through it must have mattered: with every
  // bucket pointing past the symbol table, the user's references to the provider go unresolved.
  auto shoff = get<uint64_t>(intact, 0x28);
  auto shnum = get<uint16_t>(intact, 0x3c);
  size_t table = 0, table_size = 0;
  for (uint16_t i = 0; i < shnum; ++i) {
    size_t sh = shoff + size_t{i} * 64;
    if (get<uint32_t>(intact, sh + 4) == 0x6ffffff6 /* SHT_GNU_HASH */) {
      table = get<uint64_t>(intact, sh + 0x18);
      table_size = get<uint64_t>(intact, sh + 0x20);
    }
  }
  ASSERT_NE(table, 0u);
  const uint32_t nbuckets = get<uint32_t>(intact, table), bloom_size = get<uint32_t>(intact, table + 8);

  struct Variant {
    const char* what;
    size_t word;  // header word index
    uint32_t value;
  };
  for (const Variant& v : {Variant{"bucket count past the section", 0, 0xffffffffu}, Variant{"no buckets", 0, 0},
                           Variant{"symbol offset past the table", 1, 0xffffu},
                           Variant{"bloom filter past the section", 2, 0x40000000u}, Variant{"no bloom words", 2, 0}}) {
    std::string b = intact;
    put<uint32_t>(b, table + 4 * v.word, v.value);
    test::write_file(provider, b);
    auto obj = elf::read_object(provider);
    ASSERT_TRUE(obj.ok()) << v.what;
    EXPECT_FALSE(obj->gnu_hash.present()) << v.what;
    Report r = run_linkcheck({user}, options);
    EXPECT_TRUE(r.errors.empty()) << v.what;
    EXPECT_EQ(unresolved_names(r), expected) << v.what;
  }

  std::string b = intact;
  size_t buckets = table + 16 + size_t{bloom_size} * 8;
  ASSERT_LE(buckets + 4 * size_t{nbuckets}, table + table_size);
  for (uint32_t k = 0; k < nbuckets; ++k) put<uint32_t>(b, buckets + 4 * k, 0xfffffff0u);
  test::write_file(provider, b);
  Report r = run_linkcheck({user}, options);
  EXPECT_TRUE(r.errors.empty());
  std::vector<std::string> lost = unresolved_names(r);
  EXPECT_NE(std::find(lost.begin(), lost.end(), "ver_old"), lost.end());
  EXPECT_NE(std::find(lost.begin(), lost.end(), "ver_new"), lost.end());
  fs::remove_all(dir);
}

// Found by fuzz_elf_loader in the native reader: a symbol table linked to a section of type SHT_NULL
// whose offset and size point far past the file. Headers of NULL sections are not bounds-checked,
// so their bytes must never be read: names come out empty (or the file is an error), never a read
// past the mapping.
TEST(BadInput, a_string_table_of_type_null_with_wild_bounds_is_never_read) {
  const std::string dir = test::scratch_dir("null-strtab");
  const std::string lib = dir + "/libver.so.1";
  std::string b = test::read_file(kFix + "/ver/run/libver.so.1");
  auto shoff = get<uint64_t>(b, 0x28);
  auto shnum = get<uint16_t>(b, 0x3c);
  uint32_t dynstr = 0;
  for (uint16_t i = 0; i < shnum; ++i) {
    size_t sh = shoff + size_t{i} * 64;
    if (get<uint32_t>(b, sh + 4) == 11 /* SHT_DYNSYM */) dynstr = get<uint32_t>(b, sh + 0x28);
  }
  ASSERT_NE(dynstr, 0u);
  size_t sh = shoff + size_t{dynstr} * 64;
  put<uint32_t>(b, sh + 4, 0);                       // SHT_NULL
  put<uint64_t>(b, sh + 0x18, 0x7ffffff000000000u);  // sh_offset
  put<uint64_t>(b, sh + 0x20, 0x10000000u);          // sh_size
  test::write_file(lib, b);
  // The object reads (its other tables are sound); the table's names are all empty, never bytes from
  // past the mapping.
  auto obj = elf::read_object(lib);
  ASSERT_TRUE(obj.ok()) << obj.error().to_line();
  ASSERT_FALSE(obj->dynamic_symbols.empty());
  for (const auto& s : obj->dynamic_symbols) EXPECT_TRUE(obj->name_of(s).empty());
  LinkcheckOptions options;
  options.trace.cuda_home = "";
  Report r = run_linkcheck({lib}, options);
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.libraries.size(), 1u);
  EXPECT_EQ(r.libraries[0].path, lib);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mlc
