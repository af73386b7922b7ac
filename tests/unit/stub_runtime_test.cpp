// The stub runtime from C, under threads: each stub traced once per process, warned about once,
// "abort" aborting with the stub's name, "throw" (the default) handing the raise to the caller.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "test_support.h"

namespace mlc {
namespace {

using test::quote;
using test::run;

const char* kProgram = R"PROG(/* 8 threads x 1000 calls into three stubs. */
#include <pthread.h>
#include <stdio.h>
#include "musa_stubs.h"

static const char* names[3][2] = {{"alpha(int)", "_Z5alphai"}, {"beta", "beta"}, {"gamma()", "_Z5gammav"}};
static int results[8];

static void* worker(void* arg) {
  int id = (int)(long)arg, sum = 0;
  for (int i = 0; i < 1000; ++i) sum += musa_stub_enter(names[i % 3][0], names[i % 3][1]);
  results[id] = sum;
  return NULL;
}

int main(void) {
  pthread_t t[8];
  for (long i = 0; i < 8; ++i) pthread_create(&t[i], NULL, worker, (void*)i);
  int total = 0;
  for (int i = 0; i < 8; ++i) {
    pthread_join(t[i], NULL);
    total += results[i];
  }
  printf("%d\n", total);
  return 0;
}
)PROG";

class StubRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir("runtime");
    test::write_file(dir_ + "/prog.c", kProgram);
    auto cc = run("cc -std=c11 -Wall -Wextra -Werror -pthread -I" + quote(std::string(MLC_SOURCE_DIR) + "/stubs") +
                  " -o " + quote(dir_ + "/prog") + " " + quote(dir_ + "/prog.c") + " " + quote(MLC_STUBS_LIB));
    ASSERT_EQ(cc.status, 0) << cc.err;
  }
  std::string dir_;
};

std::multiset<std::string> lines(const std::string& text) {
  std::multiset<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.insert(l);
  return out;
}

TEST_F(StubRuntime, default_policy_lets_the_caller_throw_and_traces_each_stub_once_per_process) {
  std::string trace = dir_ + "/trace.txt";
  auto r = run("MUSA_STUBS_TRACE=" + quote(trace) + " " + quote(dir_ + "/prog"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "0\n");  // MUSA_STUB_THROW everywhere
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(lines(test::read_file(trace)),
            (std::multiset<std::string>{"_Z5alphai\talpha(int)", "beta\tbeta", "_Z5gammav\tgamma()"}));
  // A second process appends its own hits.
  run("MUSA_STUBS_TRACE=" + quote(trace) + " " + quote(dir_ + "/prog"));
  EXPECT_EQ(lines(test::read_file(trace)).size(), 6u);
}

TEST_F(StubRuntime, warn_policy_warns_once_per_stub_and_carries_on) {
  auto r = run("MUSA_STUBS=warn " + quote(dir_ + "/prog"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "8000\n");  // MUSA_STUB_WARN on every call
  EXPECT_EQ(lines(r.err), (std::multiset<std::string>{"musa-stubs: warning: alpha(int) is not supported now!",
                                                      "musa-stubs: warning: beta is not supported now!",
                                                      "musa-stubs: warning: gamma() is not supported now!"}));
}

TEST_F(StubRuntime, abort_policy_aborts_naming_the_stub) {
  auto r = run("MUSA_STUBS=abort " + quote(dir_ + "/prog"));
  EXPECT_EQ(r.status, 128 + 6);
  EXPECT_NE(r.err.find("musa-stubs: aborting: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" is not supported now!\n"), std::string::npos);
}

}  // namespace
}  // namespace mlc
