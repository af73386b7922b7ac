// The sentences of near misses and stand-ins (src/trace/suggest.cpp and stand_in.cpp's evidence).
#include <string>

#include "report/said.h"

namespace mlc::said {
namespace {

std::string abi_flag(bool cxx11) { return cxx11 ? "-D_GLIBCXX_USE_CXX11_ABI=1" : "-D_GLIBCXX_USE_CXX11_ABI=0"; }

std::string string_abi(bool cxx11) {
  return cxx11 ? std::string("the C++11 std::string ABI, std::__cxx11::basic_string / [abi:cxx11]")
               : std::string("the old std::string ABI, std::string mangled Ss");
}

}  // namespace

std::string StandInHidesReal::words() const {
  return "a stand-in " + qualified + " for " + name + ", which " + definer +
         " now defines; the stand-in's declaration hides it";
}
std::string RemoveStandIn::words() const {
  return "remove the declaration of " + qualified + " so the code calls " + soname + "'s " + name;
}
std::string StandInSdkLacks::words() const {
  return "a stand-in in " + scope + " for the C function " + name + ", which the " + sdk + " SDK lacks; CUDA has " +
         cuda + (!library.empty() ? " in " + library : " (declared in " + declared_in + ")");
}
std::string DefineStandIn::words() const {
  return "define " + qualified + " in unimplemented_functions.cpp (musa-stubgen) and request " + name +
         " from the SDK team";
}

std::string AbiDrift::words() const {
  const std::string head = library + " defines " + demangled + " (" + to_string(reason) + "): ";
  switch (kind) {
    case Kind::StringAbi:
      return head + "the caller was built with " + abi_flag(caller_cxx11) + " (" + string_abi(caller_cxx11) + "), " +
             library_name + " with " + abi_flag(library_cxx11) + " (" + string_abi(library_cxx11) + ")";
    case Kind::Parameter:
      return head + what + " is `" + there + "` there but `" + here + "` in the declaration the caller was compiled " +
             "against" +
             (reason == SuggestionReason::ByValue ? ": one side passes it by value, the other by reference" : "");
    case Kind::Headers: break;
  }
  return head + "the caller was compiled against other headers than the library that is loaded";
}
std::string RebuildForAbi::words() const {
  const std::string& lib = drift.library_name;
  switch (drift.kind) {
    case AbiDrift::Kind::StringAbi:
      return "rebuild the caller with " + abi_flag(drift.library_cxx11) + " to match " + lib + " (or load a " + lib +
             " built with " + abi_flag(drift.caller_cxx11) +
             "); for a PyTorch extension use torch's value: python -c 'import torch; "
             "print(int(torch.compiled_with_cxx11_abi()))'";
    case AbiDrift::Kind::Parameter:
      return "declare " + drift.what + " as `" + drift.there + "` where the caller sees it, as " + lib + " defines " +
             drift.demangled + ", and rebuild the caller (or rebuild " + lib + " from the caller's headers)";
    case AbiDrift::Kind::Headers: break;
  }
  return "rebuild against the headers of the loaded " + lib + " (or load the version it was built against)";
}

std::string OtherInstantiationsOnly::words() const {
  std::string have;
  for (size_t i = 0; i < instances.size(); ++i)
    have += (i ? ", " : "") + instances[i].demangled + (instances[i].at.empty() ? "" : " at " + instances[i].at);
  if (more > 0) have += ", ... (" + std::to_string(more) + " more)";
  const std::string where = !library_name.empty()
                                ? library_name + " has other instantiations of the same template"
                                : "the sources instantiate the same template explicitly for other arguments only";
  return demangled + " is not instantiated: " + where + " (" + have + ")" +
         (definition.empty() ? "" : "; the template is defined in " + definition);
}
std::string AddExplicitInstantiation::words() const {
  return "add the explicit instantiation `" + line + "` to " +
         (definition.empty() ? std::string("the source that defines the template")
          : compiled         ? definition
                             : "a compiled source that includes " + definition) +
         (library_name.empty() ? std::string() : " and rebuild " + library_name);
}

}  // namespace mlc::said
