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

# Debian's changelog.gz (policy 12.7), compressed reproducibly (gzip -n: no name, no time).
set(BATCHAI_CHANGELOG ${PROJECT_BINARY_DIR}/packaging/changelog)
file(WRITE ${BATCHAI_CHANGELOG}.in
     "batchai (${PROJECT_VERSION}) unstable; urgency=low\n\n"
     "  * Built from the batchai source tree (see git log for the changes).\n\n"
     " -- batchai authors <batchai@localhost>  Thu, 01 Jan 2026 00:00:00 +0000\n")
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
set(CPACK_PACKAGE_CONTACT "batchai authors <batchai@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "local re-creation of the Azure Batch AI command line")
set(CPACK_PACKAGE_DESCRIPTION
    "batchai brings back the retired Azure Batch AI command line (az batchai) as one\n"
    "executable that runs offline: workspaces, clusters, experiments, file servers and jobs\n"
    "against a local simulated control plane whose state lives in SQLite. Jobs really run:\n"
    "shell commands, MPI programs and a built-in Horovod-style CIFAR-10 trainer. batchai\n"
    "serve serves the Batch AI REST API over HTTPS for az and the Azure SDK.")
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
# Not linked, but run: bash for every job, mpirun for MPI jobs, Slurm's client for Slurm clusters.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bash")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client, azure-cli")
include(CPack)
