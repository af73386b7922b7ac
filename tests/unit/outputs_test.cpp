// The files a run writes: what each output option may name, and what it must never replace. A device
// node, a FIFO or a descriptor path is written in place; a file the run reads is never an output.
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
         quote(kExampleSrc + "/csrc/CMakeLists.txt") + " --mapping " + quote(kExampleSrc + "/mapping") + " --sdk-home " +
         quote(kExample + "/sdk") + " --with " + quote(kExample + "/libc10.so") + " --cache-dir " + quote(cache) + " " +
         quote(kExample + "/libmusa_kernels.so");
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
  auto sg = run(kStubgen + " --no-runtime --out-cpp " + quote(nodes[3]) + " --out-header " + quote(nodes[4]) + " --cmake-patch " +
                quote(nodes[5]) + example_args(cache));
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

}  // namespace
}  // namespace mlc
