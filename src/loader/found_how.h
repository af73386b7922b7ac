// How a file was found, the loader's vocabulary shared with the report (JSON `how`): a leaf header,
// so the findings model (report/report.h) names it without the loader's other types.
#pragma once

namespace mlc::loader {

// A step of the loader's search (search_order.h) or what the process already held; and, for another
// copy of a library only (never the one loaded), a place off the search path where such copies are
// looked for: the SDK's library directories (LoaderEnv::candidate_dirs, --sdk-home), a versioned
// install home beside them (/usr/local/musa-3.1, /usr/local/cuda-12.1: shown as the glob it was
// found by, LibraryCopy::home), the active conda or virtual environment, the requesting object's own
// directory or Python package (Beside: where its author put it, yet off its search path).
enum class FoundHow {
  Direct, Rpath, LdLibraryPath, Runpath, LdSoCache, LdSoConf, Default, With, AlreadyLoaded, Sdk, Home, Conda, Venv, Beside
};
const char* to_string(FoundHow how);

}  // namespace mlc::loader
