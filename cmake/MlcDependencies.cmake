# Locates the Debian-packaged dependencies: elfutils (libelf, libdw), libiberty (static),
# nlohmann-json, CLI11, fmt and oneTBB. Each becomes an imported target named mlc::<dep>.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
# elfutils and the compression libraries libdw reads sections with (zlib, bzip2, xz) are linked from their
# static archives when Debian's -dev packages have them (libdw-dev pulls them in): five shared libraries
# fewer for the loader to map and relocate at every start of a tool whose warm runs take a few tens of
# milliseconds (docs/benchmarks.md, issue 49), and five fewer an LD_LIBRARY_PATH can put a broken copy of
# first. MLC_STATIC_ELFUTILS=OFF links the shared ones.
option(MLC_STATIC_ELFUTILS "link libelf, libdw and their compression libraries statically" ON)
set(mlc_elfutils_archives "")
if(MLC_STATIC_ELFUTILS)
  foreach(lib dw elf bz2 lzma z)
    find_library(MLC_LIB${lib}_ARCHIVE NAMES lib${lib}.a HINTS ${LIBDW_LIBRARY_DIRS} ${LIBELF_LIBRARY_DIRS})
    if(NOT MLC_LIB${lib}_ARCHIVE)
      message(STATUS "lib${lib}.a not found: elfutils linked as shared libraries")
      set(mlc_elfutils_archives "")
      break()
    endif()
    list(APPEND mlc_elfutils_archives ${MLC_LIB${lib}_ARCHIVE})
  endforeach()
endif()
if(mlc_elfutils_archives)
  # One target for both, in the order static archives resolve: libdw before libelf before the
  # compression libraries.
  add_library(mlc_elfutils INTERFACE)
  target_include_directories(mlc_elfutils INTERFACE ${LIBDW_INCLUDE_DIRS} ${LIBELF_INCLUDE_DIRS})
  target_link_libraries(mlc_elfutils INTERFACE ${mlc_elfutils_archives} Threads::Threads)
  add_library(mlc::elf ALIAS mlc_elfutils)
  add_library(mlc::dw ALIAS mlc_elfutils)
else()
  add_library(mlc::elf ALIAS PkgConfig::LIBELF)
  add_library(mlc::dw ALIAS PkgConfig::LIBDW)
endif()

find_path(LIBIBERTY_INCLUDE_DIR demangle.h PATH_SUFFIXES libiberty REQUIRED)
find_library(LIBIBERTY_LIBRARY NAMES libiberty.a iberty REQUIRED)
add_library(mlc_iberty STATIC IMPORTED GLOBAL)
set_target_properties(mlc_iberty PROPERTIES IMPORTED_LOCATION ${LIBIBERTY_LIBRARY}
                                            INTERFACE_INCLUDE_DIRECTORIES ${LIBIBERTY_INCLUDE_DIR})
add_library(mlc::iberty ALIAS mlc_iberty)

find_package(nlohmann_json 3.10 REQUIRED CONFIG)
find_package(CLI11 REQUIRED CONFIG)
find_package(fmt REQUIRED CONFIG)
find_package(TBB REQUIRED CONFIG)
