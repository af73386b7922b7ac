// The run's memo of stat(2) answers (loader::ObjectCache::stat_path): each answer is the kernel's, and a
// directory listed after two misses answers for the names it holds and lacks, as stat would have then.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "loader/loader.h"
#include "test_support.h"

namespace mlc {
namespace {

// stat(2) itself: 0, or its errno.
int real_stat(const std::string& path, struct stat& st) { return ::stat(path.c_str(), &st) == 0 ? 0 : errno; }

TEST(ObjectCache, stat_path_answers_as_stat_and_a_listed_directory_answers_for_its_names) {
  const std::string dir = test::scratch_dir("object-cache-stat");
  std::filesystem::create_directories(dir + "/lib");
  test::write_file(dir + "/lib/libpresent.so", "x");
  std::filesystem::create_symlink("libpresent.so", dir + "/lib/liblink.so");
  std::filesystem::create_symlink("libgone.so", dir + "/lib/libdangling.so");
  loader::ObjectCache cache(false);
  const auto same_as_stat = [&](const std::string& path) {
    struct stat want {
    }, got{};
    const int want_err = real_stat(path, want);
    EXPECT_EQ(cache.stat_path(path, got), want_err) << path;
    if (want_err == 0) {
      EXPECT_EQ(got.st_ino, want.st_ino) << path;
      EXPECT_EQ(got.st_dev, want.st_dev) << path;
    }
    return want_err;
  };
  // Two misses: the directory is listed from then on.
  EXPECT_EQ(same_as_stat(dir + "/lib/libmiss1.so"), ENOENT);
  EXPECT_EQ(same_as_stat(dir + "/lib/libmiss2.so"), ENOENT);
  // What it holds is stat'ed (a symlink followed, a dangling one missing), what it lacks is missing, and so
  // is anything below a name it lacks (a hwcaps subdirectory the directory does not have).
  EXPECT_EQ(same_as_stat(dir + "/lib/libpresent.so"), 0);
  EXPECT_EQ(same_as_stat(dir + "/lib/liblink.so"), 0);
  EXPECT_EQ(same_as_stat(dir + "/lib/libdangling.so"), ENOENT);
  EXPECT_EQ(same_as_stat(dir + "/lib/libmiss3.so"), ENOENT);
  EXPECT_EQ(same_as_stat(dir + "/lib/glibc-hwcaps/x86-64-v3/libpresent.so"), ENOENT);
  EXPECT_EQ(same_as_stat(dir + "/lib/libpresent.so/inside"), ENOTDIR);
  // The listing is the run's view of the directory, as each answer is: a file created after it is not seen
  // (the proof that the listing, not a stat, answered), nor one created in a subdirectory it lacked.
  test::write_file(dir + "/lib/liblate.so", "x");
  struct stat st {};
  EXPECT_EQ(cache.stat_path(dir + "/lib/liblate.so", st), ENOENT);
  std::filesystem::create_directories(dir + "/lib/glibc-hwcaps/x86-64-v2");
  EXPECT_EQ(cache.stat_path(dir + "/lib/glibc-hwcaps/x86-64-v2", st), ENOENT);
  // Another run's memo sees both.
  loader::ObjectCache next(false);
  EXPECT_EQ(next.stat_path(dir + "/lib/liblate.so", st), 0);
  EXPECT_EQ(next.stat_path(dir + "/lib/glibc-hwcaps/x86-64-v2", st), 0);
  // A directory missing once only is not listed: a name created there after is seen.
  EXPECT_EQ(same_as_stat(dir + "/other/libmiss.so"), ENOENT);
  std::filesystem::create_directories(dir + "/other");
  test::write_file(dir + "/other/liblate.so", "x");
  EXPECT_EQ(same_as_stat(dir + "/other/liblate.so"), 0);
  // Relative paths are stat'ed each (the working directory is theirs, not a listing's).
  EXPECT_EQ(same_as_stat("no-such-relative/libx.so"), ENOENT);
  EXPECT_EQ(same_as_stat("no-such-relative/liby.so"), ENOENT);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mlc
