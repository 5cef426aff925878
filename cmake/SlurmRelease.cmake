# SPDX-License-Identifier: Apache-2.0
# The Slurm release this tree is built against, from its headers
# (slurm/slurm_version.h) and libslurm:
#   SLURM_INCLUDE_DIR        where slurm/spank.h is
#   SLURM_VERSION_NUMBER     as in slurm_version.h (0xMMmmpp)
#   SLURM_RELEASE            MAJOR.MINOR, e.g. 24.11 (what plugin_version binds to)
#   SLURM_LIBRARY, SLURM_SONAME   libslurm and its soname (libslurm.so.42)
#   SLURM_JOB_CONTAINER_INTERFACE job_container (up to 25.05) or namespace (25.11 on)
find_path(SLURM_INCLUDE_DIR slurm/spank.h REQUIRED DOC "Slurm headers (Debian: libslurm-dev)")
find_library(SLURM_LIBRARY slurm REQUIRED DOC "libslurm (Debian: libslurm-dev)")

file(STRINGS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h" SLURM_VERSION_LINE
     REGEX "^#define SLURM_VERSION_NUMBER +0x[0-9a-fA-F]+")
if(NOT SLURM_VERSION_LINE MATCHES "0x([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
    message(FATAL_ERROR "cannot read SLURM_VERSION_NUMBER from ${SLURM_INCLUDE_DIR}/slurm/slurm_version.h")
endif()
math(EXPR SLURM_VERSION_MAJOR "0x${CMAKE_MATCH_1}")
math(EXPR SLURM_VERSION_MINOR "0x${CMAKE_MATCH_2}")
math(EXPR SLURM_VERSION_NUMBER "0x${CMAKE_MATCH_1}${CMAKE_MATCH_2}${CMAKE_MATCH_3}" OUTPUT_FORMAT HEXADECIMAL)
if(SLURM_VERSION_MINOR LESS 10)
    set(SLURM_RELEASE "${SLURM_VERSION_MAJOR}.0${SLURM_VERSION_MINOR}")
else()
    set(SLURM_RELEASE "${SLURM_VERSION_MAJOR}.${SLURM_VERSION_MINOR}")
endif()

# Slurm 25.11 renamed the job_container plugin type to namespace.
if(SLURM_RELEASE VERSION_GREATER_EQUAL 25.11)
    set(SLURM_JOB_CONTAINER_INTERFACE namespace)
else()
    set(SLURM_JOB_CONTAINER_INTERFACE job_container)
endif()

# The module does not link libslurm: pam_slurm_jail.so's child loads it by
# its soname, and the .deb depends on the package that ships it.
execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${SLURM_LIBRARY} OUTPUT_VARIABLE SLURM_DYNAMIC
                RESULT_VARIABLE SLURM_OBJDUMP_RESULT)
string(REGEX MATCH "SONAME +([^ \n]+)" SLURM_SONAME_LINE "${SLURM_DYNAMIC}")
set(SLURM_SONAME "${CMAKE_MATCH_1}")
if(NOT SLURM_OBJDUMP_RESULT EQUAL 0 OR NOT SLURM_SONAME MATCHES "^libslurm\\.so")
    message(FATAL_ERROR "cannot read the soname of ${SLURM_LIBRARY} with ${CMAKE_OBJDUMP}")
endif()
message(STATUS "Slurm ${SLURM_RELEASE} (${SLURM_VERSION_NUMBER}, ${SLURM_SONAME}): "
               "${SLURM_JOB_CONTAINER_INTERFACE}/slurm_jail")
