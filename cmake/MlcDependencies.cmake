# Locates the Debian-packaged dependencies: elfutils (libelf, libdw), libiberty (static),
# nlohmann-json, CLI11, fmt and oneTBB. Each becomes an imported target named mlc::<dep>.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
add_library(mlc::elf ALIAS PkgConfig::LIBELF)
add_library(mlc::dw ALIAS PkgConfig::LIBDW)

find_path(LIBIBERTY_INCLUDE_DIR demangle.h PATH_SUFFIXES libiberty REQUIRED)
find_library(LIBIBERTY_LIBRARY NAMES libiberty.a iberty REQUIRED)
add_library(mlc_iberty STATIC IMPORTED GLOBAL)
set_target_properties(mlc_iberty PROPERTIES IMPORTED_LOCATION ${LIBIBERTY_LIBRARY}
                                            INTERFACE_INCLUDE_DIRECTORIES ${LIBIBERTY_INCLUDE_DIR})
add_library(mlc::iberty ALIAS mlc_iberty)

find_package(nlohmann_json 3.10 REQUIRED CONFIG)
find_package(CLI11 REQUIRED CONFIG)
find_package(fmt REQUIRED CONFIG)
find_package(Threads REQUIRED)
find_package(TBB REQUIRED CONFIG)
