# SPDX-License-Identifier: Apache-2.0
# The Debian package (cpack -G DEB in the build directory). A build is for
# one Slurm release: Slurm refuses a plugin whose plugin_version is of another
# release, so the package carries the release in its version
# (slurm-jail_0.1.0+slurm24.11_amd64.deb; _arm64.deb from an arm64 build)
# and depends on that release's slurmd and libslurm. The package name stays
# slurm-jail: builds for two releases install the same files, so a node has
# one of them, and moving a node to another Slurm release is an upgrade of
# that one package.
#
# Needs SLURM_RELEASE, SLURM_VERSION_MAJOR/MINOR, SLURM_LIBRARY and
# SLURM_SONAME (cmake/SlurmRelease.cmake).

# The package that ships libslurm's soname: libslurm38 on Debian 12,
# libslurm42t64 on Debian 13 (the 64-bit time_t rename); asked of dpkg,
# guessed from the soname where dpkg does not know the file.
get_filename_component(slurm_lib_dir "${SLURM_LIBRARY}" DIRECTORY)
execute_process(COMMAND dpkg-query -S "${slurm_lib_dir}/${SLURM_SONAME}"
                OUTPUT_VARIABLE slurm_lib_owner RESULT_VARIABLE slurm_lib_owner_result
                ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(slurm_lib_owner_result EQUAL 0 AND slurm_lib_owner MATCHES "^([a-z0-9.+-]+)(:[a-z0-9]+)?: ")
    set(SLURM_LIB_PACKAGE "${CMAKE_MATCH_1}")
else()
    string(REGEX REPLACE "^libslurm\\.so\\.([0-9]+).*" "libslurm\\1" SLURM_LIB_PACKAGE
                         "${SLURM_SONAME}")
endif()

# slurmd of the same release: from MAJOR.MINOR up to, not including, the next.
math(EXPR slurm_next_minor "${SLURM_VERSION_MINOR} + 1")
if(slurm_next_minor LESS 10)
    set(slurm_next_minor "0${slurm_next_minor}")
endif()
set(slurm_next "${SLURM_VERSION_MAJOR}.${slurm_next_minor}~")

# The architecture the build is for (a cross build's, not this machine's).
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
elseif(CMAKE_SYSTEM_PROCESSOR STREQUAL "x86_64")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
else()
    message(FATAL_ERROR "no Debian architecture known for CMAKE_SYSTEM_PROCESSOR "
                        "'${CMAKE_SYSTEM_PROCESSOR}' (cmake/Package.cmake knows aarch64 and x86_64)")
endif()

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "slurm-jail")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}+slurm${SLURM_RELEASE}")
set(CPACK_PACKAGE_CONTACT "slurm-jail maintainers <slurm-jail@localhost>")
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "slurmd (>= ${SLURM_RELEASE}), slurmd (<< ${slurm_next}), ${SLURM_LIB_PACKAGE}, libpam0g")
set(CPACK_DEBIAN_PACKAGE_SECTION "admin")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION} (for Slurm ${SLURM_RELEASE})")
include(CPack)
