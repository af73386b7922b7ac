# Never break (issue 9): the tools must start when LD_LIBRARY_PATH puts broken or old copies of
# their own runtime first (libstdc++, libgcc_s, libtbb, libelf...) - the environment they diagnose.
# DT_RPATH, unlike DT_RUNPATH, is searched before LD_LIBRARY_PATH, and also for the dependencies of
# the tools' libraries (libtbb, libfmt need libstdc++.so.6 and carry no RUNPATH of their own), so
# one RPATH naming the directories the build linked against pins the whole runtime. The C++ runtime
# is not linked statically: libtbb and libfmt would still load libstdc++.so.6, a second copy.

# The real directories of the shared libraries that `targets` (imported, or aliases of them) name.
function(mlc_library_dirs out)
  set(dirs "")
  foreach(t IN LISTS ARGN)
    if(NOT TARGET ${t})
      continue()
    endif()
    get_target_property(aliased ${t} ALIASED_TARGET)
    if(aliased)
      set(t ${aliased})
    endif()
    set(files "")
    foreach(prop IMPORTED_LOCATION IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO
                 IMPORTED_LOCATION_NONE IMPORTED_LOCATION_NOCONFIG INTERFACE_LINK_LIBRARIES)
      get_target_property(v ${t} ${prop})
      if(v)
        list(APPEND files ${v})
      endif()
    endforeach()
    foreach(f IN LISTS files)
      if(IS_ABSOLUTE "${f}" AND EXISTS "${f}" AND f MATCHES "\\.so")
        file(REAL_PATH "${f}" real)
        get_filename_component(d "${real}" DIRECTORY)
        list(APPEND dirs "${d}")
      endif()
    endforeach()
  endforeach()
  # The compiler's own runtime, wherever this toolchain keeps it.
  foreach(lib libstdc++.so.6 libgcc_s.so.1)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${lib} OUTPUT_VARIABLE p
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(IS_ABSOLUTE "${p}" AND EXISTS "${p}")
      file(REAL_PATH "${p}" real)
      get_filename_component(d "${real}" DIRECTORY)
      list(APPEND dirs "${d}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  set(${out} ${dirs} PARENT_SCOPE)
endfunction()

# Gives `target` a DT_RPATH with those directories, the same in the build tree and installed (no
# padding for an install-time rewrite: CMake pads a build RPATH with an empty entry, i.e. the cwd).
function(mlc_pin_runtime target)
  mlc_library_dirs(dirs TBB::tbb fmt::fmt mlc::elf mlc::dw)
  set_target_properties(${target} PROPERTIES BUILD_WITH_INSTALL_RPATH ON INSTALL_RPATH "${dirs}")
  target_link_options(${target} PRIVATE -Wl,--disable-new-dtags)
endfunction()
