// The declaration scanner on PyTorch-shaped code, and the demangled-name splitter on real symbols.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "demangle/symbol_name.h"
#include "source/scanner.h"
#include "source/source_index.h"
#include "test_support.h"

namespace mlc {
namespace {

using source::EntityKind;
using source::scan_source;

const source::Entity* find(const std::vector<source::Entity>& es, const std::string& qualified, EntityKind kind) {
  for (const auto& e : es)
    if (e.qualified == qualified && e.kind == kind) return &e;
  return nullptr;
}

TEST(Scanner, namespaces_templates_and_explicit_instantiations) {
  const char* code = R"(
#include <cub/cub.cuh>
#define AT_INSTANTIATE(T) \
  template void f<T>(T);
namespace at { namespace cuda { namespace cub {
template <typename input_t, typename output_t>
void exclusive_sum_in_common_type(const input_t *input, output_t *output, int64_t num_items) {
  auto x = [&](int a) { return a < 2; };
  if (x(1)) { output[0] = input[0]; }
}
template void exclusive_sum_in_common_type(const int32_t *input, int32_t *output, int64_t num_items);
template void exclusive_sum_in_common_type<int64_t, int64_t>(const int64_t*, int64_t*, int64_t);
}}}  // namespace at::cuda::cub
)";
  auto es = scan_source(code);
  const auto* def = find(es, "at::cuda::cub::exclusive_sum_in_common_type", EntityKind::FunctionDefinition);
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(def->is_template);
  EXPECT_EQ(def->line, 7u);
  EXPECT_EQ(source::split_list(def->params), (std::vector<std::string>{"input_t const*", "output_t*", "long"}));
  EXPECT_EQ(source::split_list(def->template_params), (std::vector<std::string>{"input_t", "output_t"}));
  std::vector<const source::Entity*> inst;
  for (const auto& e : es)
    if (e.kind == EntityKind::ExplicitInstantiation) inst.push_back(&e);
  ASSERT_EQ(inst.size(), 2u);
  EXPECT_EQ(inst[0]->line, 11u);
  EXPECT_FALSE(inst[0]->is_template);
  EXPECT_EQ(source::split_list(inst[0]->params), (std::vector<std::string>{"int const*", "int*", "long"}));
  EXPECT_EQ(inst[1]->line, 12u);
  EXPECT_FALSE(inst[1]->is_template);
  EXPECT_EQ(source::split_list(inst[1]->template_args), (std::vector<std::string>{"long", "long"}));
}

TEST(Scanner, classes_members_ctors_operators_and_key_functions) {
  const char* code = R"(
namespace c10 {
namespace impl { inline namespace v1 {
class TORCH_API Widget : public Base<int> {
 public:
  Widget(int a, std::string name = "x") : a_(a), b_{2} {}
  ~Widget() override;
  virtual void run() const;
  virtual void pure() = 0;
  bool operator()(const Widget& other) const;
  operator bool() const { return true; }
  static int counter;
  static constexpr int kMax = 3;
 private:
  int a_;
};
}}
int impl::Widget::counter = 0;
void impl::Widget::run() const {}
impl::Widget::~Widget() {}
REGISTER_DISPATCH(add_stub, &add_kernel);
extern "C" {
int c_function(void* p, size_t n);
}
extern "C" int single_c(void);
namespace {
void hidden_helper(long x) {}
}
using IntArrayRef = ArrayRef<int64_t>;
typedef unsigned long long u64;
}  // namespace c10
)";
  auto es = scan_source(code);
  const auto* cls = find(es, "c10::impl::v1::Widget", EntityKind::ClassDefinition);
  ASSERT_NE(cls, nullptr);
  EXPECT_EQ(cls->extra, "run()");  // the key function: ~Widget is also virtual but declared first? no: override
  const auto* ctor = find(es, "c10::impl::v1::Widget::Widget", EntityKind::FunctionDefinition);
  ASSERT_NE(ctor, nullptr);
  EXPECT_TRUE(ctor->is_inline);
  EXPECT_EQ(source::split_list(ctor->params), (std::vector<std::string>{"int", "string"}));
  EXPECT_NE(find(es, "c10::impl::v1::Widget::~Widget", EntityKind::FunctionDeclaration), nullptr);
  const auto* call = find(es, "c10::impl::v1::Widget::operator()", EntityKind::FunctionDeclaration);
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->const_method);
  EXPECT_EQ(call->params, "Widget const&");
  EXPECT_NE(find(es, "c10::impl::v1::Widget::operator bool", EntityKind::FunctionDefinition), nullptr);
  EXPECT_NE(find(es, "c10::impl::v1::Widget::counter", EntityKind::VariableDeclaration), nullptr);
  const auto* counter_def = find(es, "c10::impl::Widget::counter", EntityKind::VariableDefinition);
  ASSERT_NE(counter_def, nullptr);
  EXPECT_EQ(counter_def->line, 18u);
  EXPECT_NE(find(es, "c10::impl::Widget::run", EntityKind::FunctionDefinition), nullptr);
  EXPECT_NE(find(es, "c10::impl::Widget::~Widget", EntityKind::FunctionDefinition), nullptr);
  EXPECT_EQ(find(es, "c10::REGISTER_DISPATCH", EntityKind::FunctionDeclaration), nullptr);  // a macro call
  const auto* cf = find(es, "c10::c_function", EntityKind::FunctionDeclaration);
  ASSERT_NE(cf, nullptr);
  EXPECT_TRUE(cf->extern_c);
  EXPECT_EQ(cf->params, std::string("void*") + source::kListSep + "unsigned long");
  EXPECT_TRUE(find(es, "c10::single_c", EntityKind::FunctionDeclaration)->extern_c);
  EXPECT_NE(find(es, "c10::(anonymous namespace)::hidden_helper", EntityKind::FunctionDefinition), nullptr);
  EXPECT_EQ(find(es, "c10::IntArrayRef", EntityKind::Alias)->extra, "ArrayRef<long>");
  EXPECT_EQ(find(es, "c10::u64", EntityKind::Alias)->extra, "unsigned long long");
}

TEST(Scanner, broken_code_is_skipped_not_fatal) {
  const char* code =
      "namespace a { void f( { ) } } } } class { ; template < void g(int); \"unterminated\n"
      "int ok_after(int x);\n/* never closed";
  auto es = scan_source(code);  // must return
  ASSERT_EQ(es.size(), 1u);     // what came before the garbage is kept
  EXPECT_EQ(es[0].qualified, "a::f");
  // Found by fuzzing: an unbalanced ']' before '=' at the very start once read before the tokens.
  EXPECT_TRUE(scan_source("]=1;").empty());
  scan_source("] ] x = 2; ]");
  EXPECT_EQ(scan_source("]=1;\nint ok[3] = {1, 2, 3};\n").at(0).qualified, "ok");
}

// gflags' "void GFLAGS_DLL_DECL (*gflags_exitfunc)(int) = &exit;": a parenthesized declarator names a
// variable (pointer to function, to array, to member), not a function called GFLAGS_DLL_DECL.
TEST(Scanner, parenthesized_pointer_declarators_are_variables) {
  const char* code = R"(
namespace google {
void GFLAGS_DLL_DECL (*gflags_exitfunc)(int) = &exit;
extern void (*hook)(int);
int (*table)[4] = nullptr;
void (* const handlers[2])(int) = {nullptr, nullptr};
int (Widget::*member)(int) const = &Widget::get;
struct Holder { static void (*callback)(void*); void (*unnamed_member)(int); };
void (*Holder::callback)(void*) = nullptr;
int after(int x) { return x; }
REGISTER_THING(&after);
}
)";
  auto es = scan_source(code);
  const auto* exitfunc = find(es, "google::gflags_exitfunc", EntityKind::VariableDefinition);
  ASSERT_NE(exitfunc, nullptr);
  EXPECT_EQ(exitfunc->line, 3u);
  EXPECT_NE(find(es, "google::hook", EntityKind::VariableDeclaration), nullptr);
  EXPECT_NE(find(es, "google::table", EntityKind::VariableDefinition), nullptr);
  EXPECT_NE(find(es, "google::handlers", EntityKind::VariableDefinition), nullptr);
  EXPECT_NE(find(es, "google::member", EntityKind::VariableDefinition), nullptr);
  EXPECT_NE(find(es, "google::Holder::callback", EntityKind::VariableDeclaration), nullptr);
  const auto* out_of_line = find(es, "google::Holder::callback", EntityKind::VariableDefinition);
  ASSERT_NE(out_of_line, nullptr);
  EXPECT_EQ(out_of_line->line, 9u);
  EXPECT_NE(find(es, "google::after", EntityKind::FunctionDefinition), nullptr);
  for (const auto& e : es) {
    EXPECT_EQ(e.qualified.find("GFLAGS_DLL_DECL"), std::string::npos) << e.qualified;
    EXPECT_EQ(e.qualified.find("unnamed_member"), std::string::npos) << e.qualified;  // no symbol
    EXPECT_EQ(e.qualified.find("REGISTER_THING"), std::string::npos) << e.qualified;
  }
}

// fmt's "template <typename Char> using buffer_context = basic_format_context<...>": alias templates
// keep their parameters, class-scope aliases their class.
TEST(Scanner, alias_templates_keep_their_parameters) {
  auto es = scan_source(
      "namespace fmt { template <typename Char> using buffer_context = "
      "basic_format_context<detail::buffer_appender<Char>, Char>;\n"
      "class It { using SelfType = It; }; }\n");
  const auto* bc = find(es, "fmt::buffer_context", EntityKind::Alias);
  ASSERT_NE(bc, nullptr);
  EXPECT_EQ(bc->extra, "basic_format_context<buffer_appender<Char>,Char>");
  EXPECT_EQ(source::split_list(bc->template_params), std::vector<std::string>{"Char"});
  EXPECT_TRUE(bc->is_template);
  const auto* self = find(es, "fmt::It::SelfType", EntityKind::Alias);
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->extra, "It");
  EXPECT_TRUE(self->template_params.empty());
}

// PyTorch's CPU kernel registrations define DispatchStub<FnPtr, stub>::<arch> static members.
TEST(Scanner, register_dispatch_defines_the_stub_members) {
  const char* code = R"(
namespace at { namespace native {
REGISTER_DISPATCH(cpublas::gemm_stub, &cpublas::cpublas_gemm_impl);
REGISTER_ARCH_DISPATCH(lu_stub, DEFAULT, &lu_kernel)
REGISTER_AVX512_DISPATCH(lu_stub, &lu_kernel);
REGISTER_CUDA_DISPATCH(add_stub, &add_kernel);
int after(int x) { return x; }
}}
)";
  auto es = scan_source(code);
  std::vector<std::string> members;
  for (const auto& e : es)
    if (e.kind == EntityKind::VariableDefinition)
      members.push_back(e.qualified + "<" + e.template_args + ">:" + std::to_string(e.line));
  EXPECT_EQ(members,
            (std::vector<std::string>{
                "at::native::DispatchStub::DEFAULT<gemm_stub>:3", "at::native::DispatchStub::AVX2<gemm_stub>:3",
                "at::native::DispatchStub::AVX512<gemm_stub>:3", "at::native::DispatchStub::VSX<gemm_stub>:3",
                "at::native::DispatchStub::ZVECTOR<gemm_stub>:3", "at::native::DispatchStub::DEFAULT<lu_stub>:4",
                "at::native::DispatchStub::AVX512<lu_stub>:5"}));
  const auto* after = find(es, "at::native::after", EntityKind::FunctionDefinition);  // no statement swallowed
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->line, 7u);
}

// normalize_type is a comparison key, not libiberty's spelling: compact (spaces only between words),
// namespaces dropped, cv-qualifiers after the type. What it must do is give a source's spelling and
// c++filt's spelling of the same type one key; the last lines check that against c++filt itself.
TEST(Scanner, normalize_type_gives_source_and_cxxfilt_spellings_one_key) {
  using source::normalize_type;
  EXPECT_EQ(normalize_type("const at::TensorIteratorBase& iter", true), "TensorIteratorBase const&");
  EXPECT_EQ(normalize_type("int64_t gI_stride", true), "long");
  EXPECT_EQ(normalize_type("const int64_t n", true), "long");
  EXPECT_EQ(normalize_type("size_t", true), "unsigned long");
  EXPECT_EQ(normalize_type("unsigned", true), "unsigned int");
  EXPECT_EQ(normalize_type("long int x = 3", true), "long");
  EXPECT_EQ(normalize_type("char const * const * argv", true),
            "char const*const*");  // compact: spaces only between words
  EXPECT_EQ(normalize_type("float data[]", true), "float*");
  EXPECT_EQ(normalize_type("std::function<void(int)> cb", true), "function<void(int)>");
  // Several leading cv-qualifiers move together (this once looped forever on PyTorch's sources).
  EXPECT_EQ(normalize_type("const volatile int", false), "int const volatile");
  EXPECT_EQ(normalize_type("const volatile std::vector<int>& v", true), "vector<int>const volatile&");
  EXPECT_EQ(normalize_type("volatile const unsigned long long x", true), "unsigned long long");
  // The demangled side goes through the same function.
  EXPECT_EQ(normalize_type("at::TensorIteratorBase const&", true), "TensorIteratorBase const&");
  EXPECT_EQ(normalize_type("c10::ArrayRef<long>", true), "ArrayRef<long>");
  // The oracle: c++filt's spelling of each parameter, next to a source spelling of the same type.
  auto filt = test::run("printf '%s\\n' _Z1fPKPKc _Z1fRVKSt6vectorIiSaIiEE _Z1fRKN2at18TensorIteratorBaseE | c++filt");
  ASSERT_EQ(filt.status, 0) << filt.err;
  std::istringstream lines(filt.out);
  std::vector<std::string> params;
  for (std::string l; std::getline(lines, l);) params.push_back(l.substr(2, l.size() - 3));  // f(...) -> ...
  ASSERT_EQ(params,
            (std::vector<std::string>{"char const* const*", "std::vector<int, std::allocator<int> > const volatile&",
                                      "at::TensorIteratorBase const&"}));
  EXPECT_EQ(normalize_type(params[0], false), normalize_type("char const * const * argv", true));
  EXPECT_EQ(normalize_type(params[1], false),
            normalize_type("const volatile std::vector<int, std::allocator<int> >& v", true));
  EXPECT_EQ(normalize_type(params[2], false), normalize_type("const at::TensorIteratorBase& iter", true));
}

// C++ [namespace.udir]: after "using namespace N;", the A of a definition "A::f" may be N's (graphite2's
// sources define every member this way). The scanner says what else it may be called; an unqualified
// definition is a new ::f and gets no other name.
TEST(Scanner, definitions_after_a_using_directive_carry_the_names_it_makes_possible) {
  const char* code = R"(
#include "inc/Cmap.h"
using namespace gr;
Cmap::Cmap(const Face & face) : m_face(face) {}
int Cmap::count = 0;
void helper() {}
namespace outer {
using namespace inner;
void Table::load() {}
}
)";
  auto es = scan_source(code);
  const auto* ctor = find(es, "Cmap::Cmap", EntityKind::FunctionDefinition);
  ASSERT_NE(ctor, nullptr);
  EXPECT_EQ(source::split_list(ctor->using_qualified), (std::vector<std::string>{"gr::Cmap::Cmap"}));
  const auto* count = find(es, "Cmap::count", EntityKind::VariableDefinition);
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(source::split_list(count->using_qualified), (std::vector<std::string>{"gr::Cmap::count"}));
  const auto* helper = find(es, "helper", EntityKind::FunctionDefinition);
  ASSERT_NE(helper, nullptr);
  EXPECT_EQ(helper->using_qualified, "");
  const auto* load = find(es, "outer::Table::load", EntityKind::FunctionDefinition);
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(source::split_list(load->using_qualified),
            (std::vector<std::string>{"gr::Table::load", "outer::inner::Table::load", "inner::Table::load"}));
}

// The index keeps the name another declaration confirms, as the compiler's lookup would find it; a
// namespace a::b { block and an inline namespace a macro names (abseil's ABSL_NAMESPACE_BEGIN, whose
// value is another macro) are the names the mangled symbols carry.
TEST(SourceIndexNames, using_directives_nested_namespaces_and_inline_namespace_macros_give_the_compilers_names) {
  const std::string dir = test::scratch_dir("index-names");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/inc");
  std::filesystem::create_directories(dir + "/base");
  test::write_file(dir + "/inc/Cmap.h",
                   "namespace gr {\nclass Face;\nclass Cmap {\n public:\n  Cmap(const Face& face);\n"
                   "  static int count;\n};\n}\n");
  test::write_file(dir + "/Cmap.cpp",
                   "#include \"inc/Cmap.h\"\nusing namespace gr;\nCmap::Cmap(const Face & face) {}\n"
                   "int Cmap::count = 0;\nvoid helper() {}\n");
  test::write_file(dir + "/nested.cpp", "namespace a::b {\nint twice(int v) { return 2 * v; }\n}\n");
  test::write_file(dir + "/base/options.h",
                   "#ifndef BASE_OPTIONS_H_\n#define BASE_OPTIONS_H_\n"
                   "#define ABSL_OPTION_USE_INLINE_NAMESPACE 1\n"
                   "#define ABSL_OPTION_INLINE_NAMESPACE_NAME debian3\n#endif\n");
  // The #if picks the definition by a number options.h defines (no -D flag says it).
  test::write_file(dir + "/base/config.h",
                   "#include \"options.h\"\n#if ABSL_OPTION_USE_INLINE_NAMESPACE == 0\n"
                   "#define ABSL_NAMESPACE_BEGIN\n#define ABSL_NAMESPACE_END\n"
                   "#elif ABSL_OPTION_USE_INLINE_NAMESPACE == 1\n#define ABSL_NAMESPACE_BEGIN \\\n"
                   "  inline namespace ABSL_OPTION_INLINE_NAMESPACE_NAME {\n"
                   "#define ABSL_NAMESPACE_END }\n#endif\n");
  test::write_file(dir + "/str_cat.cc",
                   "#include \"base/config.h\"\nnamespace absl {\nABSL_NAMESPACE_BEGIN\n"
                   "void StrAppend(int v) {}\nABSL_NAMESPACE_END\n}  // namespace absl\n");
  auto index = source::SourceIndex::build({.roots = {dir}, .cache_file = ""}, nullptr);
  auto definition_of = [&](const std::string& name) -> std::string {
    for (const auto* e : index.lookup(name))
      if (e->kind == EntityKind::FunctionDefinition || e->kind == EntityKind::VariableDefinition)
        return e->qualified + " in " + index.file_of(*e).path.substr(dir.size() + 1);
    return "";
  };
  EXPECT_EQ(definition_of("Cmap"), "gr::Cmap::Cmap in Cmap.cpp");
  EXPECT_EQ(definition_of("count"), "gr::Cmap::count in Cmap.cpp");
  EXPECT_EQ(definition_of("helper"), "helper in Cmap.cpp");  // unqualified: a new ::helper
  EXPECT_EQ(definition_of("twice"), "a::b::twice in nested.cpp");
  EXPECT_EQ(definition_of("StrAppend"), "absl::debian3::StrAppend in str_cat.cc");
  std::filesystem::remove_all(dir);
}

TEST(SymbolName, splits_functions_templates_and_specials) {
  auto s = demangle::parse_symbol("_ZN2at4musa3cub28exclusive_sum_in_common_typeIiiEEvPKT_PT0_l");
  EXPECT_EQ(s.kind, demangle::NameKind::Function);
  EXPECT_EQ(s.qualified(), "at::musa::cub::exclusive_sum_in_common_type");
  EXPECT_EQ(s.template_args, (std::vector<std::string>{"int", "int"}));
  EXPECT_EQ(s.return_type, "void");
  EXPECT_EQ(s.params, (std::vector<std::string>{"int const*", "int*", "long"}));

  auto g = demangle::parse_symbol("_ZN2at6native26launch_glu_backward_kernelERKNS_18TensorIteratorBaseEll");
  EXPECT_EQ(g.qualified(), "at::native::launch_glu_backward_kernel");
  EXPECT_FALSE(g.return_type.has_value());
  EXPECT_EQ(g.params, (std::vector<std::string>{"at::TensorIteratorBase const&", "long", "long"}));

  auto ctor = demangle::parse_symbol("_ZN2at18_GeneratorRegisterC1ESt8functionIFNS_9GeneratorEvEE");
  EXPECT_TRUE(ctor.is_constructor);
  EXPECT_EQ(ctor.qualified(), "at::_GeneratorRegister::_GeneratorRegister");
  EXPECT_EQ(ctor.params, (std::vector<std::string>{"std::function<at::Generator ()>"}));

  auto vt = demangle::parse_symbol("_ZTVN3c1015VariableVersion14VersionCounterE");
  EXPECT_EQ(vt.kind, demangle::NameKind::VTable);
  EXPECT_EQ(vt.qualified(), "c10::VariableVersion::VersionCounter");

  auto method = demangle::parse_symbol("_ZNK3c1010TensorImpl4sizeEl");
  EXPECT_EQ(method.method_qualifiers, " const");
  EXPECT_EQ(method.qualified(), "c10::TensorImpl::size");

  auto op = demangle::parse_symbol("_ZN3c10lsERSoRKNS_6ScalarE");
  EXPECT_EQ(op.name, "operator<<");
  EXPECT_EQ(op.scopes, (std::vector<std::string>{"c10"}));

  auto c = demangle::parse_symbol("musaMallocAsync");
  EXPECT_EQ(c.kind, demangle::NameKind::CName);
  EXPECT_EQ(c.name, "musaMallocAsync");

  auto data = demangle::parse_symbol("_ZN3c106detail12kDefaultNameE");
  EXPECT_EQ(data.kind, demangle::NameKind::Data);
  EXPECT_EQ(data.qualified(), "c10::detail::kDefaultName");
}

}  // namespace
}  // namespace mlc
