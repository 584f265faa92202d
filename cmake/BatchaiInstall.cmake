# What `cmake --install <build> [--prefix P]` puts where (a Debian-style layout under any prefix),
# and the Debian package CPack makes of it (cpack --config <build>/CPackConfig.cmake).
#
#   bin/batchai                                  the executable (no RPATH: it needs none)
#   lib/batchai/libbatchai_{trainer,serve}.so    its plugins (BATCHAI_INSTALL_PLUGINDIR; the CUDA
#   lib/batchai/libbatchai_cuda.so               one in the `cuda` component, built with CUDA only)
#   share/batchai/{schemas,examples}/            job schemas, the tutorial and example job files
#   share/doc/batchai/                           README, docs/, the licence (as `copyright`)
#
# Components: `runtime` (all of the above), `cuda` (the CUDA plugin), `deb` (what Debian's
# policy asks of a package only: the compressed changelog).

install(TARGETS batchai RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
if(NOT CMAKE_INSTALL_BINDIR STREQUAL "bin")
  message(FATAL_ERROR "CMAKE_INSTALL_BINDIR must be bin: the executable finds its plugins in ../lib/batchai")
endif()

install(DIRECTORY schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/batchai/schemas COMPONENT runtime)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/batchai/examples COMPONENT runtime
        USE_SOURCE_PERMISSIONS)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright COMPONENT runtime)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime
        FILES_MATCHING PATTERN "*.md" PATTERN "*.csv" PATTERN "*.svg")

# Who builds the package answers for it: set BATCHAI_DEB_MAINTAINER to a real address.
set(BATCHAI_DEB_MAINTAINER "batchai authors <batchai@example.org>" CACHE STRING
    "Maintainer field of the Debian package (and its changelog)")

# Debian's changelog.gz (policy 12.7), compressed reproducibly (gzip -n: no name, no time).
set(BATCHAI_CHANGELOG ${PROJECT_BINARY_DIR}/packaging/changelog)
file(WRITE ${BATCHAI_CHANGELOG}.in
     "batchai (${PROJECT_VERSION}) unstable; urgency=low\n\n"
     "  * Built from the batchai source tree (see git log for the changes).\n\n"
     " -- ${BATCHAI_DEB_MAINTAINER}  Thu, 01 Jan 2026 00:00:00 +0000\n")
configure_file(${BATCHAI_CHANGELOG}.in ${BATCHAI_CHANGELOG} COPYONLY)
add_custom_command(OUTPUT ${BATCHAI_CHANGELOG}.gz
                   COMMAND gzip -9nc ${BATCHAI_CHANGELOG} > ${BATCHAI_CHANGELOG}.gz
                   DEPENDS ${BATCHAI_CHANGELOG} VERBATIM)
add_custom_target(batchai_changelog ALL DEPENDS ${BATCHAI_CHANGELOG}.gz)
install(FILES ${BATCHAI_CHANGELOG}.gz DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT deb)

# The Debian package: batchai_<version>_amd64.deb of the runtime component, its Depends read
# from what the binaries link (dpkg-shlibdeps). The CUDA plugin stays out: cuDNN and NCCL come
# from NVIDIA's installers, not Debian packages, so no package could declare them; install it
# with `cmake --install <build> --component cuda`.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME batchai)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "batchai authors")
set(CPACK_PACKAGE_CONTACT "${BATCHAI_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "local re-creation of the Azure Batch AI command line")
set(CPACK_PACKAGE_DESCRIPTION
    "batchai brings back the retired Azure Batch AI command line (az batchai)\n"
    "as one executable that runs offline: workspaces, clusters, experiments,\n"
    "file servers and jobs against a local simulated control plane whose state\n"
    "lives in SQLite. Jobs really run: shell commands, MPI programs and a\n"
    "built-in Horovod-style CIFAR-10 trainer. batchai serve serves the Batch AI\n"
    "REST API over HTTPS for az and the Azure SDK.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL runtime deb)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_NAME batchai)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Not linked, but run: mpirun for MPI jobs, Slurm's client for Slurm clusters (bash, which every
# job runs, is essential: never declared).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client, azure-cli")
include(CPack)

# systemd units of `batchai serve` (system and user), their ExecStart the installed executable:
# written at install time, when the prefix is known (cmake --install --prefix, cpack's /usr).
set(BATCHAI_UNITS ${PROJECT_BINARY_DIR}/packaging/systemd)
foreach(unit system user)
  set(source ${PROJECT_SOURCE_DIR}/packaging/systemd/batchai-serve.service.in)
  if(unit STREQUAL user)
    set(source ${PROJECT_SOURCE_DIR}/packaging/systemd/batchai-serve.user.service.in)
  endif()
  install(CODE "set(BATCHAI_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
                configure_file(\"${source}\" \"${BATCHAI_UNITS}/${unit}/batchai-serve.service\" @ONLY)"
          COMPONENT runtime)
  install(FILES ${BATCHAI_UNITS}/${unit}/batchai-serve.service DESTINATION lib/systemd/${unit} COMPONENT runtime)
endforeach()

# The man page and the bash completion, written from the built executable's help by the walk
# that writes docs/cli.md (docs/gen-cli-doc.sh), so the three never drift; installed where
# Debian puts them.
set(BATCHAI_GENERATED ${PROJECT_BINARY_DIR}/packaging)
add_custom_command(OUTPUT ${BATCHAI_GENERATED}/man/batchai.1.gz
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${BATCHAI_GENERATED}/man
                   COMMAND bash ${PROJECT_SOURCE_DIR}/docs/gen-cli-doc.sh --format man $<TARGET_FILE:batchai>
                           > ${BATCHAI_GENERATED}/man/batchai.1
                   COMMAND gzip -9nf ${BATCHAI_GENERATED}/man/batchai.1
                   DEPENDS batchai ${PROJECT_SOURCE_DIR}/docs/gen-cli-doc.sh
                   COMMENT "Writing batchai(1) from the command tree" VERBATIM)
add_custom_command(OUTPUT ${BATCHAI_GENERATED}/completion/batchai
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${BATCHAI_GENERATED}/completion
                   COMMAND bash ${PROJECT_SOURCE_DIR}/docs/gen-cli-doc.sh --format completion $<TARGET_FILE:batchai>
                           > ${BATCHAI_GENERATED}/completion/batchai.tmp
                   COMMAND ${CMAKE_COMMAND} -E rename ${BATCHAI_GENERATED}/completion/batchai.tmp
                           ${BATCHAI_GENERATED}/completion/batchai
                   DEPENDS batchai ${PROJECT_SOURCE_DIR}/docs/gen-cli-doc.sh
                           ${PROJECT_SOURCE_DIR}/packaging/completion/batchai.bash
                   COMMENT "Writing the bash completion from the command tree" VERBATIM)
add_custom_target(batchai_man_and_completion ALL
                  DEPENDS ${BATCHAI_GENERATED}/man/batchai.1.gz ${BATCHAI_GENERATED}/completion/batchai)
install(FILES ${BATCHAI_GENERATED}/man/batchai.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
install(FILES ${BATCHAI_GENERATED}/completion/batchai DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        COMPONENT runtime)
