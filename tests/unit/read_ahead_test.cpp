// The mapping phase's reads ahead (loader/read_ahead.h): what a search ahead reads is what the walk would
// read, file by file, and a load that takes them is the load that reads everything itself.
#include <gtest/gtest.h>

#include <tbb/task_arena.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "loader/read_ahead.h"
#include "loader/search_order.h"
#include "test_support.h"

namespace mlc {
namespace {

const std::string kCross = MLC_CROSS_FIXTURES;

// Reads ahead are asked for (they are off by default): three readers where the arena has the threads.
const bool kReadAheadAsked = setenv("MLC_READ_AHEAD", "3", 1) == 0;

using Verdict = elf::LoadHeader::Verdict;
const elf::ProcessClass kX86_64{.is_64 = true, .big_endian = false, .machine = 62};

// A search through `dirs`, in order, each directory once (no hwcaps subdirectory).
std::shared_ptr<const loader::SearchSteps> steps_through(const std::vector<std::string>& dirs) {
  loader::SearchSteps steps;
  steps.items.push_back({.dirs = std::make_shared<const std::vector<std::string>>(dirs),
                         .how = loader::FoundHow::Rpath,
                         .list = 0,
                         .single = std::nullopt});
  return std::make_shared<const loader::SearchSteps>(std::move(steps));
}
const auto kNoSubdirs = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{""});

void build_library(const std::string& out, const std::string& soname, const std::string& extra = "") {
  const std::string src = out + ".c";
  test::write_file(src, "int " + soname.substr(3, soname.find('.') - 3) + "_value(void) { return 1; }\n");
  auto r = test::run("cc -shared -fPIC -o " + test::quote(out) + " " + test::quote(src) + " -Wl,-soname," + soname +
                     " " + extra);
  ASSERT_EQ(r.status, 0) << r.err;
}

// glibc's search passes over a file of another class and takes the next one; a directory where the file
// should be ends it. A search ahead reads the same files, and each read is handed out once.
TEST(ReadAhead, reads_the_file_the_search_takes_past_one_of_another_class_and_hands_it_out_once) {
  const std::string i386 = kCross + "/i386/libxprov.so";
  if (!std::filesystem::exists(i386)) MLC_SKIP() << "no i386 fixture: install binutils-i686-linux-gnu";
  const std::string root = test::scratch_dir("read-ahead-class");
  for (const char* d : {"/other", "/mine", "/dir/libxprov.so", "/after"}) std::filesystem::create_directories(root + d);
  std::filesystem::copy_file(i386, root + "/other/libxprov.so");
  build_library(root + "/mine/libxprov.so", "libxprov.so");
  build_library(root + "/after/libxprov.so", "libxprov.so");

  loader::ObjectCache cache(false);
  loader::ReadAhead ahead(kX86_64, &cache);
  ahead.search(steps_through({root + "/missing", root + "/other", root + "/mine", root + "/after"}), "libxprov.so",
               kNoSubdirs);
  ahead.search(steps_through({root + "/dir", root + "/after"}), "libxprov.so", kNoSubdirs);
  ahead.finish();

  auto other = ahead.take(root + "/other/libxprov.so");
  ASSERT_TRUE(other.has_value()) << "the file of another class was not read";
  EXPECT_EQ(other->header.verdict, Verdict::OtherClass);
  EXPECT_FALSE(other->object.has_value());

  auto mine = ahead.take(root + "/mine/libxprov.so");
  ASSERT_TRUE(mine.has_value()) << "the search did not go on past the file of another class";
  const elf::LoadHeader want = elf::read_load_header(root + "/mine/libxprov.so", kX86_64);
  EXPECT_EQ(mine->header.verdict, Verdict::Accepted);
  EXPECT_EQ(mine->header.kind, want.kind);
  EXPECT_EQ(mine->header.map_refusal, want.map_refusal);
  ASSERT_TRUE(mine->object.has_value() && mine->object->ok());
  auto direct = elf::read_object(root + "/mine/libxprov.so", loader::kHeadersOnly);
  ASSERT_TRUE(direct.ok()) << direct.error().to_line();
  EXPECT_EQ(mine->object->value().soname, direct->soname);
  EXPECT_EQ(mine->object->value().needed, direct->needed);
  EXPECT_EQ(mine->object->value().dt_flags_1, direct->dt_flags_1);
  EXPECT_FALSE(ahead.take(root + "/mine/libxprov.so").has_value()) << "a read was handed out twice";

  // The first search ended at the file it took; the second at the directory: neither read past.
  EXPECT_FALSE(ahead.take(root + "/after/libxprov.so").has_value()) << "a search read past where it ends";
}

// A file the walk has tried itself is not read ahead after: its read would be thrown away.
TEST(ReadAhead, a_file_the_walk_tried_is_not_read_ahead_after) {
  const std::string root = test::scratch_dir("read-ahead-taken");
  std::filesystem::create_directories(root + "/lib");
  build_library(root + "/lib/liba.so", "liba.so");
  loader::ReadAhead ahead(kX86_64, nullptr);
  EXPECT_FALSE(ahead.take(root + "/lib/liba.so").has_value());
  ahead.search(steps_through({root + "/lib"}), "liba.so", kNoSubdirs);
  ahead.finish();
  EXPECT_FALSE(ahead.take(root + "/lib/liba.so").has_value());
}

// Everything load_process says of a process, in words.
std::string describe(const loader::Process& p) {
  std::ostringstream out;
  out << "target " << p.target << " main " << p.main << "\n";
  for (const auto& o : p.objects) {
    out << o.path << " real " << o.realname << " how " << loader::to_string(o.how) << " loader " << o.loader << " root "
        << o.root << " flags " << o.is_target << o.is_with << o.global << o.at_start << o.host << " soname "
        << o.elf.soname << " verdict " << static_cast<int>(o.elf.header.verdict) << " names";
    for (const auto& n : o.names) out << " " << n;
    out << "\n";
    for (const auto& n : o.needed) {
      out << "  " << n.name << " -> " << n.object << " " << loader::to_string(n.how) << " " << n.expanded << " "
          << n.refused << "\n";
      for (const auto& s : n.searched)
        out << "    " << s.path << " " << loader::to_string(s.how) << " " << loader::to_string(s.outcome) << "\n";
    }
  }
  for (const auto& f : p.failures)
    out << "failure " << static_cast<int>(f.kind) << " " << f.object << " " << f.file << "\n";
  for (const auto& e : p.errors) out << "error " << e.to_line() << "\n";
  return out.str();
}

std::string load_in(int threads, const std::string& target, const loader::LoaderEnv& env) {
  std::string said;
  tbb::task_arena arena(threads);
  arena.execute([&] {
    loader::ObjectCache cache(false);
    auto p = loader::load_process(target, env, &cache);
    said = p ? describe(*p) : "load failed: " + p.error().to_line();
  });
  return said;
}

// A load on one thread reads nothing ahead; on four, with MLC_READ_AHEAD=3, it does. The processes are the same, on
// Debian's largest closures (libtorch_cpu's 285 objects) and on a world where a search passes over a file of another
// class and one ends at a directory.
TEST(ReadAhead, a_load_that_reads_ahead_is_the_load_that_does_not) {
  ASSERT_TRUE(kReadAheadAsked);
  {
    tbb::task_arena four(4), one(1);
    bool with = false, without = true;
    four.execute([&] { with = loader::ReadAhead::worthwhile(); });
    one.execute([&] { without = loader::ReadAhead::worthwhile(); });
    ASSERT_TRUE(with) << "MLC_READ_AHEAD=3 and four threads: no reads ahead";
    ASSERT_FALSE(without) << "one thread reads ahead";
  }
  std::vector<std::pair<std::string, loader::LoaderEnv>> loads;
  for (const char* real : {"/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13", "/usr/lib/x86_64-linux-gnu/libgdal.so.32"})
    if (std::filesystem::exists(real)) loads.push_back({real, {}});
  const std::string i386 = kCross + "/i386/libxprov.so";
  if (std::filesystem::exists(i386)) {
    const std::string root = test::scratch_dir("read-ahead-load");
    for (const char* d : {"/other/libd.so", "/mine", "/dlib"}) std::filesystem::create_directories(root + d);
    std::filesystem::copy_file(i386, root + "/other/libxprov.so");
    build_library(root + "/mine/libxprov.so", "libxprov.so");
    build_library(root + "/dlib/libd.so", "libd.so");  // linked against, never searched
    build_library(root + "/mine/libmid.so", "libmid.so", "-L" + root + "/mine -l:libxprov.so");
    // RPATH other:mine - libxprov.so passes over other's i386 copy, libd.so ends at other's directory.
    build_library(root + "/user.so", "user.so",
                  "-L" + root + "/mine -L" + root + "/dlib -l:libmid.so -l:libd.so -Wl,--disable-new-dtags,-rpath," +
                      root + "/other:" + root + "/mine -Wl,-rpath-link," + root + "/mine");
    loader::LoaderEnv env;
    env.library_path = {root + "/none"};
    loads.push_back({root + "/user.so", env});
  }
  if (loads.empty()) MLC_SKIP() << "neither Debian's libtorch_cpu nor libgdal nor the i386 fixture is here";
  for (const auto& [target, env] : loads) {
    const std::string alone = load_in(1, target, env);
    ASSERT_EQ(alone.find("load failed"), std::string::npos) << alone;
    for (int round = 0; round < 3; ++round) EXPECT_EQ(load_in(4, target, env), alone) << target;
  }
}

}  // namespace
}  // namespace mlc
