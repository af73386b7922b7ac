// When each function and data of the Python C API entered CPython's limited API, from 3.10 on (facts from
// CPython's Misc/stable_abi.toml); and the findings of an extension whose interpreter lacks some of them.
#include "python/c_api.h"

#include <algorithm>
#include <map>

#include "host/host_api.h"
#include "report/said.h"
#include "verdict/verdict.h"

namespace mlc::python {
namespace {

struct Added {
  const char* version;
  std::vector<const char*> names;
};

const std::vector<Added>& additions() {
  static const std::vector<Added> table = {
      {"3.10",
       {"Py_GetArgcArgv",
        "PyIter_Send",
        "PyUnicode_AsUTF8AndSize",
        "PyObject_GenericGetDict",
        "Py_NewRef",
        "Py_XNewRef",
        "PyModule_AddType",
        "PyType_FromModuleAndSpec",
        "PyType_GetModule",
        "PyType_GetModuleState",
        "PyFrame_GetLineNumber",
        "PyFrame_GetCode",
        "PyObject_CallNoArgs",
        "PyThreadState_GetFrame",
        "PyThreadState_GetID",
        "PyThreadState_GetInterpreter",
        "PyModule_AddObjectRef",
        "Py_FileSystemDefaultEncodeErrors",
        "PyCodec_Unregister",
        "PyErr_SetInterruptEx",
        "Py_Is",
        "Py_IsTrue",
        "Py_IsFalse",
        "Py_IsNone",
        "_Py_IncRef",
        "_Py_DecRef",
        "PyAIter_Check",
        "PyObject_GetAIter",
        "PyExc_EncodingWarning",
        "PyGC_Disable",
        "PyGC_Enable",
        "PyGC_IsEnabled"}},
      {"3.11",
       {"PyType_GetName", "PyType_GetQualName", "PyStructSequence_UnnamedField", "PyObject_CheckBuffer",
        "PyObject_GetBuffer", "PyBuffer_GetPointer", "PyBuffer_SizeFromFormat", "PyBuffer_ToContiguous",
        "PyBuffer_FromContiguous", "PyObject_CopyData", "PyBuffer_IsContiguous", "PyBuffer_FillContiguousStrides",
        "PyBuffer_FillInfo", "PyBuffer_Release", "PyMemoryView_FromBuffer", "Py_Version", "PyErr_GetHandledException",
        "PyErr_SetHandledException"}},
      {"3.12",
       {"PyType_FromMetaclass", "PyVectorcall_NARGS", "PyVectorcall_Call", "PyErr_GetRaisedException",
        "PyErr_SetRaisedException", "PyException_GetArgs", "PyException_SetArgs", "PyObject_Vectorcall",
        "PyObject_VectorcallMethod", "PyObject_GetTypeData", "PyType_GetTypeDataSize"}},
      {"3.13",
       {"PyImport_AddModuleRef",
        "PyWeakref_GetRef",
        "PyObject_DelAttr",
        "PyObject_DelAttrString",
        "PyObject_GetOptionalAttr",
        "PyObject_GetOptionalAttrString",
        "PyMapping_GetOptionalItem",
        "PyMapping_GetOptionalItemString",
        "PyModule_Add",
        "PyDict_GetItemRef",
        "PyDict_GetItemStringRef",
        "PyLong_AsInt",
        "PyObject_HasAttrWithError",
        "PyObject_HasAttrStringWithError",
        "PyMapping_HasKeyWithError",
        "PyMapping_HasKeyStringWithError",
        "Py_IsFinalizing",
        "PyUnicode_EqualToUTF8",
        "PyUnicode_EqualToUTF8AndSize",
        "PyMem_RawMalloc",
        "PyMem_RawCalloc",
        "PyMem_RawRealloc",
        "PyMem_RawFree",
        "PySys_Audit",
        "PySys_AuditTuple",
        "_Py_SetRefcnt",
        "PyList_GetItemRef",
        "PyType_GetFullyQualifiedName",
        "PyType_GetModuleName",
        "Py_GetConstant",
        "Py_GetConstantBorrowed",
        "PyType_GetModuleByDef",
        "PyEval_GetFrameBuiltins",
        "PyEval_GetFrameGlobals",
        "PyEval_GetFrameLocals"}},
      {"3.14",
       {"Py_TYPE", "Py_REFCNT", "PyIter_NextItem", "PyLong_FromInt32", "PyLong_FromUInt32", "PyLong_AsInt32",
        "PyLong_AsUInt32", "PyLong_FromInt64", "PyLong_FromUInt64", "PyLong_AsInt64", "PyLong_AsUInt64",
        "PyLong_AsNativeBytes", "PyLong_FromNativeBytes", "PyLong_FromUnsignedNativeBytes", "PyType_GetBaseByToken",
        "PyUnicode_Equal", "PyType_Freeze", "Py_PACK_FULL_VERSION", "Py_PACK_VERSION"}},
      {"3.15",
       {"PySys_GetAttr", "PySys_GetAttrString", "PySys_GetOptionalAttr", "PySys_GetOptionalAttrString",
        "PyABIInfo_Check", "PyModule_FromSlotsAndSpec", "PyModule_Exec", "PyModule_GetToken", "PyType_GetModuleByToken",
        "PyModule_GetStateSize", "PyDict_SetDefaultRef", "Py_SIZE", "Py_IS_TYPE", "Py_SET_SIZE"}},
  };
  return table;
}

// "3.11.2" -> "3.11".
std::string major_minor(const std::string& v) {
  size_t dot = v.find('.');
  if (dot == std::string::npos) return v;
  size_t second = v.find('.', dot + 1);
  return second == std::string::npos ? v : v.substr(0, second);
}

// Numeric order of "3.9" < "3.10".
bool older(const std::string& a, const std::string& b) {
  auto parts = [](const std::string& v) {
    int major = 0, minor = 0;
    std::sscanf(v.c_str(), "%d.%d", &major, &minor);
    return std::make_pair(major, minor);
  };
  return parts(a) < parts(b);
}

}  // namespace

std::optional<std::string> python_api_added(const std::string& name) {
  for (const auto& a : additions())
    if (std::any_of(a.names.begin(), a.names.end(), [&](const char* n) { return name == n; }))
      return std::string(a.version);
  return std::nullopt;
}

std::vector<UnresolvedSymbol*> find_api_the_interpreter_lacks(const std::vector<UnresolvedSymbol*>& unknown,
                                                              const HostInterpreter& host, CauseList& causes) {
  if (host.path.empty()) return unknown;
  std::vector<UnresolvedSymbol*> lacking, rest;
  for (UnresolvedSymbol* u : unknown) {
    bool hosted = std::any_of(u->referenced_by.begin(), u->referenced_by.end(), [&](const Reference& r) {
      return std::find(host.hosted.begin(), host.hosted.end(), r.library) != host.hosted.end();
    });
    if (hosted && verdict::current(*u) == Classification::Unknown && !u->origin &&
        host::host_api_of(u->symbol) == host::HostApi::Python)
      lacking.push_back(u);
    else rest.push_back(u);
  }
  if (lacking.empty()) return unknown;
  const std::string version = major_minor(host.version);
  const std::string python = "Python " + (version.empty() ? std::string("(version unknown)") : version);
  // The newest version among those that added a lacking name: what the extension was built for, at least.
  std::string newest = host.built_for;
  std::string example;
  for (const UnresolvedSymbol* u : lacking)
    if (auto added = python_api_added(u->symbol);
        host.built_for_tag.empty() && added && (newest.empty() || older(newest, *added))) {
      newest = *added;
      example = u->symbol;
    }
  Cause fresh;
  fresh.kind = CauseKind::Host;
  fresh.library = host.path;
  fresh.symbols = lacking.size();
  const size_t n = lacking.size();
  fresh.headline_why = saying(said::ApiNotInInterpreter{.symbols = n,
                                                        .interpreter = host.path,
                                                        .python = python,
                                                        .newest = newest,
                                                        .example = example,
                                                        .tag = host.built_for_tag});
  fresh.fix_why = saying(said::BuildAgainstPython{
      .python = python,
      .newest = host.built_for_tag.empty() && (newest.empty() || (!version.empty() && older(newest, version)))
                    ? std::string()
                    : newest,
      .tag = host.built_for_tag});
  Cause& c = causes.add(std::move(fresh));
  for (UnresolvedSymbol* u : lacking) {
    auto added = python_api_added(u->symbol);
    u->cause = c.id;
    // A module built for another Python (its tag says which) is an ABI mismatch: no symbol version is involved.
    verdict::claim(*u, EvidencePass::HostApi,
                   host.built_for_tag.empty() ? Classification::VersionMismatch : Classification::AbiMismatch);
    if (host.built_for_tag.empty() && added && !version.empty() && older(version, *added))
      say(*u, said::InterpreterTooOld{.added = *added, .interpreter = host.path, .python = python});
    else say(*u, said::InterpreterLacks{.interpreter = host.path, .python = python});
    u->fix = cause_fix(c, FixKind::None);
    u->suggestions.clear();
  }
  return rest;
}

}  // namespace mlc::python
