# cmake/BuildCommit.cmake, the commit `ferry --version` names, in the cases a clean clone and a
# tarball meet (ctest build_commit_test):
#   cmake -DSOURCE_DIR=<this tree> -DWORK_DIR=<scratch> -P build_commit_test.cmake
find_program(git git)
set(script ${SOURCE_DIR}/cmake/BuildCommit.cmake)
set(out ${WORK_DIR}/build_commit_test.cc)

function(expect_commit expected)  # ARGN: -D options for the script
  file(REMOVE ${out})
  execute_process(COMMAND ${CMAKE_COMMAND} -DOUTPUT=${out} ${ARGN} -P ${script}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "BuildCommit.cmake ${ARGN}: exit ${rc}")
  endif()
  file(READ ${out} text)
  if(NOT text MATCHES "return \"${expected}\";")
    message(FATAL_ERROR "BuildCommit.cmake ${ARGN}: expected \"${expected}\", wrote:\n${text}")
  endif()
endfunction()

# A tarball: no .git anywhere above it.
set(tarball ${WORK_DIR}/tarball)
file(REMOVE_RECURSE ${tarball})
file(MAKE_DIRECTORY ${tarball})
expect_commit("unknown" -DSOURCE_DIR=${tarball} -DGIT=${git})
# No git program.
expect_commit("unknown" -DSOURCE_DIR=${SOURCE_DIR} -DGIT=git-NOTFOUND)
# Given by hand (FERRY_BUILD_COMMIT), e.g. by whoever made the tarball; odd characters tamed.
expect_commit("0123456789ab" -DSOURCE_DIR=${tarball} -DCOMMIT=0123456789ab)
expect_commit("v1\\.2_rc_1" -DSOURCE_DIR=${tarball} "-DCOMMIT=v1.2 rc\"1")
if(git)
  execute_process(COMMAND ${git} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    # This checkout: its HEAD, with or without -dirty.
    expect_commit("${head}(-dirty)?" -DSOURCE_DIR=${SOURCE_DIR} -DGIT=${git})
    # A tree unpacked inside another checkout must not take that checkout's commit.
    expect_commit("unknown" -DSOURCE_DIR=${SOURCE_DIR}/docs -DGIT=${git})
  endif()
endif()
file(REMOVE_RECURSE ${tarball})
file(REMOVE ${out})
message(STATUS "build_commit_test: ok")
