# The ctest deploy_recipes (deploy/check_recipes.py): every flag the deploy
# recipes give tilecd and tilec-worker is one of theirs, every tilecd of the
# fleet recipes passes the --redis flags the fleet e2e test runs with, the
# Prometheus rules check and pass their unit tests (promtool, skipped where
# it is missing), the YAML parses and its references resolve (PyYAML), and
# the front door (deploy/check_front_door.py): every default recipe runs
# tilecd on loopback behind HAProxy with deploy/haproxy/tilecd.cfg, which
# `haproxy -c` accepts (skipped where haproxy is missing). Include it once
# the targets exist:
#
#   include(${PROJECT_SOURCE_DIR}/deploy/recipes.cmake)
if(TARGET tilecd AND TARGET tilec-worker)
  find_package(Python3 COMPONENTS Interpreter)
  find_program(TILEC_PROMTOOL promtool)
  if(Python3_Interpreter_FOUND)
    set(TILEC_RECIPES_PROMTOOL "")
    if(TILEC_PROMTOOL)
      set(TILEC_RECIPES_PROMTOOL --promtool ${TILEC_PROMTOOL})
    endif()
    add_test(NAME deploy_recipes
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/deploy/check_recipes.py
        --tilecd $<TARGET_FILE:tilecd> --worker $<TARGET_FILE:tilec-worker>
        --fleet-test ${PROJECT_SOURCE_DIR}/tests/e2e/fleet_e2e_test.cc
        ${TILEC_RECIPES_PROMTOOL})
    set_tests_properties(deploy_recipes PROPERTIES TIMEOUT 120)
  endif()
endif()
