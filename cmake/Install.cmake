# What `cmake --install` puts in place, and the Debian package CPack makes of it (cpack -G DEB, from the build
# folder): memplan and memplan-replay, their manual pages and bash/zsh completions (generated from the command
# line definitions), libmemplan.so with its header and CMake package (find_package(memplan) -> memplan::memplan),
# the Python module, and the documentation.
include(CMakePackageConfigHelpers)

if(NOT MEMPLAN_FUZZ)
  # Manual pages and completions: the programs print them (memplan manpage, memplan completion SHELL).
  set(gen ${CMAKE_BINARY_DIR}/generated)
  set(generated ${gen}/memplan.1 ${gen}/memplan-replay.1 ${gen}/memplan.bash ${gen}/memplan-replay.bash ${gen}/_memplan
                ${gen}/_memplan-replay)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} -DMEMPLAN=$<TARGET_FILE:memplan> -DREPLAY=$<TARGET_FILE:memplan-replay> -DOUT=${gen} -P
            ${PROJECT_SOURCE_DIR}/cmake/GenerateDocs.cmake
    DEPENDS memplan memplan-replay ${PROJECT_SOURCE_DIR}/cmake/GenerateDocs.cmake
    COMMENT "Generating the manual pages and shell completions")
  add_custom_target(memplan_docs ALL DEPENDS ${generated})

  install(TARGETS memplan memplan-replay RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${gen}/memplan.1 ${gen}/memplan-replay.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${gen}/memplan.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME memplan)
  install(FILES ${gen}/memplan-replay.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
          RENAME memplan-replay)
  install(FILES ${gen}/_memplan ${gen}/_memplan-replay DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
  # The README and the pages it links, laid out as in the repository so that its links hold.
  install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
  file(GLOB doc_pages CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/docs/*.md ${CMAKE_CURRENT_SOURCE_DIR}/docs/*.json)
  install(FILES ${doc_pages} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
endif()

if(TARGET memplan_shared)
  install(TARGETS memplan_shared EXPORT memplanTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES api/include/memplan/memplan.h core/include/memplan/error.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/memplan)
  set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/memplan)
  install(EXPORT memplanTargets NAMESPACE memplan:: DESTINATION ${cmake_dir})
  configure_package_config_file(cmake/memplanConfig.cmake.in ${CMAKE_BINARY_DIR}/memplanConfig.cmake
                                INSTALL_DESTINATION ${cmake_dir})
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/memplanConfigVersion.cmake COMPATIBILITY SameMajorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/memplanConfig.cmake ${CMAKE_BINARY_DIR}/memplanConfigVersion.cmake
          DESTINATION ${cmake_dir})
endif()

# The Debian package: `cpack -G DEB` in the build folder (scripts/package). Its dependencies are what
# dpkg-shlibdeps finds the binaries need (Debian 12's libonnx1, libprotobuf32, libssl3, ...), and python3 for
# the module.
set(CPACK_PACKAGE_NAME memplan)
set(CPACK_PACKAGE_VENDOR "memplan developers")
set(CPACK_PACKAGE_CONTACT "memplan developers <memplan@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Ahead-of-time memory planner for ONNX models")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "memplan plans the memory of an ONNX model before it runs: where every tensor lives, when it is released, and "
       "at which offset of a per-device arena. It writes ONNX Runtime partition configs, and validates and replays "
       "plans. Includes the C++ library (memplan::memplan) and the Python module.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)  # the build keeps its debug information; the package does not
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.11)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "man-db, bash-completion")
include(CPack)
