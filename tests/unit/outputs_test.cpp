// The files a run writes: what each output option may name, and what it must never replace. A device
// node, a FIFO or a descriptor path is written in place; a file the run reads or loads is never an
// output, nor are two outputs one file (src/common/outputs.h): refused, exit 2, one line naming both
// uses, and the file's bytes untouched.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>

#include "test_support.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::run;

const std::string kLinkcheck = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;
const std::string kExample = MLC_EXAMPLE_DIR;
const std::string kExampleSrc = std::string(MLC_SOURCE_DIR) + "/fixtures/example";

// The bundled example's context (tools/dev.sh example), with a private cache.
std::string example_args(const std::string& cache) {
  return " --porting-dir " + quote(kExampleSrc + "/generated_cuda_compatible") + " --cmake-lists " +
         quote(kExampleSrc + "/csrc/CMakeLists.txt") + " --mapping " + quote(kExampleSrc + "/mapping") +
         " --sdk-home " + quote(kExample + "/sdk") + " --with " + quote(kExample + "/libc10.so") + " --cache-dir " +
         quote(cache) + " " + quote(kExample + "/libmusa_kernels.so");
}

bool is_null_device(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
}

// As root (CI, these machines), renaming a report over /dev/null replaced the device with a regular file
// that every later process appended to. A node of its own, in the scratch area, stands for /dev/null.
TEST(Outputs, a_device_node_named_as_any_output_is_written_in_place_and_stays_a_device) {
  if (geteuid() != 0) MLC_SKIP() << "mknod of a character device needs root (CI runs the suite as root)";
  std::string dir = test::scratch_dir("devnode");
  std::vector<std::string> nodes;
  for (const char* name : {"report", "json", "baseline", "cpp", "header", "patch"}) {
    std::string node = dir + "/" + name;
    ASSERT_EQ(run("mknod " + quote(node) + " c 1 3").status, 0);
    ASSERT_TRUE(is_null_device(node));
    nodes.push_back(node);
  }
  std::string cache = dir + "/cache";
  auto lc = run(kLinkcheck + " -o " + quote(nodes[0]) + " --json-report " + quote(nodes[1]) + " --update-baseline " +
                quote(nodes[2]) + example_args(cache));
  EXPECT_EQ(lc.status, 0) << lc.err;  // findings written to the baseline are accepted
  EXPECT_EQ(lc.err, "");
  auto sg = run(kStubgen + " --no-runtime --out-cpp " + quote(nodes[3]) + " --out-header " + quote(nodes[4]) +
                " --cmake-patch " + quote(nodes[5]) + example_args(cache));
  EXPECT_LE(sg.status, 1) << sg.err;
  for (const auto& node : nodes) EXPECT_TRUE(is_null_device(node)) << node << " is no longer a character device";
  // Nothing was left beside them (a temporary file renamed over a node would be).
  std::string left;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != "cache" && std::find(nodes.begin(), nodes.end(), e.path().string()) == nodes.end())
      left += e.path().filename().string() + " ";
  EXPECT_EQ(left, "");
}

// /dev/stdout names the descriptor the shell opened: the report goes there, after what the tool printed.
TEST(Outputs, dev_stdout_is_the_processes_own_standard_output) {
  std::string dir = test::scratch_dir("devstdout");
  std::string file = dir + "/out.txt";
  auto r = run(kLinkcheck + " -o /dev/stdout" + example_args(dir + "/cache") + " > " + quote(file));
  EXPECT_EQ(r.status, 1) << r.err;
  struct stat st;
  ASSERT_EQ(lstat(file.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  std::string text = test::read_file(file);
  EXPECT_EQ(text.substr(0, text.find('\n')), "error: loading libmusa_kernels.so would fail: 3 causes") << text;
}

// A FIFO is a reader's pipe: written in place, so the reader gets the report and the FIFO stays.
TEST(Outputs, a_fifo_named_as_the_report_is_written_in_place) {
  std::string dir = test::scratch_dir("fifo");
  std::string fifo = dir + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got = dir + "/got.txt";
  auto r = run("cat " + quote(fifo) + " > " + quote(got) + " & " + kLinkcheck + " -q -o " + quote(fifo) +
               example_args(dir + "/cache") + "; s=$?; wait; exit $s");
  EXPECT_EQ(r.status, 1) << r.err;
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  std::string text = test::read_file(got);
  EXPECT_EQ(text.substr(0, text.find('\n')), "error: loading libmusa_kernels.so would fail: 3 causes") << text;
}

// A report named through a symbolic link replaces the file the link names; the link stays.
TEST(Outputs, a_symlinked_output_is_written_through_and_the_link_kept) {
  std::string dir = test::scratch_dir("symlinked");
  fs::create_directories(dir + "/reports");
  test::write_file(dir + "/reports/latest.txt", "old\n");
  fs::create_symlink("reports/latest.txt", dir + "/report.txt");
  auto r = run(kLinkcheck + " -q -o " + quote(dir + "/report.txt") + example_args(dir + "/cache"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir + "/report.txt"));
  std::string text = test::read_file(dir + "/reports/latest.txt");
  EXPECT_EQ(text.substr(0, text.find('\n')), "error: loading libmusa_kernels.so would fail: 3 causes") << text;
}

// A library needing libfoo.so.1 from lib/ (DT_RUNPATH $ORIGIN/lib) and referencing one symbol nothing
// defines (a finding for a baseline to hold): one compiler call each.
struct UserAndDependency {
  std::string user, dependency;
};
UserAndDependency user_and_dependency(const std::string& dir) {
  fs::create_directories(dir + "/lib");
  test::write_file(dir + "/foo.c", "int foo(void) { return 1; }\n");
  test::write_file(dir + "/user.c", "int foo(void);\nint gone(void);\nint use(void) { return foo() + gone(); }\n");
  auto cc = run("cd " + quote(dir) +
                " && gcc -shared -fPIC -Wl,-soname,libfoo.so.1 -o lib/libfoo.so.1 foo.c && gcc "
                "-shared -fPIC -o libuser.so user.c lib/libfoo.so.1 -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'");
  EXPECT_EQ(cc.status, 0) << cc.err;
  return {dir + "/libuser.so", dir + "/lib/libfoo.so.1"};
}

// What a refused run must show: exit status 2, the one line on standard error, nothing on standard
// output, and the file it would have replaced byte for byte as it was.
void expect_refused(const test::CommandResult& r, const std::string& line, const std::string& file,
                    const std::string& before) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err, line + "\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(test::read_file(file), before) << file << " was written";
}

TEST(Outputs, an_output_that_is_an_input_is_refused_and_the_input_kept) {
  std::string dir = test::scratch_dir("output-is-input");
  auto lib = user_and_dependency(dir);
  const std::string before = test::read_file(lib.user);
  for (const std::string& option : {std::string("-o"), std::string("--json-report")}) {
    auto r = run("cd " + quote(dir) + " && " + kLinkcheck + " --no-cache " + option + " libuser.so ./libuser.so");
    expect_refused(r,
                   "musa-linkcheck: error: " + option +
                       " libuser.so: it is the input ./libuser.so; refusing to "
                       "overwrite a file the run reads",
                   lib.user, before);
  }
  auto stub = run("cd " + quote(dir) + " && " + kStubgen + " --no-cache --dry-run --out-cpp libuser.so libuser.so");
  expect_refused(stub,
                 "musa-stubgen: error: --out-cpp libuser.so: it is the input libuser.so; refusing to overwrite a "
                 "file the run reads",
                 lib.user, before);
}

TEST(Outputs, an_output_in_a_missing_directory_is_refused_with_the_reason) {
  std::string dir = test::scratch_dir("output-missing-dir");
  auto lib = user_and_dependency(dir);
  auto r = run("cd " + quote(dir) + " && " + kLinkcheck + " --no-cache -o nodir/report.txt " + quote(lib.dependency));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "musa-linkcheck: error: " + dir + "/nodir/report.txt: cannot write: its directory " + dir +
                       "/nodir does not exist\n");
  EXPECT_FALSE(fs::exists(dir + "/nodir"));
}

// `-o bl.txt --baseline bl.txt` replaced the committed baseline with the text report.
TEST(Outputs, the_report_never_replaces_the_baseline_it_reads_but_update_baseline_may) {
  std::string dir = test::scratch_dir("output-baseline");
  user_and_dependency(dir);
  std::string in = "cd " + quote(dir) + " && " + kLinkcheck + " --no-cache ";
  ASSERT_EQ(run(in + "--update-baseline bl.txt libuser.so").status, 0);
  const std::string baseline = test::read_file(dir + "/bl.txt");
  ASSERT_NE(baseline.find("gone"), std::string::npos) << baseline;
  for (const std::string& option : {std::string("-o"), std::string("--json-report")})
    expect_refused(run(in + option + " bl.txt --baseline bl.txt libuser.so"),
                   "musa-linkcheck: error: " + option +
                       " bl.txt: it is the --baseline bl.txt; refusing to overwrite a "
                       "file the run reads",
                   dir + "/bl.txt", baseline);
  // Rewriting the baseline given is what --update-baseline is for.
  auto update = run(in + "--update-baseline bl.txt --baseline bl.txt libuser.so");
  EXPECT_EQ(update.status, 0) << update.err;
  EXPECT_EQ(test::read_file(dir + "/bl.txt"), baseline);
}

// `-o libb.so DIR` overwrote an ELF file inside the directory being checked.
TEST(Outputs, an_elf_file_checked_under_an_input_directory_is_never_an_output) {
  std::string dir = test::scratch_dir("output-under-dir");
  auto lib = user_and_dependency(dir + "/build");
  fs::create_directories(dir + "/d/sub");
  fs::copy_file(lib.dependency, dir + "/d/liba.so");
  fs::copy_file(lib.dependency, dir + "/d/sub/libb.so");
  const std::string before = test::read_file(dir + "/d/sub/libb.so");
  auto r = run("cd " + quote(dir) + " && " + kLinkcheck + " --no-cache -o d/sub/libb.so d");
  expect_refused(r,
                 "musa-linkcheck: error: -o d/sub/libb.so: it is " + dir +
                     "/d/sub/libb.so, an ELF file checked under "
                     "the input directory " +
                     dir + "/d; refusing to overwrite a file the run reads",
                 dir + "/d/sub/libb.so", before);
}

// `-o lib/libfoo.so.1 libuser.so` overwrote the library's own dependency; its load then failed with
// "invalid ELF header".
TEST(Outputs, a_dependency_the_load_brings_in_is_never_an_output) {
  std::string dir = test::scratch_dir("output-dependency");
  auto lib = user_and_dependency(dir);
  const std::string before = test::read_file(lib.dependency);
  auto r = run("cd " + quote(dir) + " && " + kLinkcheck + " --no-cache -o lib/libfoo.so.1 libuser.so");
  expect_refused(r,
                 "musa-linkcheck: error: -o lib/libfoo.so.1: it is " + lib.dependency + ", which loading " + lib.user +
                     " brings in; refusing to overwrite a file the run reads",
                 lib.dependency, before);
  // The real loader still loads it: the dependency is intact.
  auto real = test::real_load(lib.dependency);
  EXPECT_TRUE(real.ok) << real.error;
}

// `-o r.json --json-report r.json` kept one of the two reports without a word.
TEST(Outputs, two_outputs_naming_one_file_are_refused_before_either_is_written) {
  std::string dir = test::scratch_dir("output-twice");
  auto lib = user_and_dependency(dir);
  fs::create_symlink("r.json", dir + "/link.json");  // the same file by another name, once it exists
  auto r = run("cd " + quote(dir) + " && " + kLinkcheck + " --no-cache -o r.json --json-report r.json libuser.so");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "musa-linkcheck: error: --json-report r.json: it is also -o r.json; one file cannot hold two outputs\n");
  EXPECT_FALSE(fs::exists(dir + "/r.json"));
  test::write_file(dir + "/r.json", "kept\n");
  expect_refused(run("cd " + quote(dir) + " && " + kLinkcheck +
                     " --no-cache -o link.json --update-baseline r.json "
                     "libuser.so"),
                 "musa-linkcheck: error: --update-baseline r.json: it is also -o link.json; one file cannot hold two "
                 "outputs",
                 dir + "/r.json", "kept\n");
  // musa-stubgen's --out-cpp X --out-header X kept only the header, yet said "3 files changed".
  auto s = run("cd " + quote(dir) + " && " + kStubgen + " --no-cache --out-cpp X --out-header X libuser.so");
  EXPECT_EQ(s.status, 2);
  EXPECT_EQ(s.err, "musa-stubgen: error: --out-header X: it is also --out-cpp X; one file cannot hold two outputs\n");
  EXPECT_FALSE(fs::exists(dir + "/X"));
}

// `musa-stubgen --out-cpp SDK/lib/libmusa.so.4.0.0` appended C++ text to the SDK's ELF file; an
// --out-cpp naming the CMake file the build is read from, or an SDK header, is refused the same way.
TEST(Outputs, musa_stubgen_never_writes_its_stubs_over_the_sdk_or_the_build_it_reads) {
  std::string dir = test::scratch_dir("output-sdk");
  fs::copy(kExample + "/sdk", dir + "/sdk", fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::copy(kExampleSrc + "/csrc", dir + "/csrc", fs::copy_options::recursive);
  std::string args = " --no-runtime --porting-dir " + quote(kExampleSrc + "/generated_cuda_compatible") +
                     " --cmake-lists csrc/CMakeLists.txt --mapping " + quote(kExampleSrc + "/mapping") +
                     " --sdk-home sdk --with " + quote(kExample + "/libc10.so") + " --cache-dir " +
                     quote(dir + "/cache") + " " + quote(kExample + "/libmusa_kernels.so");
  std::string in = "cd " + quote(dir) + " && " + kStubgen;
  std::string so = dir + "/sdk/lib/libmusart.so.4.0.0";
  ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(so)));
  const std::string elf = test::read_file(so);
  expect_refused(run(in + " --out-cpp sdk/lib/libmusart.so.4.0.0" + args),
                 "musa-stubgen: error: --out-cpp sdk/lib/libmusart.so.4.0.0: it is the SDK's library " + so +
                     "; refusing to overwrite a file the run reads",
                 so, elf);
  std::string header = dir + "/sdk/include/musa_runtime_api.h";
  const std::string declared = test::read_file(header);
  expect_refused(run(in + " --out-header sdk/include/musa_runtime_api.h" + args),
                 "musa-stubgen: error: --out-header sdk/include/musa_runtime_api.h: it is the SDK's header " + header +
                     "; refusing to overwrite a file the run reads",
                 header, declared);
  std::string cmake = dir + "/csrc/CMakeLists.txt";
  const std::string lists = test::read_file(cmake);
  expect_refused(run(in + " --out-cpp csrc/CMakeLists.txt" + args),
                 "musa-stubgen: error: --out-cpp csrc/CMakeLists.txt: it is the --cmake-lists csrc/CMakeLists.txt; "
                 "refusing to overwrite a file the run reads",
                 cmake, lists);
  // Its own stub file, read back as a source of the tree it lies in, is merged into: not a clobber.
  auto merged = run(in + " --out-cpp csrc/aten/ops/musa/stubs.cpp --out-header csrc/stubs.h" + args);
  EXPECT_EQ(merged.status, 0) << merged.err;
  ASSERT_TRUE(fs::exists(dir + "/csrc/aten/ops/musa/stubs.cpp"));
  auto again = run(in + " --source-root csrc --out-cpp csrc/aten/ops/musa/stubs.cpp --out-header csrc/stubs.h" + args);
  EXPECT_NE(again.status, 2) << again.err;
  EXPECT_EQ(again.err.find("refusing"), std::string::npos) << again.err;
}

}  // namespace
}  // namespace mlc
