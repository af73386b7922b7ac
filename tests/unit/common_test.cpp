// The shared helpers of src/common, each against an outside fact: FNV-1a's published test vectors, the
// cache format's own text written by hand, sh(1) as the program run.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <tbb/task_arena.h>

#include "common/cache_file.h"
#include "common/hash.h"
#include "common/kept_facts.h"
#include "common/paths.h"
#include "common/short_run.h"
#include "common/subprocess.h"
#include "common/text.h"
#include "common/walk.h"
#include "test_support.h"

namespace mlc {
namespace {

using test::write_file;

TEST(CommonText, trim_drops_white_space_at_both_ends_and_keeps_it_inside) {
  EXPECT_EQ(trim(" \t a b\r\n"), "a b");
  EXPECT_EQ(trim(" \t\r\n"), "");
  EXPECT_EQ(trim("x"), "x");
}

TEST(CommonText, count_char_counts_as_std_count_does) {
  const std::string text = std::string("a\tb\n\n\t\0\n", 8) + std::string(70000, 'x') + "\n";
  for (char c : {'\n', '\t', 'x', '\0', 'q'})
    EXPECT_EQ(count_char(text, c), static_cast<size_t>(std::count(text.begin(), text.end(), c))) << int(c);
  EXPECT_EQ(count_char("", '\n'), 0u);
  EXPECT_EQ(count_char("\n", '\n'), 1u);
}

TEST(CommonText, join_list_lists_as_a_sentence_does) {
  EXPECT_EQ(join_list({}), "");
  EXPECT_EQ(join_list({"a"}), "a");
  EXPECT_EQ(join_list({"a", "b"}), "a or b");
  EXPECT_EQ(join_list({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(join_list({"a", "b", "c"}, " and "), "a, b and c");
}

// KeptFacts: an answer comes back for its path while the identity is the one it was kept with; one
// kept for a subject changed in the last two seconds is not kept; the file is read only when whole (a row
// cut off or an answer of the wrong shape makes it answer nothing); a tab or newline is never written.
TEST(KeptFacts, an_answer_stands_while_its_subjects_identity_does) {
  const std::string dir = test::scratch_dir("kept-facts"), file = dir + "/facts.tsv";
  const int64_t old = static_cast<int64_t>(time(nullptr)) - 60;
  {
    KeptFacts facts(file, "mlc-test-facts");
    EXPECT_FALSE(facts.find("/a", "1:2:3:4.0:4.0").has_value());
    facts.keep("/a", "1:2:3:4.0:4.0", old, "yes");
    facts.keep("/b", "1:5:3:4.0:4.0", static_cast<int64_t>(time(nullptr)), "fresh");  // changed just now
    facts.keep("/c\tx", "1:6:3:4.0:4.0", old, "tab in the path");
    facts.keep("/d", "1:7:3:4.0:4.0", old, "new\nline");
    facts.save();
  }
  const std::string text = test::read_file(file);
  EXPECT_EQ(text, "mlc-test-facts 1\n1:2:3:4.0:4.0\tyes\t/a\nend\t1\n");
  {
    KeptFacts facts(file, "mlc-test-facts");
    EXPECT_EQ(facts.find("/a", "1:2:3:4.0:4.0").value_or(""), "yes");
    EXPECT_FALSE(facts.find("/a", "1:2:3:9.0:9.0").has_value()) << "another identity: nothing kept answers";
    EXPECT_FALSE(facts.find("/b", "1:5:3:4.0:4.0").has_value());
    facts.keep("/a", "1:2:3:9.0:9.0", old, "no");  // the file changed: its new answer replaces the old
    facts.save();
  }
  {
    KeptFacts facts(file, "mlc-test-facts");
    EXPECT_FALSE(facts.find("/a", "1:2:3:4.0:4.0").has_value());
    EXPECT_EQ(facts.find("/a", "1:2:3:9.0:9.0").value_or(""), "no");
    KeptFacts other(file, "mlc-other-question");
    EXPECT_FALSE(other.find("/a", "1:2:3:9.0:9.0").has_value()) << "another question's file answers nothing";
  }
  test::write_file(file, "mlc-test-facts 1\n1:2:3:9.0:9.0\tno\t/a\n");  // cut short: no end line
  EXPECT_FALSE(KeptFacts(file, "mlc-test-facts").find("/a", "1:2:3:9.0:9.0").has_value());
  KeptFacts none("", "mlc-test-facts");
  none.keep("/a", "1:2:3:4.0:4.0", old, "yes");
  none.save();
  EXPECT_FALSE(none.find("/a", "1:2:3:4.0:4.0").has_value());
  std::filesystem::remove_all(dir);
}

// The rows are looked up where the file holds them, by halves: a file of 64 KB and more (read through a mapping)
// answers each of its rows; what a run keeps is merged with them by path on save, each path once, sorted.
TEST(KeptFacts, a_large_file_answers_every_row_and_a_save_merges_the_kept_rows_in_order) {
  const std::string dir = test::scratch_dir("kept-facts-large"), file = dir + "/facts.tsv";
  const int64_t old = static_cast<int64_t>(time(nullptr)) - 60;
  auto path_of = [](int i) { return fmt::format("/venv/lib/python3.12/site-packages/pkg/m{:05}.so", i); };
  std::string text = "mlc-test-facts 1\n";
  for (int i = 0; i < 2000; i += 2) text += fmt::format("1:{}:3:4.0:4.0\tanswer {}\t{}\n", i, i, path_of(i));
  text += "end\t1000\n";
  ASSERT_GE(text.size(), size_t{64} << 10) << "the file must be large enough to be mapped";
  test::write_file(file, text);
  {
    KeptFacts facts(file, "mlc-test-facts");
    EXPECT_EQ(facts.find(path_of(0), "1:0:3:4.0:4.0").value_or(""), "answer 0");
    EXPECT_EQ(facts.find(path_of(1998), "1:1998:3:4.0:4.0").value_or(""), "answer 1998");
    EXPECT_EQ(facts.find(path_of(1000), "1:1000:3:4.0:4.0").value_or(""), "answer 1000");
    EXPECT_FALSE(facts.find(path_of(1001), "1:1001:3:4.0:4.0").has_value()) << "a path between two rows";
    EXPECT_FALSE(facts.find(path_of(1000), "1:1000:3:9.0:9.0").has_value()) << "a row of another identity";
    facts.keep(path_of(1001), "1:1001:3:4.0:4.0", old, "new");
    facts.keep(path_of(1000), "1:1000:3:9.0:9.0", old, "changed");
    facts.keep(path_of(2000), "1:2000:3:4.0:4.0", old, "last");
    EXPECT_EQ(facts.find(path_of(1000), "1:1000:3:9.0:9.0").value_or(""), "changed") << "kept in this run";
    facts.save();
  }
  std::string want = "mlc-test-facts 1\n";
  for (int i = 0; i <= 2000; ++i) {
    if (i == 1000) want += fmt::format("1:1000:3:9.0:9.0\tchanged\t{}\n", path_of(i));
    else if (i == 1001) want += fmt::format("1:1001:3:4.0:4.0\tnew\t{}\n", path_of(i));
    else if (i == 2000) want += fmt::format("1:2000:3:4.0:4.0\tlast\t{}\n", path_of(i));
    else if (i % 2 == 0) want += fmt::format("1:{}:3:4.0:4.0\tanswer {}\t{}\n", i, i, path_of(i));
  }
  want += "end\t1002\n";
  EXPECT_EQ(test::read_file(file), want);
  // Written by hand, out of order and a path twice: a look-up by halves may miss a row (a recomputation, never
  // another row's answer); the save puts the rows in order, the last of a path standing, and they all answer.
  test::write_file(file, "mlc-test-facts 1\n1:2\tfirst\t/b\n1:1\tone\t/a\n1:2b\tsecond\t/b\nend\t3\n");
  {
    KeptFacts facts(file, "mlc-test-facts");
    EXPECT_EQ(facts.find("/a", "1:1").value_or("one"), "one");
    EXPECT_EQ(facts.find("/b", "1:2b").value_or("second"), "second");
    facts.keep("/c", "1:3", old, "three");
    facts.save();
  }
  EXPECT_EQ(test::read_file(file), "mlc-test-facts 1\n1:1\tone\t/a\n1:2b\tsecond\t/b\n1:3\tthree\t/c\nend\t3\n");
  {
    KeptFacts facts(file, "mlc-test-facts");
    EXPECT_EQ(facts.find("/a", "1:1").value_or(""), "one");
    EXPECT_EQ(facts.find("/b", "1:2b").value_or(""), "second");
    EXPECT_EQ(facts.find("/c", "1:3").value_or(""), "three");
    EXPECT_FALSE(facts.find("/b", "1:2").has_value()) << "the earlier row of /b is gone";
  }
  // Counts that do not hold (a row's tab lost, a row added without the end line's count) answer nothing.
  test::write_file(file, "mlc-test-facts 1\n1:1\tone/a\n1:2b\tsecond\t/b\nend\t2\n");
  EXPECT_FALSE(KeptFacts(file, "mlc-test-facts").find("/b", "1:2b").has_value());
  test::write_file(file, "mlc-test-facts 1\n1:1\tone\t/a\n1:2b\tsecond\t/b\nend\t1\n");
  EXPECT_FALSE(KeptFacts(file, "mlc-test-facts").find("/a", "1:1").has_value());
  std::filesystem::remove_all(dir);
}

TEST(CommonPaths, dir_of_is_what_precedes_the_last_slash) {
  EXPECT_EQ(dir_of("/usr/lib/libc.so.6"), "/usr/lib");
  EXPECT_EQ(dir_of("/libc.so.6"), "");
  EXPECT_EQ(dir_of("a/b/"), "a/b");
}

// RealPaths against realpath(3) itself: links in the same directory, chains of them, links with a '/',
// a directory reached through a link, dangling links, a loop, missing files, directories.
TEST(CommonPaths, real_paths_answers_as_realpath_does) {
  namespace fs = std::filesystem;
  const std::string dir = test::scratch_dir("real-paths");
  fs::create_directories(dir + "/real/sub");
  write_file(dir + "/real/libx.so.1.2", "");
  fs::create_symlink("libx.so.1.2", dir + "/real/libx.so.1");
  fs::create_symlink("libx.so.1", dir + "/real/libx.so");
  fs::create_symlink(dir + "/real/libx.so.1.2", dir + "/real/absolute");
  fs::create_symlink("../real/libx.so.1", dir + "/real/sub/up");
  fs::create_symlink("sub", dir + "/real/subdir");
  fs::create_symlink(".", dir + "/real/here");
  fs::create_symlink("nothing", dir + "/real/dangling");
  fs::create_symlink("loop2", dir + "/real/loop1");
  fs::create_symlink("loop1", dir + "/real/loop2");
  fs::create_symlink("real", dir + "/alias");
  RealPaths reals;
  for (const char* rel : {"real/libx.so.1.2",
                          "real/libx.so.1",
                          "real/libx.so",
                          "real/absolute",
                          "real/sub/up",
                          "real/subdir",
                          "real/here",
                          "real/dangling",
                          "real/loop1",
                          "real/missing",
                          "real/sub",
                          "alias/libx.so",
                          "alias/sub/up",
                          "alias/subdir/up",
                          "alias/here/libx.so",
                          "alias",
                          "alias/missing/libx.so",
                          "real/libx.so.1.2/x",
                          "real/./libx.so",
                          "alias//libx.so"}) {
    const std::string path = dir + "/" + rel;
    EXPECT_EQ(reals.of(path), real_path(path)) << path;
    EXPECT_EQ(reals.of(path), real_path(path)) << path << " (asked again)";
  }
  EXPECT_EQ(reals.of(dir + "/alias/libx.so"), dir + "/real/libx.so.1.2");
  EXPECT_EQ(reals.of("/"), "/");
  EXPECT_EQ(reals.of("relative/path"), real_path("relative/path"));
}

// And on the system's own libraries: every entry of the multiarch directory, as given and across the /usr
// merge (/lib -> usr/lib on Debian since bookworm).
TEST(CommonPaths, real_paths_answers_as_realpath_does_for_the_systems_libraries) {
  const std::string lib = "/usr/lib/x86_64-linux-gnu";
  const auto names = sorted_entries(lib);
  if (names.empty()) MLC_SKIP() << lib << " lists nothing here";
  RealPaths reals;
  size_t links = 0;
  for (const auto& name : names) {
    for (const std::string& path : {lib + "/" + name, "/lib/x86_64-linux-gnu/" + name}) {
      const std::string real = real_path(path);
      EXPECT_EQ(reals.of(path), real) << path;
      links += real != path;
    }
  }
  EXPECT_GT(links, names.size() / 4) << "few links: the check followed almost none";
}

TEST(CommonWalk, sorted_entries_lists_a_directory_sorted_without_dot_and_dot_dot) {
  const std::string dir = test::scratch_dir("common-entries");
  for (const char* n : {"b", "a", ".hidden", "c"}) write_file(dir + "/" + n, "");
  EXPECT_EQ(sorted_entries(dir), (std::vector<std::string>{".hidden", "a", "b", "c"}));
  EXPECT_TRUE(sorted_entries(dir + "/absent").empty());
  std::filesystem::remove_all(dir);
}

// The FNV-1a 64-bit test vectors of the algorithm's reference (Fowler, Noll, Vo).
TEST(CacheFile, fnv1a_hex_gives_the_reference_test_vectors) {
  EXPECT_EQ(fnv1a_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a_hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(fnv1a_hex("foobar"), "85944171f73967e8");
}

constexpr CacheFormat kFormat{.magic = "test-cache 1\n", .fields = 2};

std::vector<std::string> rows_of(const std::string& path, const std::string& key, bool* answered) {
  std::vector<std::string> rows;
  *answered = read_cache_file(path, kFormat, key, [&](std::span<const std::string_view> f) {
    rows.push_back(std::string(f[0]) + "=" + std::string(f[1]));
    return f[0] != "refused";
  });
  return rows;
}

TEST(CacheFile, writes_the_format_and_reads_back_only_a_whole_file_for_its_key) {
  const std::string dir = test::scratch_dir("common-cache");
  const std::string path = dir + "/sub/c.tsv";
  CacheWriter out(kFormat, "key\tK\n");
  EXPECT_TRUE(out.add(std::array<std::string_view, 2>{"a", "1"}));
  EXPECT_FALSE(out.add(std::array<std::string_view, 2>{"tab\there", "2"}));  // no row can carry a tab
  EXPECT_FALSE(out.add(std::array<std::string_view, 2>{"b", "new\nline"}));
  EXPECT_TRUE(out.add(std::array<std::string_view, 2>{"b", ""}));
  out.write(path);  // creates sub/
  EXPECT_EQ(test::read_file(path), "test-cache 1\nkey\tK\na\t1\nb\t\nend\t2\n");
  bool answered = false;
  EXPECT_EQ(rows_of(path, "key\tK\n", &answered), (std::vector<std::string>{"a=1", "b="}));
  EXPECT_TRUE(answered);
  // Each of these is not an answer: another key, a row missing, a row added, cut short, a field more,
  // another format, a row the reader refuses.
  rows_of(path, "key\tOther\n", &answered);
  EXPECT_FALSE(answered);
  for (const char* text :
       {"test-cache 1\nkey\tK\na\t1\nend\t2\n", "test-cache 1\nkey\tK\na\t1\nb\t\nc\t3\nend\t2\n",
        "test-cache 1\nkey\tK\na\t1\nb\t\n", "test-cache 1\nkey\tK\na\t1\nb\t\nend\t2",
        "test-cache 1\nkey\tK\na\t1\t9\nb\t\nend\t2\n", "test-cache 2\nkey\tK\na\t1\nb\t\nend\t2\n",
        "test-cache 1\nkey\tK\nrefused\t1\nb\t\nend\t2\n", "test-cache 1\nkey\tK\na\t1\nb\t\nend\t2\nmore\n"}) {
    write_file(path, text);
    rows_of(path, "key\tK\n", &answered);
    EXPECT_FALSE(answered) << text;
  }
  rows_of(dir + "/absent.tsv", "key\tK\n", &answered);
  EXPECT_FALSE(answered);
  // A format of rows with their own field counts (fields = 0): each row whole, the reader judging its count.
  constexpr CacheFormat kKinds{.magic = "test-kinds 1\n", .fields = 0};
  CacheWriter kinds(kKinds, "K\n");
  EXPECT_TRUE(kinds.add(std::array<std::string_view, 1>{"one"}));
  EXPECT_TRUE(kinds.add(std::array<std::string_view, 3>{"three", "", "c"}));
  kinds.write(path);
  std::vector<size_t> counts;
  EXPECT_TRUE(read_cache_file(path, kKinds, "K\n", [&](std::span<const std::string_view> f) {
    counts.push_back(f.size());
    return f.back() != "refused";
  }));
  EXPECT_EQ(counts, (std::vector<size_t>{1, 3}));
  write_file(path, "test-kinds 1\nK\none\nthree\t\trefused\nend\t2\n");
  EXPECT_FALSE(
      read_cache_file(path, kKinds, "K\n", [](std::span<const std::string_view> f) { return f.back() != "refused"; }));
  std::filesystem::remove_all(dir);
}

// From 64 KiB on, read_cache_file reads the file through a mapping: the same rows in order, and the same
// refusals of a file cut short or of a count that does not close it.
TEST(CacheFile, a_cache_read_through_a_mapping_answers_as_a_small_one) {
  const std::string dir = test::scratch_dir("common-cache-mapped");
  const std::string path = dir + "/c.tsv";
  CacheWriter out(kFormat, "key\tK\n");
  std::vector<std::string> want;
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "row" + std::to_string(i), value(i % 40, 'v');
    EXPECT_TRUE(out.add(std::array<std::string_view, 2>{name, value}));
    want.push_back(name + "=" + value);
  }
  out.write(path);
  const std::string text = test::read_file(path);
  ASSERT_GE(text.size(), size_t{64} << 10);
  bool answered = false;
  EXPECT_EQ(rows_of(path, "key\tK\n", &answered), want);
  EXPECT_TRUE(answered);
  rows_of(path, "key\tOther\n", &answered);
  EXPECT_FALSE(answered);
  write_file(path, text.substr(0, text.size() - 1));  // the last newline cut
  rows_of(path, "key\tK\n", &answered);
  EXPECT_FALSE(answered);
  const size_t second = text.find("row1\t");
  write_file(path, text.substr(0, second) + text.substr(text.find('\n', second) + 1));  // a row gone
  rows_of(path, "key\tK\n", &answered);
  EXPECT_FALSE(answered);
  std::filesystem::remove_all(dir);
}

// `then` runs once the whole file was read and accepted, while the rows' views still point into its text
// (read into memory, or mapped from 64 KiB on); a file refused is never handed to it, and its answer is the read's.
TEST(CacheFile, then_sees_every_row_view_before_the_text_goes) {
  const std::string dir = test::scratch_dir("common-cache-then");
  const std::string path = dir + "/c.tsv";
  for (const int rows : {3, 5000}) {
    CacheWriter out(kFormat, "key\tK\n");
    for (int i = 0; i < rows; ++i)
      EXPECT_TRUE(out.add(std::array<std::string_view, 2>{"row" + std::to_string(i), std::string(i % 40, 'v')}));
    out.write(path);
    std::vector<std::string_view> names;
    int calls = 0;
    const auto keep = [&](std::span<const std::string_view> f) {
      names.push_back(f[0]);
      return true;
    };
    const auto check = [&] {
      ++calls;
      EXPECT_EQ(names.size(), static_cast<size_t>(rows));
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] != "row" + std::to_string(i)) return false;
      return true;
    };
    EXPECT_TRUE(read_cache_file(path, kFormat, "key\tK\n", keep, check)) << rows;
    EXPECT_EQ(calls, 1);
    names.clear();
    EXPECT_FALSE(read_cache_file(path, kFormat, "key\tK\n", keep, [] { return false; })) << rows;
    names.clear();
    calls = 0;
    EXPECT_FALSE(read_cache_file(path, kFormat, "key\tOther\n", keep, check)) << rows;
    EXPECT_EQ(calls, 0);
  }
  std::filesystem::remove_all(dir);
}

std::chrono::steady_clock::time_point in_seconds(double s) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

// A file's identity, against stat(1)'s own numbers (%d device, %i inode, %s size; the times in
// nanoseconds through %.9Y and %.9Z), and has_identity's answer, made without strings, against it.
TEST(CommonPaths, identity_is_stat_s_numbers_and_has_identity_agrees) {
  const std::string dir = test::scratch_dir("common-identity");
  const std::string path = dir + "/f";
  write_file(path, "one");
  const auto out =
      run_program({.argv = {"/usr/bin/stat", "-c", "%d:%i:%s:%.9Y:%.9Z", path}, .deadline = in_seconds(10)});
  ASSERT_EQ(out.status, 0) << out.err;
  const std::string want = trim(out.out);
  // stat(1) pads the nanoseconds to nine digits; the identity writes the number as it is.
  const auto unpad = [](std::string t) {
    std::string r;
    for (size_t at = 0; at < t.size();) {
      size_t dot = t.find('.', at);
      if (dot == std::string::npos) return r + t.substr(at);
      size_t end = t.find(':', dot);
      if (end == std::string::npos) end = t.size();
      std::string ns = t.substr(dot + 1, end - dot - 1);
      ns.erase(0, std::min(ns.find_first_not_of('0'), ns.size() - 1));
      r += t.substr(at, dot - at) + "." + ns + (end < t.size() ? ":" : "");
      at = end + 1;
    }
    return r;
  };
  EXPECT_EQ(file_identity(path), unpad(want));
  const std::string identity = file_identity(path);
  EXPECT_TRUE(has_identity(path, identity));
  EXPECT_TRUE(has_identity(path + std::string(1, '\0') + "tail", identity));  // stat(2) reads up to the NUL
  EXPECT_FALSE(has_identity(path, identity + "0"));
  EXPECT_FALSE(has_identity(path, ""));
  EXPECT_TRUE(has_identity(dir + "/absent", ""));  // nothing there, as file_identity says ("")
  EXPECT_FALSE(has_identity(dir + "/absent", identity));
  EXPECT_TRUE(has_identity(std::string(PATH_MAX + 10, 'a'), ""));  // too long to name anything
  write_file(path, "changed");
  EXPECT_FALSE(has_identity(path, identity));
  EXPECT_TRUE(has_identity(path, file_identity(path)));
  std::filesystem::remove_all(dir);
}

TEST(Subprocess, run_program_gives_each_stream_its_exit_status_and_its_directory) {
  const std::string dir = test::scratch_dir("common-run");
  ProgramResult r =
      run_program({.argv = {"sh", "-c", "pwd; echo oops >&2; exit 3"}, .directory = dir, .deadline = in_seconds(60)});
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, std::filesystem::canonical(dir).string() + "\n");
  EXPECT_EQ(r.err, "oops\n");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 3);
  EXPECT_EQ(r.exec_errno, 0);
  // 2>&1: one stream, in the order written.
  r = run_program(
      {.argv = {"sh", "-c", "echo 1; echo 2 >&2; echo 3"}, .deadline = in_seconds(60), .merge_output = true});
  EXPECT_EQ(r.out, "1\n2\n3\n");
  EXPECT_EQ(r.err, "");
  // A program that is not there: exec's errno, exit status 127 as a shell gives; a directory that is
  // not there: 126.
  r = run_program({.argv = {dir + "/no-such-program"}, .deadline = in_seconds(60)});
  EXPECT_EQ(r.exec_errno, ENOENT);
  EXPECT_EQ(WEXITSTATUS(r.status), 127);
  r = run_program({.argv = {"true"}, .directory = dir + "/absent", .deadline = in_seconds(60)});
  EXPECT_EQ(WEXITSTATUS(r.status), 126);
  std::filesystem::remove_all(dir);
}

// At the deadline the whole group is killed: the background child holds the output pipe open, so a
// kill of the shell alone would leave the read waiting for it (30 s).
TEST(Subprocess, run_program_kills_the_program_and_its_children_at_the_deadline) {
  auto start = std::chrono::steady_clock::now();
  ProgramResult r = run_program({.argv = {"sh", "-c", "sleep 30 & sleep 30; wait"}, .deadline = in_seconds(0.3)});
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(WIFSIGNALED(r.status));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// The VmFlags line of the mapping that holds byte `offset` of `block`, from /proc/self/smaps ("hg":
// MADV_HUGEPAGE asked).
std::string vm_flags_of(const void* block, size_t offset = 0) {
  const auto at = reinterpret_cast<uintptr_t>(block) + offset;
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long from = 0, to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-') {
      inside = at >= from && at < to;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line + " ";
  }
  return "";
}

TEST(Heap, prepare_heap_asks_huge_pages_for_the_main_arena) {
  // The library's build decides (the tests themselves are compiled without the sanitizer).
  if (!heap_preparation_built())
    GTEST_SKIP() << "built with a sanitizer, whose allocator is not glibc's: prepare_heap leaves it";
  unsetenv("GLIBC_TUNABLES");
  void* before = std::malloc(4 << 20);
  ASSERT_EQ(vm_flags_of(before, 3 << 20).find(" hg "), std::string::npos) << vm_flags_of(before, 3 << 20);
  std::free(before);
  prepare_heap();
  // A block of the main thread, its last 2 MiB looked at: a huge page starts at a 2 MiB boundary, and the
  // arena's pages before its first one are not asked for.
  void* block = std::malloc(4 << 20);
  EXPECT_NE(vm_flags_of(block, 3 << 20).find(" hg "), std::string::npos) << vm_flags_of(block, 3 << 20);
  std::free(block);
}

// What is left to the exit stays alive to the end in glibc's build; under a sanitizer it goes at once.
TEST(Heap, leave_to_exit_keeps_what_it_is_given_unless_a_sanitizer_checks_leaks) {
  auto kept = std::make_shared<std::string>("a process's objects");
  std::weak_ptr<std::string> watch = kept;
  leave_to_exit(std::move(kept));
  EXPECT_EQ(watch.expired(), !heap_preparation_built());
  if (auto alive = watch.lock()) {
    EXPECT_EQ(*alive, "a process's objects");
  }
}

TEST(Heap, prepare_heap_leaves_the_heap_as_glibc_tunables_set_it) {
  if (!heap_preparation_built())
    GTEST_SKIP() << "built with a sanitizer, whose allocator is not glibc's: prepare_heap leaves it";
  // In a process of its own (the death test's "threadsafe" style runs this test afresh): an earlier test of
  // this one may have prepared its heap.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
        prepare_heap();
        void* block = std::malloc(4 << 20);
        const std::string flags = vm_flags_of(block, 3 << 20);
        std::fprintf(stderr, "%s\n", flags.c_str());
        // exit, not _Exit: this process's scratch area is removed at its exit (test_support.h).
        std::exit(flags.find("VmFlags:") != std::string::npos && flags.find(" hg ") == std::string::npos ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "VmFlags");
}

// The path of the first mapping of this process whose file name holds `part`; "" when none.
std::string mapped_file(const std::string& part) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash != std::string::npos && line.find(part, slash) != std::string::npos) return line.substr(slash);
  }
  return "";
}

// oneTBB's one-time start is made on start_parallel_runtime's thread, before the main thread uses oneTBB at all
// (libtbbmalloc, which that start loads from beside libtbb, is mapped), and the arena it keeps caps nothing:
// the main thread's concurrency is still every core this process may run on.
TEST(ShortRun, start_parallel_runtime_starts_onetbb_off_the_main_thread_and_caps_nothing) {
  if (!heap_preparation_built())
    GTEST_SKIP() << "built with a sanitizer: start_parallel_runtime starts nothing (its arena would be a leak)";
  const std::string tbb = mapped_file("/libtbb.so");
  ASSERT_FALSE(tbb.empty()) << "the test program links oneTBB";
  if (!std::filesystem::exists(std::filesystem::path(tbb).parent_path() / "libtbbmalloc.so.2"))
    MLC_SKIP() << "no libtbbmalloc.so.2 beside " << tbb << ": oneTBB's start loads nothing to see";
  // In a process of its own, whose main thread has not used oneTBB yet.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (!mapped_file("libtbbmalloc").empty()) std::exit(2);
        start_parallel_runtime();
        bool started = false;
        for (int i = 0; i < 2000 && !started; ++i)  // at most 20 s: a start takes about a millisecond
          if (!(started = !mapped_file("libtbbmalloc").empty())) usleep(10000);
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        sched_getaffinity(0, sizeof cpus, &cpus);
        const int concurrency = tbb::this_task_arena::max_concurrency();
        std::fprintf(stderr, "started %d, concurrency %d of %d\n", started, concurrency, CPU_COUNT(&cpus));
        std::exit(started && concurrency == CPU_COUNT(&cpus) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "started 1");
}

}  // namespace
}  // namespace mlc
