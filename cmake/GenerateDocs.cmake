# cmake -DMEMPLAN=... -DREPLAY=... -DOUT=... -P GenerateDocs.cmake: the manual pages and completions, printed by
# the programs themselves (memplan manpage / completion SHELL; memplan-replay --manpage / --completion SHELL).
file(MAKE_DIRECTORY ${OUT})
foreach(job "MEMPLAN;manpage;memplan.1" "MEMPLAN;completion bash;memplan.bash" "MEMPLAN;completion zsh;_memplan"
            "REPLAY;--manpage;memplan-replay.1" "REPLAY;--completion bash;memplan-replay.bash"
            "REPLAY;--completion zsh;_memplan-replay")
  list(GET job 0 program)
  list(GET job 1 args)
  list(GET job 2 file)
  separate_arguments(args)
  execute_process(COMMAND ${${program}} ${args} OUTPUT_FILE ${OUT}/${file} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${${program}} ${args} failed (${rc})")
  endif()
endforeach()
