# Warnings as errors for memplan's own code; applied per target with memplan_target_options().
add_library(memplan_options INTERFACE)
target_compile_options(memplan_options INTERFACE -Wall -Wextra -Werror -Wno-error=deprecated-declarations
                                                 # GCC 12 at -O3 reports false -Wrestrict positives in std::string
                                                 # concatenation (GCC bug 105329).
                                                 $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wno-restrict>)
if(MEMPLAN_SANITIZE OR MEMPLAN_FUZZ)
  # Instrumented builds run searches about ten times slower: budgets given in seconds buy them less work
  # (work_budget.h), so that their tests take about the time a release build's do.
  target_compile_definitions(memplan_options INTERFACE MEMPLAN_INSTRUMENTED=1)
endif()
if(MEMPLAN_SANITIZE)
  target_compile_options(memplan_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                   -fno-sanitize-recover=undefined)
  target_link_options(memplan_options INTERFACE -fsanitize=address,undefined)
endif()
if(MEMPLAN_FUZZ)
  # libFuzzer coverage in memplan's code, with both sanitizers; the fuzz targets link the fuzzer's main (fuzz/).
  target_compile_options(memplan_options INTERFACE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                                                   -fno-sanitize-recover=undefined)
  target_link_options(memplan_options INTERFACE -fsanitize=address,undefined)
endif()
