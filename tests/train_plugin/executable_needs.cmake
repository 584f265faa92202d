# cmake -DEXE=<batchai> -DPLUGIN=<libbatchai_trainer.so> -P executable_needs.cmake
# Fails when the executable's DT_NEEDED names one of the trainer's libraries: they belong to the
# trainer plugin only (loaded for `batchai train`). The plugin must name them, which proves that
# the readelf output is read right.
set(BATCHAI_TRAINER_LIBS "libdnnl|libopenblas|libmpi|libhdf5|libcurl|libgomp")

function(needed_libraries file out)
  execute_process(COMMAND readelf -d ${file} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${file} failed (${rc})")
  endif()
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]+\\]" lines "${dynamic}")
  set(names "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ".*\\[([^]]+)\\]" "\\1" name "${line}")
    list(APPEND names ${name})
  endforeach()
  set(${out} ${names} PARENT_SCOPE)
endfunction()

needed_libraries(${EXE} exe_needs)
needed_libraries(${PLUGIN} plugin_needs)
list(LENGTH exe_needs count)
message(STATUS "${EXE} needs ${count} libraries: ${exe_needs}")

set(forbidden ${exe_needs})
list(FILTER forbidden INCLUDE REGEX "^(${BATCHAI_TRAINER_LIBS})")
if(forbidden)
  message(FATAL_ERROR "the batchai executable links the trainer's libraries ${forbidden}: they belong to "
                      "libbatchai_trainer.so only (src/train/CMakeLists.txt); link batchai::train nowhere in src/cli")
endif()
foreach(lib libdnnl libmpi libhdf5 libcurl libgomp)
  set(found ${plugin_needs})
  list(FILTER found INCLUDE REGEX "^${lib}")
  if(NOT found)
    message(FATAL_ERROR "${PLUGIN} does not name ${lib} (needs: ${plugin_needs}): is the readelf output read right?")
  endif()
endforeach()
