// torch_musa's stand-in convention: a runtime API the SDK lacks is declared as a C++ function in a
// namespace (c10::musa::musaMallocAsync in unimplemented_functions.h), so ported code that calls it
// leaves the C++ name undefined, not the C name. This check recognises such a symbol by its
// unqualified name, which the porting map sends to a C function of the CUDA runtime.
#pragma once

#include <optional>

#include "demangle/symbol_name.h"
#include "report/report.h"
#include "trace/trace.h"

namespace mlc::trace {

// True when `sym` is a stand-in for a CUDA C API: `u` becomes cuda-only (counterpart: the CUDA
// name and its library) or, when an SDK library does export the C name, an unknown whose reason
// says the stand-in hides it. `declared` is where the sources declare the stand-in, if known.
bool check_stand_in(const demangle::SymbolName& sym, const TraceContext& ctx, const std::optional<Origin>& declared,
                    UnresolvedSymbol& u);

// The CUDA C function a namespaced stand-in maps to ("cudaMallocAsync" for
// c10::musa::musaMallocAsync), or empty when `sym` is not shaped like one.
std::string stand_in_cuda_name(const demangle::SymbolName& sym, const porting::PortingMap& map);

}  // namespace mlc::trace
