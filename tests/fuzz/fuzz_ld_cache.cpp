// The ld.so.cache reader (both layouts) and the ld.so.conf reader, on arbitrary bytes.
#include "fuzz_support.h"
#include "loader/ld_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string cache = mlc::fuzz::write_file("ld.so.cache", bytes);
  (void)mlc::loader::read_ld_cache(cache);
  std::string conf = mlc::fuzz::write_file("ld.so.conf", bytes);
  (void)mlc::loader::read_ld_conf("/ld.so.conf", mlc::fuzz::scratch_dir());
  return 0;
}
