// Stubs for functions the SDK does not provide, so that the library links; calling one is reported by
// the stub runtime (musa_stubs.h). musa-stubgen rewrites the region between its markers and keeps any
// stub edited there; everything outside the markers is yours and is never touched.

// musa-stubgen: begin generated stubs
#include "unimplemented_functions.h"

#include <stdexcept>

#define MUSA_STUBS_IMPLEMENTATION
#include "musa_stubs.h"

// musa-stubgen: stub PVRSRVGetDevInfo 14b147b6527a9d3a
// unknown: signature unknown: bound by its assembler name, which links whatever the signature
// PVRSRVGetDevInfo
extern "C" void musa_stub_7618b016ec9f() __asm__("PVRSRVGetDevInfo");
extern "C" void musa_stub_7618b016ec9f() {
  if (musa_stub_enter("PVRSRVGetDevInfo", "PVRSRVGetDevInfo") == MUSA_STUB_THROW) {
    throw std::runtime_error("PVRSRVGetDevInfo is not supported now!");
  }
}
// musa-stubgen: end PVRSRVGetDevInfo

// musa-stubgen: stub musaDeviceTable d14315c3cc01baa0
// sdk-declared-only: musaDeviceTable, 64 bytes as libmusa_kernels.so's DWARF declares it (zero-filled; a data stub cannot report its use)
alignas(16) unsigned char musa_stub_data_49704e3232bf[64] __asm__("musaDeviceTable") = {};
// musa-stubgen: end musaDeviceTable

// musa-stubgen: stub musaLaunchHostFunc 4a89ffd4cde032d9
// cuda-only: signature unknown: bound by its assembler name, which links whatever the signature
// musaLaunchHostFunc
extern "C" void musa_stub_d44331b6207b() __asm__("musaLaunchHostFunc");
extern "C" void musa_stub_d44331b6207b() {
  if (musa_stub_enter("musaLaunchHostFunc", "musaLaunchHostFunc") == MUSA_STUB_THROW) {
    throw std::runtime_error("musaLaunchHostFunc is not supported now!");
  }
}
// musa-stubgen: end musaLaunchHostFunc

// musa-stubgen: stub musaMallocAsync 973bca5621862659 musa_runtime_api.h
// sdk-declared-only: declared in musa_runtime_api.h:15
extern "C" musaError_t musaMallocAsync(void** devPtr, size_t size, musaStream_t hStream) {
  (void)devPtr;
  (void)size;
  (void)hStream;
  if (musa_stub_enter("musaMallocAsync", "musaMallocAsync") == MUSA_STUB_THROW) {
    throw std::runtime_error("musaMallocAsync is not supported now!");
  }
  return musaErrorNotSupported;
}
// musa-stubgen: end musaMallocAsync

// musa-stubgen: end generated stubs
