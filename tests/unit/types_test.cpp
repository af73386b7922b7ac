// The C++ type model behind source matching, checked against the compiler: every symbol g++ emits
// for a source the build does not compile must trace to that source as missing-source, whatever
// spelling the source uses (std typedefs, scoped typedefs, operators, ABI tags, ctor/dtor variants,
// namespace and export macros from generated headers, PyTorch's symbol-defining macros).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "demangle/demangle.h"
#include "report/said.h"
#include "source/scanner.h"
#include "source/source_index.h"
#include "test_support.h"
#include "trace/trace.h"
#include "verdict/verdict.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;

const char* kMacrosHeader = R"(#pragma once
#define DCV_NAMESPACE_BEGIN namespace dcv {
#define DCV_NAMESPACE_END }
#define DECLARE_DISPATCH(name) struct name##_type { int slot; }; extern name##_type name
#define DEFINE_DISPATCH(name) name##_type name
#define C10_DEFINE_REGISTRY(name, ...) int* name() { static int r; return &r; }
)";

// Written into the "build directory", as CMake's configure_file would.
const char* kGeneratedConfig = R"(#pragma once
#define MYLIB_NAMESPACE mylib
#define MYLIB_EXPORT __attribute__((visibility("default")))
)";

const char* kLib = R"(#include <cstddef>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>
#include "mylib/config.h"
#include "mylib/macros.h"

namespace detail { struct Node { int id; }; }

namespace MYLIB_NAMESPACE {
typedef std::vector<int> IntList;
using Holder = std::vector<std::string>;
using namespace detail;

struct MYLIB_EXPORT Widget {
  Widget(int v);
  ~Widget();
  std::string Name() const;
  Widget& operator*=(Widget o);
  bool operator==(const Widget& o) const;
  explicit operator const char*() const;
  int get() const&;
  int get() &&;
  void* operator new(std::size_t n);
  void operator delete(void* p);
  int v;
};
Widget::Widget(int x) : v(x) {}
Widget::~Widget() {}
std::string Widget::Name() const { return "w"; }
Widget& Widget::operator*=(Widget o) { v *= o.v; return *this; }
bool Widget::operator==(const Widget& o) const { return v == o.v; }
Widget::operator const char*() const { return "w"; }
int Widget::get() const& { return 1; }
int Widget::get() && { return 2; }
void* Widget::operator new(std::size_t n) { return ::operator new(n); }
void Widget::operator delete(void* p) { ::operator delete(p); }
std::ostream& operator<<(std::ostream& os, const Widget& w) { return os << w.v; }
long double operator"" _km(long double x) { return x * 1000; }

MYLIB_EXPORT void set_name(const std::string& s, std::size_t n) { (void)s; (void)n; }
std::string describe(std::wstring w, const std::vector<std::string>& v) { return std::to_string(w.size() + v.size()); }
void take_list(const IntList& l, Holder h) { (void)l; (void)h; }
int64_t sum(int64_t a, uint32_t b, std::ptrdiff_t c, int8_t d) { return a + b + c + d; }
int logmsg(const char* fmt, ...) { return fmt != nullptr; }
void call(int (*fn)(int), double arr[4]) { (void)fn; (void)arr; }
void read(std::istream& in, std::stringstream& ss, std::ostringstream* os) { (void)in; (void)ss; (void)os; }
void visit(Node* n) { (void)n; }
template <typename T> T twice(T x) { return x + x; }
template int twice(int);
int counter = 0;
}  // namespace MYLIB_NAMESPACE

namespace a { typedef int Id; void use(Id i); }
namespace b { typedef long Id; void use(Id i); }
void a::use(Id i) { (void)i; }
void b::use(Id i) { (void)i; }

DCV_NAMESPACE_BEGIN
double bignum(double x) { return x; }
DCV_NAMESPACE_END

namespace at { namespace native {
DECLARE_DISPATCH(add_stub);
DEFINE_DISPATCH(add_stub);
}}
namespace c10 {
C10_DEFINE_REGISTRY(ThingRegistry, int);
}
)";

struct Fixture {
  std::string dir, lib, object;
};

Fixture make_fixture(const std::string& name) {
  Fixture f;
  f.dir = test::scratch_dir("types-" + name);  // removed with the scratch area even when an assertion stops the test
  fs::remove_all(f.dir);
  fs::create_directories(f.dir + "/tree/include/mylib");
  fs::create_directories(f.dir + "/tree/src");
  fs::create_directories(f.dir + "/build/include/mylib");
  test::write_file(f.dir + "/tree/include/mylib/macros.h", kMacrosHeader);
  test::write_file(f.dir + "/build/include/mylib/config.h", kGeneratedConfig);
  f.lib = f.dir + "/tree/src/lib.cpp";
  test::write_file(f.lib, kLib);
  f.object = f.dir + "/lib.o";
  return f;
}

// Defined symbols of an object, by nm: the compiler's own mangling is the oracle.
std::vector<std::string> defined_symbols(const std::string& object) {
  auto r = test::run("nm -P --defined-only " + object);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  std::string name, type, rest;
  while (in >> name >> type) {
    std::getline(in, rest);
    if (type == "T" || type == "W" || type == "D" || type == "B") out.push_back(name);
  }
  return out;
}

bool ours(const std::string& demangled) {
  for (const char* p : {"mylib::", "dcv::", "a::use", "b::use", "at::native::add_stub", "c10::ThingRegistry"})
    if (demangled.find(p) != std::string::npos) return true;
  return false;
}

TEST(TypeModel, every_symbol_of_an_uncompiled_source_traces_to_it_as_missing_source) {
  Fixture f = make_fixture("model");
  auto cc = test::run("g++ -std=c++17 -c -I" + f.dir + "/tree/include -I" + f.dir + "/build/include " + f.lib + " -o " +
                      f.object);
  ASSERT_EQ(cc.status, 0) << "g++ cannot compile the fixture: " << cc.err;
  source::SourceIndex idx = source::SourceIndex::build({{f.dir + "/tree"}, ""}, nullptr, {f.dir + "/build"});
  build::Model build;
  build.has_compile_database = true;  // a compile database that lacks lib.cpp
  build.compiled.insert(f.dir + "/tree/src/other.cpp");
  trace::TraceContext ctx;
  ctx.sources = &idx;
  ctx.source_roots = {f.dir + "/tree"};
  ctx.build = &build;

  std::vector<std::string> seen, wrong;
  for (const auto& mangled : defined_symbols(f.object)) {
    std::string demangled = demangle::demangle(mangled);
    if (!ours(demangled)) continue;
    UnresolvedSymbol u;
    u.symbol = mangled;
    u.demangled = demangled;
    trace::trace_symbol(nullptr, -1, ctx, u);
    verdict::resolve(u);         // the pipeline decides; the tracer only claims
    report::write_sentences(u);  // the tracer gives evidence, the report its words
    seen.push_back(demangled);
    if (u.classification != Classification::MissingSource || !u.origin || u.origin->file != f.lib) {
      wrong.push_back(demangled + " -> " + to_string(u.classification) + " " + (u.origin ? u.origin->file : "") + " (" +
                      *u.reason + ")");
    }
    if (demangled.find("set_name") != std::string::npos) {
      EXPECT_EQ(u.classification, Classification::MissingSource) << "std::string parameter: " << *u.reason;
      EXPECT_EQ(u.reason->find("could not be matched"), std::string::npos) << *u.reason;
    }
  }
  std::string all;
  for (const auto& s : seen) all += s + "\n";
  // The families the fixture exercises are all really emitted (no vacuous pass).
  for (const char* family :
       {"mylib::Widget::Widget(int)",
        "mylib::Widget::~Widget()",
        "mylib::Widget::Name[abi:cxx11]() const",
        "mylib::Widget::operator*=(mylib::Widget)",
        "mylib::Widget::operator==(mylib::Widget const&) const",
        "mylib::Widget::operator char const*() const",
        "mylib::Widget::get() const &",
        "mylib::Widget::get() &&",
        "mylib::Widget::operator new(unsigned long)",
        "mylib::Widget::operator delete(void*)",
        "mylib::operator<<(std::basic_ostream<char, std::char_traits<char> >&, mylib::Widget const&)",
        "mylib::operator\"\" _km(long double)",
        "mylib::set_name(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, "
        "unsigned long)",
        "mylib::logmsg(char const*, ...)",
        "mylib::call(int (*)(int), double*)",
        "mylib::visit(detail::Node*)",
        "int mylib::twice<int>(int)",
        "mylib::counter",
        "a::use(int)",
        "b::use(long)",
        "dcv::bignum(double)",
        "at::native::add_stub",
        "c10::ThingRegistry()"}) {
    EXPECT_NE(all.find(std::string(family) + "\n"), std::string::npos) << family << " not emitted; emitted:\n" << all;
  }
  EXPECT_GE(seen.size(), 28u) << all;  // C1/C2 and D0-less D1/D2 variants count separately
  std::string msg;
  for (const auto& w : wrong) msg += w + "\n";
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " of " << seen.size() << " mis-traced:\n" << msg;
  fs::remove_all(f.dir);
}

TEST(TypeModel, same_name_and_arity_with_unmatched_types_is_missing_source_with_a_note) {
  Fixture f = make_fixture("inexact");
  test::write_file(f.lib, "#include <string>\nnamespace q { void fuzzy(std::string::size_type n) { (void)n; } }\n");
  source::SourceIndex idx = source::SourceIndex::build({{f.dir + "/tree"}, ""});
  build::Model build;
  build.has_compile_database = true;
  build.compiled.insert(f.dir + "/tree/src/other.cpp");
  trace::TraceContext ctx;
  ctx.sources = &idx;
  ctx.build = &build;
  UnresolvedSymbol u;
  u.symbol = "_ZN1q5fuzzyEm";  // q::fuzzy(unsigned long)
  trace::trace_symbol(nullptr, -1, ctx, u);
  verdict::resolve(u);         // the pipeline decides; the tracer only claims
  report::write_sentences(u);  // the tracer gives evidence, the report its words
  EXPECT_EQ(u.classification, Classification::MissingSource);
  ASSERT_TRUE(u.origin);
  EXPECT_EQ(u.origin->file, f.lib);
  EXPECT_NE(u.reason->find("its parameter types (size_type) could not be matched exactly"), std::string::npos)
      << u.reason;
  fs::remove_all(f.dir);
}

TEST(TypeModel, normalize_type_canonical_std_spellings) {
  using source::normalize_type;
  EXPECT_EQ(
      normalize_type("const std::string& s", true),
      normalize_type("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&", false));
  EXPECT_EQ(normalize_type("std::ostream&", false),
            normalize_type("std::basic_ostream<char, std::char_traits<char> >&", false));
  EXPECT_EQ(normalize_type("Vector<const char>", false), "Vector<char const>");
  EXPECT_EQ(normalize_type("std::vector<int>", false), normalize_type("std::vector<int, std::allocator<int> >", false));
  EXPECT_EQ(normalize_type("int (*fn)(int)", true), "int(*)(int)");
  // The canonical spellings themselves, literally: equal pairs alone would pass a constant function.
  EXPECT_EQ(normalize_type("const std::string& s", true), "string const&");
  EXPECT_EQ(
      normalize_type("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&", false),
      "string const&");
  EXPECT_EQ(normalize_type("std::ostream&", false), "ostream&");
  EXPECT_EQ(normalize_type("std::basic_ostream<char, std::char_traits<char> >&", false), "ostream&");
  EXPECT_EQ(normalize_type("std::vector<int, std::allocator<int> >", false), "vector<int>");
  EXPECT_EQ(
      normalize_type("std::map<int, std::string, std::less<int>, std::allocator<std::pair<const int, std::string> > >",
                     false),
      "map<int,string>");
  EXPECT_EQ(normalize_type("const char* const name", true),
            "char const*");  // a parameter's top-level const is no part of its type
  EXPECT_EQ(normalize_type("unsigned long long * out", true), "unsigned long long*");
  EXPECT_EQ(normalize_type("volatile int&&", false), "int volatile&&");
  EXPECT_EQ(source::canonical_operator_name("operator const char*"), "operator char const*");
  EXPECT_EQ(source::canonical_operator_name("operator\"\" _km"), "operator\"\"_km");
}

TEST(Scanner, operator_assignment_and_anonymous_struct_keep_the_namespace) {
  auto names = [](std::string_view text) {
    std::string out;
    for (const auto& e : source::scan_source(text)) out += e.qualified + "(" + std::string(to_string(e.kind)) + ");";
    return out;
  };
  EXPECT_EQ(names("namespace J { void g(); A& A::operator=(A&& o) noexcept { return *this; } void h() {} }"),
            "J::g(declaration);J::A::operator=(definition);J::h(definition);");
  EXPECT_EQ(names("namespace s { namespace { struct { int a; } table = {{1}, {0, 0}}; int f(int x){return x;} } int "
                  "g(int y){return y;} }"),
            "s::(anonymous namespace)::f(definition);s::g(definition);");
  EXPECT_EQ(names("namespace Y { Scanner::~Scanner() = default; }"), "Y::Scanner::~Scanner(definition);");
}

// Only one translation unit can emit these, and the tracer must name it: the uncompiled unit that
// alone #includes an .inl holding plain definitions (jsoncpp's json_valueiterator.inl), and the
// uncompiled unit holding a template body instantiated through a macro (gflags' FlagRegisterer).
// g++'s objects of those units are the truth.
TEST(TypeModel, definitions_only_one_uncompiled_unit_can_emit_trace_to_that_unit) {
  Fixture f = make_fixture("emitting-unit");
  std::string src = f.dir + "/tree/src";
  test::write_file(src + "/counter.h", "namespace j { struct Counter { int n_ = 0; int next(); void reset(); }; }\n");
  test::write_file(src + "/counter_impl.inl",
                   "namespace j {\nint Counter::next() { return ++n_; }\nvoid Counter::reset() { n_ = 0; }\n}\n");
  test::write_file(src + "/value.cpp",
                   "#include \"counter.h\"\nnamespace j { int use(Counter& c) { return c.next(); } }\n"
                   "#include \"counter_impl.inl\"\n");
  test::write_file(src + "/tmpl.cpp",
                   "namespace j {\ntemplate <typename T> T twice(T x) { return x + x; }\n"
                   "#define INSTANTIATE_TWICE(T) template T twice<T>(T);\nINSTANTIATE_TWICE(int)\n"
                   "INSTANTIATE_TWICE(long)\n}\n");
  test::write_file(src + "/other.cpp", "int other() { return 1; }\n");
  test::write_file(f.lib, "int lib() { return 2; }\n");
  std::map<std::string, std::string> truth;  // symbol -> the unit whose object defines it
  for (const std::string unit : {"value.cpp", "tmpl.cpp"}) {
    std::string object = f.dir + "/" + unit + ".o";
    auto cc = test::run("g++ -std=c++17 -O0 -c " + test::quote(src + "/" + unit) + " -o " + test::quote(object));
    ASSERT_EQ(cc.status, 0) << cc.err;
    for (const auto& s : defined_symbols(object))
      if (demangle::demangle(s).rfind("j::", 0) == 0 || demangle::demangle(s).find(" j::") != std::string::npos)
        truth[s] = src + "/" + unit;
  }
  ASSERT_GE(truth.size(), 5u);  // j::use, Counter::next, Counter::reset, twice<int>, twice<long>
  source::SourceIndex idx = source::SourceIndex::build({{f.dir + "/tree"}, ""});
  build::Model build;
  build.has_compile_database = true;  // the build compiles other.cpp only
  build.compiled.insert(src + "/other.cpp");
  trace::TraceContext ctx;
  ctx.sources = &idx;
  ctx.build = &build;
  for (const auto& [symbol, unit] : truth) {
    UnresolvedSymbol u;
    u.symbol = symbol;
    u.demangled = demangle::demangle(symbol);
    trace::trace_symbol(nullptr, -1, ctx, u);
    verdict::resolve(u);         // the pipeline decides; the tracer only claims
    report::write_sentences(u);  // the tracer gives evidence, the report its words
    EXPECT_EQ(u.classification, Classification::MissingSource) << u.demangled << ": " << u.reason;
    ASSERT_TRUE(u.origin) << u.demangled;
    EXPECT_EQ(u.origin->file, unit) << u.demangled << ": " << u.reason;
  }
  UnresolvedSymbol next;
  next.symbol = "_ZN1j7Counter4nextEv";
  trace::trace_symbol(nullptr, -1, ctx, next);
  verdict::resolve(next);         // the pipeline decides; the tracer only claims
  report::write_sentences(next);  // the tracer gives evidence, the report its words
  EXPECT_EQ(next.reason, "defined in " + src + "/value.cpp:3 (defined in " + src + "/counter_impl.inl:2, which " + src +
                             "/value.cpp includes), which the build does not compile");
  fs::remove_all(f.dir);
}

// The three shapes the real-code panel once missed, with g++'s objects as the truth: jsoncpp's
// class-scope alias inside a compound parameter type ("const SelfType&", defined in an .inl that one
// unit includes), gflags' function-pointer variable, and fmt's alias templates down to
// conditional_t<std::is_same<Char, char>::value, appender, ...> (FMT_FUNC, trailing return type).
TEST(TypeModel, class_scope_aliases_alias_templates_and_pointer_variables_trace_to_their_unit) {
  Fixture f = make_fixture("aliases");
  std::string src = f.dir + "/tree/src";
  test::write_file(src + "/iter.h", R"(namespace j {
class IterBase {
 public:
  using SelfType = IterBase;
  bool isEqual(const SelfType& other) const;
  int n_ = 0;
};
class Other {
 public:
  typedef Other SelfType;
  bool isEqual(const SelfType& other) const;
};
}
)");
  test::write_file(src + "/iter_impl.inl", R"(namespace j {
bool IterBase::isEqual(const SelfType& other) const { return n_ == other.n_; }
bool Other::isEqual(const SelfType& other) const { return &other == this; }
}
)");
  test::write_file(src + "/value.cpp", "#include \"iter.h\"\n#include \"iter_impl.inl\"\n");
  test::write_file(src + "/flags.cc", R"(#include <cstdlib>
#define EXPORT_DECL __attribute__((visibility("default")))
namespace g {
void EXPORT_DECL (*exitfunc)(int) = &exit;
int (*table)[4] = nullptr;
void (*handlers[2])(int) = {nullptr, nullptr};
}
)");
  test::write_file(src + "/core.h", R"(#include <iterator>
#include <type_traits>
#define FMT_API __attribute__((visibility("default")))
namespace f { inline namespace v9 {
template <bool B, typename T, typename F> using conditional_t = typename std::conditional<B, T, F>::type;
template <typename Char> struct basic_string_view { const Char* data; };
using string_view = basic_string_view<char>;
namespace detail { template <typename T> struct buffer { T* ptr; void push_back(T) {} using value_type = T; }; }
class appender : public std::back_insert_iterator<detail::buffer<char>> {
 public:
  appender(std::back_insert_iterator<detail::buffer<char>> it) : std::back_insert_iterator<detail::buffer<char>>(it) {}
};
namespace detail {
template <typename T>
using buffer_appender = conditional_t<std::is_same<T, char>::value, appender,
                                      std::back_insert_iterator<buffer<T>>>;
}
template <typename OutputIt, typename Char> class basic_format_context { OutputIt* out_; };
template <typename Char>
using buffer_context =
    basic_format_context<detail::buffer_appender<Char>, Char>;
using format_context = buffer_context<char>;
using wformat_context = buffer_context<wchar_t>;
template <typename Context> class basic_format_args { const Context* c_; };
using format_args = basic_format_args<format_context>;
using wformat_args = basic_format_args<wformat_context>;
FMT_API auto vsystem_error(int error_code, string_view format_str, format_args args) -> int;
FMT_API auto wvsystem_error(int error_code, wformat_args args) -> int;
}}
)");
  test::write_file(src + "/format-inl.h", R"(#include "core.h"
namespace f { inline namespace v9 {
FMT_FUNC auto vsystem_error(int error_code, string_view format_str, format_args args) -> int {
  return error_code + (format_str.data != nullptr) + sizeof(args);
}
FMT_FUNC int wvsystem_error(int error_code, wformat_args args) { return error_code + sizeof(args); }
}}
)");
  test::write_file(src + "/format.cc", "#define FMT_FUNC\n#include \"format-inl.h\"\n");
  std::map<std::string, std::string> truth;  // symbol -> the unit whose object defines it
  for (const std::string unit : {"value.cpp", "flags.cc", "format.cc"}) {
    std::string object = f.dir + "/" + unit + ".o";
    auto cc = test::run("g++ -std=c++17 -O0 -c " + test::quote(src + "/" + unit) + " -o " + test::quote(object));
    ASSERT_EQ(cc.status, 0) << cc.err;
    for (const auto& s : defined_symbols(object)) {
      std::string d = demangle::demangle(s);
      if (d.rfind("j::", 0) == 0 || d.rfind("g::", 0) == 0 || d.rfind("f::v9::", 0) == 0) truth[s] = src + "/" + unit;
    }
  }
  std::set<std::string> names;
  for (const auto& [symbol, unit] : truth) names.insert(demangle::demangle(symbol));
  for (const char* want : {"j::IterBase::isEqual(j::IterBase const&) const", "j::Other::isEqual(j::Other const&) const",
                           "g::exitfunc", "g::table", "g::handlers",
                           "f::v9::vsystem_error(int, f::v9::basic_string_view<char>, "
                           "f::v9::basic_format_args<f::v9::basic_format_context<f::v9::appender, char> >)",
                           "f::v9::wvsystem_error(int, f::v9::basic_format_args<f::v9::basic_format_context<"
                           "std::back_insert_iterator<f::v9::detail::buffer<wchar_t> >, wchar_t> >)"})
    EXPECT_TRUE(names.count(want)) << want << " is not among g++'s symbols";
  source::SourceIndex idx = source::SourceIndex::build({{f.dir + "/tree"}, ""});
  build::Model build;
  build.has_compile_database = true;  // the build compiles lib.cpp only
  build.compiled.insert(f.lib);
  trace::TraceContext ctx;
  ctx.sources = &idx;
  ctx.build = &build;
  for (const auto& [symbol, unit] : truth) {
    UnresolvedSymbol u;
    u.symbol = symbol;
    u.demangled = demangle::demangle(symbol);
    trace::trace_symbol(nullptr, -1, ctx, u);
    verdict::resolve(u);         // the pipeline decides; the tracer only claims
    report::write_sentences(u);  // the tracer gives evidence, the report its words
    EXPECT_EQ(u.classification, Classification::MissingSource) << u.demangled << ": " << u.reason;
    ASSERT_TRUE(u.origin) << u.demangled;
    EXPECT_EQ(u.origin->file, unit) << u.demangled << ": " << u.reason;
    EXPECT_EQ(u.reason->find("could not be matched exactly"), std::string::npos) << u.demangled << ": " << *u.reason;
  }
  EXPECT_EQ(idx.expand_aliases("SelfType const&", "j::Other"), "Other const&");
  EXPECT_EQ(idx.expand_aliases("wformat_args", "f::v9"),
            "basic_format_args<basic_format_context<back_insert_iterator<buffer<wchar_t>>,wchar_t>>");
  fs::remove_all(f.dir);
}

// REGISTER_DISPATCH in a CPU kernel defines DispatchStub<void (*)(...), stub>::<CPU_CAPABILITY>; g++
// compiles a copy of PyTorch's 1.13 macros with CPU_CAPABILITY=AVX2. Each member must trace to the
// kernel that registers that stub (not to another compiled kernel registering another stub, nor to a
// CUDA file whose REGISTER_DISPATCH registers a static object).
TEST(TypeModel, register_dispatch_members_trace_to_the_kernel_registering_that_stub) {
  Fixture f = make_fixture("dispatch");
  std::string src = f.dir + "/tree/src";
  test::write_file(src + "/DispatchStub.h", R"(#pragma once
namespace at { namespace native {
template <typename FnPtr, typename T> struct DispatchStub { static FnPtr DEFAULT; static FnPtr AVX2; };
#define DECLARE_DISPATCH(fn, name) struct name : DispatchStub<fn, name> { using FnPtr = fn; }; extern struct name name
#define REGISTER_ARCH_DISPATCH(name, arch, fn) \
  template <> name::FnPtr DispatchStub<name::FnPtr, struct name>::arch = fn;
#define REGISTER_DISPATCH(name, fn) REGISTER_ARCH_DISPATCH(name, CPU_CAPABILITY, fn)
using add_fn = void (*)(int, double);
DECLARE_DISPATCH(add_fn, add_stub);
DECLARE_DISPATCH(void (*)(long), mul_stub);
namespace cpublas { DECLARE_DISPATCH(void (*)(char, const float*), gemm_stub); }
}}
)");
  test::write_file(src + "/kernel.cpp", R"(#include "DispatchStub.h"
namespace at { namespace native {
namespace { void add_impl(int, double) {} void gemm_impl(char, const float*) {} }
REGISTER_DISPATCH(add_stub, &add_impl);
REGISTER_DISPATCH(cpublas::gemm_stub, &gemm_impl);
}}
)");
  test::write_file(src + "/mul_kernel.cpp",
                   "#include \"DispatchStub.h\"\nnamespace at { namespace native {\n"
                   "namespace { void mul_impl(long) {} }\nREGISTER_DISPATCH(mul_stub, &mul_impl);\n}}\n");
  test::write_file(src + "/add_kernel.cu",
                   "#include \"DispatchStub.h\"\nnamespace at { namespace native {\n"
                   "REGISTER_DISPATCH(add_stub, &add_cuda);\n}}\n");
  std::string object = f.dir + "/kernel.o";
  auto cc = test::run("g++ -std=c++17 -O0 -DCPU_CAPABILITY=AVX2 -c " + test::quote(src + "/kernel.cpp") + " -o " +
                      test::quote(object));
  ASSERT_EQ(cc.status, 0) << cc.err;
  std::vector<std::string> members;
  for (const auto& s : defined_symbols(object))
    if (demangle::demangle(s).find("DispatchStub") != std::string::npos) members.push_back(s);
  ASSERT_EQ(members.size(), 2u);  // add_stub's and gemm_stub's AVX2
  source::SourceIndex idx = source::SourceIndex::build({{f.dir + "/tree"}, ""});
  build::Model build;
  build.has_compile_database = true;
  build.compiled.insert(src + "/mul_kernel.cpp");
  trace::TraceContext ctx;
  ctx.sources = &idx;
  ctx.build = &build;
  for (const auto& symbol : members) {
    UnresolvedSymbol u;
    u.symbol = symbol;
    u.demangled = demangle::demangle(symbol);
    trace::trace_symbol(nullptr, -1, ctx, u);
    verdict::resolve(u);         // the pipeline decides; the tracer only claims
    report::write_sentences(u);  // the tracer gives evidence, the report its words
    EXPECT_EQ(u.classification, Classification::MissingSource) << u.demangled << ": " << u.reason;
    ASSERT_TRUE(u.origin) << u.demangled;
    EXPECT_EQ(u.origin->file, src + "/kernel.cpp") << u.demangled << ": " << u.reason;
    EXPECT_EQ(u.origin->line, u.demangled.find("gemm_stub") != std::string::npos ? 5 : 4) << u.demangled;
    EXPECT_EQ(u.origin->kind, OriginKind::Definition);
  }
  fs::remove_all(f.dir);
}

}  // namespace
}  // namespace mlc
