// The ELF reader on every class and byte order (i386, s390x, powerpc fixtures assembled at test time),
// on static archives and on relocatable objects.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "elf/elf_object.h"
#include "elf/kept_relocations.h"
#include "elf/tables.h"
#include "pipeline/linkcheck.h"
#include "test_support.h"

namespace mlc {
namespace {

const std::string kCross = MLC_CROSS_FIXTURES;
const std::string kFix = MLC_LOADER_FIXTURES;

const elf::Symbol* find(const std::vector<elf::Symbol>& syms, std::string_view name, bool defined = true) {
  for (const auto& s : syms)
    if (s.name == name && s.is_undefined() != defined) return &s;
  return nullptr;
}

struct Arch {
  const char* name;
  bool is_64;
  bool big_endian;
  uint16_t machine;
};

class CrossArch : public ::testing::TestWithParam<Arch> {
 protected:
  std::string dir() const { return kCross + "/" + GetParam().name; }
  void SetUp() override {
    if (!std::filesystem::exists(dir() + "/libxuser.so")) {
      MLC_SKIP() << "no " << GetParam().name << " fixture: install binutils-" << GetParam().name
                 << "-linux-gnu (the README's test command does)";
    }
  }
};

TEST_P(CrossArch, reads_class_byte_order_versions_and_relocations) {
  auto prov = elf::read_object(dir() + "/libxprov.so");
  ASSERT_TRUE(prov.ok()) << prov.error().to_line();
  EXPECT_EQ(prov->is_64, GetParam().is_64);
  EXPECT_EQ(prov->big_endian, GetParam().big_endian);
  EXPECT_EQ(prov->machine, GetParam().machine);
  EXPECT_EQ(prov->soname, "libxprov.so");
  const auto* data = find(prov->dynamic_symbols, "xprov_data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->type, elf::SymbolType::Object);
  EXPECT_EQ(data->size, 4u);
  EXPECT_EQ(find(prov->dynamic_symbols, "xprov_other")->size, 8u);
  ASSERT_NE(prov->definition(data->version_index), nullptr);
  EXPECT_EQ(prov->definition(data->version_index)->name, "XPROV_1");
  EXPECT_FALSE(data->version_hidden);

  auto user = elf::read_object(dir() + "/libxuser.so");
  ASSERT_TRUE(user.ok()) << user.error().to_line();
  EXPECT_EQ(user->needed, std::vector<std::string>{"libxprov.so"});
  EXPECT_EQ(user->runpath, "$ORIGIN");
  ASSERT_EQ(user->version_requirements.size(), 1u);
  EXPECT_EQ(user->version_requirements[0].file, "libxprov.so");
  EXPECT_EQ(user->version_requirements[0].name, "XPROV_1");
  EXPECT_TRUE(user->has_relocation_info);
  for (const char* name : {"xprov_data", "xprov_other", "xmissing"}) {
    const auto* ref = find(user->dynamic_symbols, name, false);
    ASSERT_NE(ref, nullptr) << name;
    EXPECT_TRUE(ref->relocated) << name;
  }
  EXPECT_EQ(user->requirement(find(user->dynamic_symbols, "xprov_data", false)->version_index)->name, "XPROV_1");
}

TEST_P(CrossArch, loader_and_binding_work_on_foreign_objects) {
  Report r = run_linkcheck({dir() + "/libxuser.so"}, {});
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_line();
  ASSERT_EQ(r.libraries.size(), 1u);
  ASSERT_EQ(r.libraries[0].needed.size(), 1u);
  EXPECT_EQ(r.libraries[0].needed[0].path, dir() + "/libxprov.so");
  EXPECT_EQ(r.libraries[0].needed[0].how, loader::FoundHow::Runpath);
  ASSERT_EQ(r.libraries[0].unresolved.size(), 1u);
  EXPECT_EQ(r.libraries[0].unresolved[0].symbol, "xmissing");
  EXPECT_EQ(r.libraries[0].unresolved[0].type, SymbolType::NoType);
}

// The three worlds checked in one run: each user's process is of its own class, so each finds the provider
// beside it, whichever file the run read first (a provider read first as its own input, against another
// process's class, once made a user skip it as "wrong ELF class" in most runs).
TEST(CrossWorlds, a_tree_of_every_class_loads_each_user_with_the_provider_beside_it) {
  std::vector<std::string> worlds;
  for (const char* name : {"i386", "s390x", "powerpc"})
    if (std::filesystem::exists(kCross + "/" + name + "/libxuser.so")) worlds.push_back(name);
  if (worlds.size() < 2) MLC_SKIP() << "fewer than two cross fixtures: install binutils-s390x-linux-gnu";
  for (int round = 0; round < 5; ++round) {
    Report r = run_linkcheck({kCross}, {});
    ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_line();
    size_t users = 0;
    for (const auto& lib : r.libraries) {
      if (lib.path.ends_with("/libxprov.so")) {
        EXPECT_TRUE(lib.unresolved.empty()) << lib.path;
        continue;
      }
      ++users;
      const std::string dir = lib.path.substr(0, lib.path.rfind('/'));
      ASSERT_EQ(lib.needed.size(), 1u) << lib.path;
      EXPECT_EQ(lib.needed[0].path, dir + "/libxprov.so") << lib.path << " round " << round;
      EXPECT_EQ(lib.needed[0].how, loader::FoundHow::Runpath) << lib.path;
      ASSERT_EQ(lib.unresolved.size(), 1u) << lib.path << " round " << round;
      EXPECT_EQ(lib.unresolved[0].symbol, "xmissing");
    }
    EXPECT_EQ(users, worlds.size());
  }
}

// The native reader copies out the part of .dynstr that .dynamic's and the version tables' names lie in
// (read with pread, so that no page of the mapping is touched for them). Every name read through the copy is
// the name read from the table: wherever the copy starts and ends, a name it cuts or does not hold is read
// from the table, and one with no NUL before the table's end is no name either way.
TEST(ElfReader, a_name_read_through_a_copied_part_of_a_string_table_is_the_name_in_the_table) {
  using namespace std::string_literals;
  const std::string table = "\0libc.so.6\0GLIBC_2.2.5\0$ORIGIN/../lib\0libx.so\0no-terminator"s;
  size_t names = 0;
  for (size_t from = 0; from <= table.size(); ++from) {
    for (size_t to = from; to <= table.size(); ++to) {
      const std::string copy = table.substr(from, to - from);
      const elf::detail::StringsView view{.all = table, .window = copy, .window_at = from};
      for (uint64_t offset = 0; offset <= table.size() + 1; ++offset) {
        ASSERT_EQ(view.at(offset), elf::detail::name_in(table, offset))
            << "copy [" << from << ", " << to << "), offset " << offset;
        if (from == 0 && to == 0 && !view.at(offset).empty()) ++names;
      }
    }
  }
  EXPECT_EQ(names, 41u);  // every offset inside the four terminated names (9 + 11 + 14 + 7), none in the tail
  // The copy is what is read where it holds the name: its bytes, not the table's (a copy taken of a file is
  // taken once; nothing after reads the mapping for that name).
  const std::string copy = "LIBC.so.6"s + '\0';
  const elf::detail::StringsView view{.all = table, .window = copy, .window_at = 1};
  EXPECT_EQ(view.at(1), "LIBC.so.6");
  EXPECT_EQ(view.at(11), "GLIBC_2.2.5");  // past the copy: the table
}

INSTANTIATE_TEST_SUITE_P(ElfReader, CrossArch,
                         ::testing::Values(Arch{"i386", false, false, 3}, Arch{"s390x", true, true, 22},
                                           Arch{"powerpc", false, true, 20}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(ElfReader, static_archive_members_and_their_symbol_tables) {
  auto members = elf::read_archive(kFix + "/static/libfx_static.a");
  ASSERT_TRUE(members.ok()) << members.error().to_line();
  ASSERT_EQ(members->size(), 2u);
  EXPECT_EQ((*members)[0].archive_member, "static_a.c.o");
  EXPECT_EQ((*members)[1].archive_member, "static_b.c.o");
  const auto& a = (*members)[0];
  EXPECT_EQ(a.kind, elf::ObjectKind::Relocatable);
  EXPECT_NE(find(a.static_symbols, "sa_func"), nullptr);
  EXPECT_NE(find(a.static_symbols, "sb_func", false), nullptr);
  const auto* helper = find(a.static_symbols, "sa_helper");
  ASSERT_NE(helper, nullptr);
  EXPECT_EQ(helper->binding, elf::Binding::Local);
  const auto* data = find((*members)[1].static_symbols, "sb_data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->type, elf::SymbolType::Object);
  EXPECT_EQ(data->size, 4u);
  EXPECT_TRUE(elf::is_archive(kFix + "/static/libfx_static.a"));
  EXPECT_FALSE(elf::is_archive(kFix + "/weak/libweak_user.so"));
}

TEST(ElfReader, relocatable_object_symtab) {
  if (!std::filesystem::exists(kCross + "/i386/user.o")) MLC_SKIP() << "no i386 fixture";
  auto obj = elf::read_object(kCross + "/i386/user.o", elf::ReadOptions{true, false});
  ASSERT_TRUE(obj.ok()) << obj.error().to_line();
  EXPECT_EQ(obj->kind, elf::ObjectKind::Relocatable);
  EXPECT_TRUE(obj->dynamic_symbols.empty());
  EXPECT_NE(find(obj->static_symbols, "user_table"), nullptr);
  EXPECT_NE(find(obj->static_symbols, "xmissing", false), nullptr);
}

// A file read natively is mapped to read the page a fault needs (MADV_RANDOM: "rr" among its VmFlags), not
// read_ahead_kb of pages around it: with 8 MiB of read-ahead, a first run over the device's venv with the page
// cache dropped read 2.5 GB without it and 0.7 GB with it (docs/benchmarks.md); the tables are asked for whole.
TEST(ElfReader, a_native_mapping_reads_the_page_a_fault_needs_not_the_pages_around_it) {
  const std::string path = std::filesystem::canonical(kFix + "/weak/libweak_user.so").string();
  auto obj = elf::read_object(path);
  ASSERT_TRUE(obj.ok()) << obj.error().to_line();
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) MLC_SKIP() << "no /proc/self/smaps here";
  int mappings = 0;
  bool ours = false;
  for (std::string line; std::getline(smaps, line);) {
    // A mapping's first line ("start-end perms offset dev inode path") has a space before its first colon;
    // its fields ("Size:", ..., "VmFlags:") do not.
    if (line.find(' ') < line.find(':')) {
      ours = line.size() > path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
    } else if (ours && line.rfind("VmFlags:", 0) == 0) {
      ++mappings;
      EXPECT_NE((line + " ").find(" rr "), std::string::npos) << line;
    }
  }
  EXPECT_EQ(mappings, 1);
}

// The loader reads a candidate's first KiB once (elf::Descriptor::head) and takes what lies inside it from there:
// a program header table that lies past it is read from the file. Debian's libc (PT_TLS, PT_GNU_PROPERTY) with
// its program headers copied to the end of the file and e_phoff pointing there reads as the original does.
TEST(ElfReader, program_headers_past_the_first_kib_are_read_from_the_file) {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!std::filesystem::exists(libc)) MLC_SKIP() << libc << " is absent (not an x86-64 Debian)";
  std::ifstream in(libc, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 64u);
  uint64_t phoff = 0;
  uint16_t phentsize = 0, phnum = 0;
  std::memcpy(&phoff, bytes.data() + 32, sizeof phoff);
  std::memcpy(&phentsize, bytes.data() + 54, sizeof phentsize);
  std::memcpy(&phnum, bytes.data() + 56, sizeof phnum);
  ASSERT_LT(phoff + size_t{phentsize} * phnum, elf::Descriptor::kHeadBytes) << "libc's table is not in the head";
  std::string moved = bytes;
  moved.resize((moved.size() + 7) & ~size_t{7}, '\0');
  const uint64_t new_phoff = moved.size();
  ASSERT_GT(new_phoff, elf::Descriptor::kHeadBytes);
  moved.append(bytes, phoff, size_t{phentsize} * phnum);
  std::memcpy(moved.data() + 32, &new_phoff, sizeof new_phoff);
  const std::string path = test::scratch_dir("phdrs-at-the-end") + "/libc.so.6";
  std::ofstream(path, std::ios::binary) << moved;

  const elf::ProcessClass x86_64{.is_64 = true, .big_endian = false, .machine = 62};
  const elf::LoadHeader want = elf::read_load_header(libc, x86_64);
  ASSERT_EQ(want.verdict, elf::LoadHeader::Verdict::Accepted);
  ASSERT_GT(want.tls_blocksize, 0u);  // the PT_TLS entry, which lies past the head in the moved table
  elf::Descriptor file;
  const elf::LoadHeader got = elf::read_load_header(path, x86_64, &file);
  EXPECT_EQ(got.verdict, want.verdict);
  EXPECT_EQ(got.open_refusal, want.open_refusal);
  EXPECT_EQ(got.map_refusal, want.map_refusal);
  EXPECT_EQ(got.kind, want.kind);
  EXPECT_EQ(got.tls_blocksize, want.tls_blocksize);
  EXPECT_EQ(got.tls_align, want.tls_align);
  EXPECT_EQ(got.tls_firstbyte_offset, want.tls_firstbyte_offset);
  EXPECT_EQ(got.gnu_1_needed, want.gnu_1_needed);
  EXPECT_EQ(got.x86_isa_1_needed, want.x86_isa_1_needed);
  // The object read from the same descriptor, its head already read: the headers and dynamic section as libc's.
  ASSERT_GE(file.fd, 0);
  auto original = elf::read_object(libc, elf::ReadOptions{.symbols = false});
  auto read = elf::read_object(file, path, elf::ReadOptions{.symbols = false});
  ASSERT_TRUE(original.ok()) << original.error().to_line();
  ASSERT_TRUE(read.ok()) << read.error().to_line();
  EXPECT_EQ(read->soname, "libc.so.6");
  EXPECT_EQ(read->soname, original->soname);
  EXPECT_EQ(read->needed, original->needed);
  EXPECT_EQ(read->dt_flags_1, original->dt_flags_1);
  EXPECT_EQ(read->kind, original->kind);
}

// A relocation table of 70,000 entries, each naming another symbol: every one is marked, once, as many as
// ld.so reports undefined.
TEST(ElfReader, every_symbol_a_large_relocation_table_names_is_marked_once) {
  const std::string dir = test::scratch_dir("large-relocations");
  constexpr int kNames = 70000;
  std::string source;
  for (int i = 0; i < kNames; ++i) source += "extern char s" + std::to_string(i) + ";\n";
  source += "void *table[] = {";
  for (int i = 0; i < kNames; ++i) source += "&s" + std::to_string(i) + ",";
  source += "};\n";
  test::write_file(dir + "/big.c", source);
  auto built = test::run("cc -shared -fPIC -o " + test::quote(dir + "/libbig.so") + " " + test::quote(dir + "/big.c"));
  ASSERT_EQ(built.status, 0) << built.err;
  auto obj = elf::read_object(dir + "/libbig.so");
  ASSERT_TRUE(obj.ok()) << obj.error().to_line();
  std::vector<uint32_t> marked = obj->relocated_symbols;
  std::sort(marked.begin(), marked.end());
  EXPECT_EQ(std::adjacent_find(marked.begin(), marked.end()), marked.end());
  // Beside the table's names, the C runtime's weak references (__cxa_finalize, __gmon_start__...).
  std::set<std::string> names;
  for (uint32_t i : marked) names.insert(std::string(obj->dynamic_symbols[i].name));
  for (int i = 0; i < kNames; ++i) ASSERT_TRUE(names.count("s" + std::to_string(i))) << "s" << i << " is not marked";
  EXPECT_LE(marked.size(), size_t{kNames} + 8);
  // The oracle: the real loader's count of undefined symbols.
  auto ldd = test::run("ldd -r " + test::quote(dir + "/libbig.so") + " 2>&1 | grep -c 'undefined symbol'");
  EXPECT_EQ(ldd.out, std::to_string(kNames) + "\n");
}

// What a file's relocations name, kept between runs: an unchanged file is answered without its relocations
// being read, with what reading them gave; a garbled entry, a file changed since, and a file changed in the
// last two seconds are not answers.
TEST(KeptRelocations, an_unchanged_file_is_answered_as_read_and_a_changed_or_garbled_one_is_read_again) {
  const std::string dir = test::scratch_dir("kept-relocations");
  const std::string lib = dir + "/libkept.so", source = dir + "/kept.c";
  auto build = [&](const std::string& extra) {
    test::write_file(source,
                     "extern int f1(void), f2(void);\n"
                     "extern __thread int t __attribute__((tls_model(\"initial-exec\")));\n"
                     "int g(void) { return f1() + f2() + t; }\n" +
                         extra);
    auto built = test::run("cc -shared -fPIC -o " + test::quote(lib) + " " + test::quote(source));
    ASSERT_EQ(built.status, 0) << built.err;
  };
  auto names = [](const elf::ElfObject& o, const std::vector<uint32_t>& indexes) {
    std::set<std::string> out;
    for (uint32_t i : indexes) out.insert(std::string(o.name_of(o.dynamic_symbol(i))));
    return out;
  };
  auto unread = [&] { return elf::read_object(lib, elf::ReadOptions{.relocations = false, .lookup_only = true}); };
  build("");
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));  // not changed in the last two seconds
  auto read = elf::read_object(lib, elf::ReadOptions{.relocations = true, .lookup_only = true});
  ASSERT_TRUE(read.ok()) << read.error().to_line();
  ASSERT_TRUE(read->has_relocation_info);
  EXPECT_TRUE(names(*read, read->relocated_symbols).count("f1"));
  EXPECT_TRUE(names(*read, read->relocated_symbols).count("f2"));
  EXPECT_TRUE(names(*read, read->static_tls_symbols).count("t"));

  const elf::KeptRelocations kept(dir + "/cache");
  auto answered = unread();
  ASSERT_TRUE(answered.ok());
  EXPECT_FALSE(kept.find(*answered)) << "nothing was kept yet";
  kept.store(*read);
  ASSERT_TRUE(kept.find(*answered));
  EXPECT_TRUE(answered->has_relocation_info);
  EXPECT_EQ(answered->relocated_symbols, read->relocated_symbols);
  EXPECT_EQ(answered->copy_symbols, read->copy_symbols);
  EXPECT_EQ(answered->static_tls_symbols, read->static_tls_symbols);

  // An entry naming a symbol the file does not have is no answer.
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/cache/relocations")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  std::ifstream in(files[0]);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string good = text;
  const size_t row = text.find("\nrelocated\t");
  ASSERT_NE(row, std::string::npos);
  const size_t first = text.find('\t', row + 11) + 1;
  text.replace(first, text.find_first_of(" \n", first) - first, std::to_string(answered->dynsym_count));
  test::write_file(files[0].string(), text);
  auto garbled = unread();
  EXPECT_FALSE(kept.find(*garbled));
  EXPECT_TRUE(garbled->relocated_symbols.empty());
  test::write_file(files[0].string(), good);
  auto again = unread();
  EXPECT_TRUE(kept.find(*again));

  // The file rebuilt (another identity): read again, and what was read of it just now is not kept.
  build("int h(void) { extern int f3(void); return f3(); }\n");
  auto rebuilt = elf::read_object(lib, elf::ReadOptions{.relocations = true, .lookup_only = true});
  ASSERT_TRUE(rebuilt.ok());
  EXPECT_TRUE(names(*rebuilt, rebuilt->relocated_symbols).count("f3"));
  auto stale = unread();
  EXPECT_FALSE(kept.find(*stale));
  kept.store(*rebuilt);
  EXPECT_FALSE(kept.find(*stale)) << "a file changed in the last two seconds was kept";
  std::filesystem::remove_all(dir);
}

TEST(ElfReader, archive_is_not_an_elf_object) {
  auto obj = elf::read_object(kFix + "/static/libfx_static.a");
  ASSERT_FALSE(obj.ok());
  EXPECT_EQ(obj.error().message, "not an ELF file");
}

}  // namespace
}  // namespace mlc
