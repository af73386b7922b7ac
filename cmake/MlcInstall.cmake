# Install layout (bin/, lib/, include/, lib/cmake/MusaLinkcheck/, share/man/man1/) and the .deb.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(musa_stubs PROPERTIES EXPORT_NAME stubs)
install(TARGETS musa-linkcheck musa-stubgen musa_stubs EXPORT MusaLinkcheckTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(MLC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/MusaLinkcheck)
install(EXPORT MusaLinkcheckTargets NAMESPACE MusaLinkcheck:: DESTINATION ${MLC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/MusaLinkcheckConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/MusaLinkcheckConfig.cmake INSTALL_DESTINATION ${MLC_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/MusaLinkcheckConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/MusaLinkcheckConfig.cmake ${PROJECT_BINARY_DIR}/MusaLinkcheckConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/MusaLinkcheckFunctions.cmake ${PROJECT_SOURCE_DIR}/cmake/MusaStubgenStep.cmake
        DESTINATION ${MLC_CMAKE_DIR})
install(FILES ${MLC_MAN_DIR}/musa-linkcheck.1 ${MLC_MAN_DIR}/musa-stubgen.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/user-guide.md
              ${PROJECT_SOURCE_DIR}/docs/classifications.md ${PROJECT_SOURCE_DIR}/docs/contract.md
              ${PROJECT_SOURCE_DIR}/docs/report.schema.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# cpack -G DEB: a Debian package of the same tree, installed under /usr.
set(CPACK_PACKAGE_NAME musa-linkcheck)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "find, explain and fix undefined symbols of ported PyTorch kernel libraries")
set(CPACK_PACKAGE_CONTACT "MusaLinkcheck developers <musa-linkcheck@invalid>")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
if(TARGET mlc_elfutils)  # elfutils linked statically (MlcDependencies.cmake)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, libtbb12, libfmt9")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, libelf1, libdw1, libtbb12, libfmt9")
endif()
include(CPack)
