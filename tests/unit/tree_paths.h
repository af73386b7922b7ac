// Where this build tree's tools, fixtures and sources are. The values live in one unit CMake generates per
// tree (tests/CMakeLists.txt, mlc_tree_paths.cpp), not in the test programs' compile definitions: the test
// programs are then compiled by the same command in every tree (plain, ASan), so the ASan tree takes their
// objects from the compiler cache instead of compiling them a second time.
#pragma once

namespace mlc::test::tree {
extern const char* const kLoaderFixtures;
extern const char* const kLinkcheckBin;
extern const char* const kStubgenBin;
extern const char* const kStubsLib;
extern const char* const kSourceDir;
extern const char* const kBinaryDir;
extern const char* const kExampleDir;
extern const char* const kCrossFixtures;
extern const char* const kWorldDir;
extern const char* const kMappingDir;
extern const char* const kTorchMusaDir;
}  // namespace mlc::test::tree

#define MLC_LOADER_FIXTURES (::mlc::test::tree::kLoaderFixtures)
#define MLC_LINKCHECK_BIN (::mlc::test::tree::kLinkcheckBin)
#define MLC_STUBGEN_BIN (::mlc::test::tree::kStubgenBin)
#define MLC_STUBS_LIB (::mlc::test::tree::kStubsLib)
#define MLC_SOURCE_DIR (::mlc::test::tree::kSourceDir)
#define MLC_BINARY_DIR (::mlc::test::tree::kBinaryDir)
#define MLC_EXAMPLE_DIR (::mlc::test::tree::kExampleDir)
#define MLC_CROSS_FIXTURES (::mlc::test::tree::kCrossFixtures)
#define MLC_WORLD_DIR (::mlc::test::tree::kWorldDir)
#define MLC_MAPPING_DIR (::mlc::test::tree::kMappingDir)
#define MLC_TORCH_MUSA_DIR (::mlc::test::tree::kTorchMusaDir)
