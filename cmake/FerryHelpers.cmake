# ferry_cc_library(), ferry_cc_test(), ferry_cc_binary(): every target of ours goes through these,
# so warnings, sanitizers and include paths are set in one place.

set(FERRY_WARNINGS
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor -Woverloaded-virtual
    -Wimplicit-fallthrough -Werror
    # Designated initializers (CONVENTIONS.md) leave fields at their defaults on purpose.
    -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # Only the asan preset uses clang. Its -Wconversion also implies -Wsign-conversion, which
  # g++ 12 (the compiler our warning set is written for) leaves out for C++.
  list(APPEND FERRY_WARNINGS -Wno-sign-conversion)
endif()
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # In a unity build each .cc is #included into a batch file, where GCC takes it for a header
  # and warns of any class whose member's type is in the .cc's anonymous namespace (a pimpl).
  list(APPEND FERRY_WARNINGS -Wno-subobject-linkage)
endif()
if(FERRY_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 reports false maybe-uninitialized warnings inside libstdc++ (std::regex,
  # std::function) once sanitizer instrumentation changes inlining (a CI run failed on one).
  list(APPEND FERRY_WARNINGS -Wno-maybe-uninitialized)
endif()
if(CMAKE_BUILD_TYPE STREQUAL "Release" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # At -O3, GCC 12 reports false restrict / maybe-uninitialized warnings inside libstdc++'s
  # std::string and in varint readers (the release preset did not build with -Werror).
  list(APPEND FERRY_WARNINGS -Wno-restrict -Wno-maybe-uninitialized)
endif()

function(ferry_apply_common target)
  target_compile_options(${target} PRIVATE ${FERRY_WARNINGS})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  if(FERRY_FAILPOINTS)
    target_compile_definitions(${target} PUBLIC FERRY_FAILPOINTS_ENABLED=1)
  endif()
endfunction()

# ferry_cc_library(NAME module SRCS a.cc b.cc DEPS ferry_base PkgConfig::x)
# Creates the static library ferry_<NAME>.
function(ferry_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  set(target ferry_${ARG_NAME})
  add_library(${target} STATIC ${ARG_SRCS})
  ferry_apply_common(${target})
  target_link_libraries(${target} PUBLIC ${ARG_DEPS})
endfunction()

# ferry_cc_test(NAME module_test SRCS x_test.cc DEPS ferry_module LABELS unit [TIMEOUT 120]
#               [WHOLE_BINARY])
# One GoogleTest binary; each TEST becomes a CTest test carrying LABELS. WHOLE_BINARY registers
# the binary as one CTest test instead: for suites that share one costly server (a radosgw
# cluster, ~2-3 s of CPU to start) across all their tests, which one process per TEST would
# start again for each.
function(ferry_cc_test)
  if(NOT FERRY_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "WHOLE_BINARY" "NAME;TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${ARG_NAME} ${ARG_SRCS})
  ferry_apply_common(${ARG_NAME})
  # The test files themselves are compiled without optimization: they made up nearly half of a
  # cold dev build's compile time (GoogleTest's macros, the tests' templates), and -O0 takes 40 %
  # off that, ~80 s of `make test` on 2 cores, for ~10 s more of unit-test run time. The code
  # under test is in the libraries, built at the preset's level. Not under sanitizers: there the
  # unit tests ran 48 s longer at -O0, as much as the build saved.
  if(NOT FERRY_SANITIZE)
    target_compile_options(${ARG_NAME} PRIVATE -O0)
  endif()
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${ARG_NAME} PRIVATE
      FERRY_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      FERRY_TESTDATA_DIR="${PROJECT_SOURCE_DIR}/../shared/testdata"
      FERRY_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if("unit" IN_LIST ARG_LABELS)
    # The `unit_tests` target (top-level CMakeLists.txt) builds these and nothing else.
    set_property(GLOBAL APPEND PROPERTY FERRY_UNIT_TESTS ${ARG_NAME})
  endif()
  # CTest starts the costliest tests first. A fresh checkout has no timing history, and the
  # torture tests (minutes each, numbered last) would otherwise start after everything else and
  # run on alone at the end of `make test`; integration tests take seconds, unit tests milliseconds.
  if("fault" IN_LIST ARG_LABELS)
    set(cost 1000)
  elseif("integration" IN_LIST ARG_LABELS)
    set(cost 10)
  else()
    set(cost 0)
  endif()
  if(ARG_WHOLE_BINARY)
    add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(${ARG_NAME} PROPERTIES
        LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} COST ${cost})
    return()
  endif()
  gtest_discover_tests(${ARG_NAME}
      DISCOVERY_MODE PRE_TEST
      PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} COST ${cost}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endfunction()

# ferry_cc_test_suite(NAME suite SRCS suite.cc DEPS ...)
# The TEST_Ps of a conformance suite (CONVENTIONS.md: one suite per interface) as an object
# library, linked into every test binary that instantiates it for its own implementations
# (INSTANTIATE_TEST_SUITE_P there). Objects, not an archive: the linker would drop the suite's
# registrations, which nothing references by name. Compiled like the tests (-O0).
function(ferry_cc_test_suite)
  if(NOT FERRY_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  set(target ferry_${ARG_NAME})
  add_library(${target} OBJECT ${ARG_SRCS})
  ferry_apply_common(${target})
  if(NOT FERRY_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
  target_link_libraries(${target} PUBLIC ${ARG_DEPS} GTest::gtest GTest::gmock)
  target_compile_definitions(${target} PRIVATE
      FERRY_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      FERRY_TESTDATA_DIR="${PROJECT_SOURCE_DIR}/../shared/testdata"
      FERRY_BINARY_DIR="${PROJECT_BINARY_DIR}")
endfunction()

# ferry_cc_binary(NAME tool SRCS main.cc DEPS ...)
function(ferry_cc_binary)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  ferry_apply_common(${ARG_NAME})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
endfunction()
