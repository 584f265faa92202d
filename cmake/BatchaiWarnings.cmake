# Warning flags and optional sanitizers, applied per target with batchai_target_defaults().
function(batchai_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
      -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wformat=2 -Wimplicit-fallthrough>)
  # GCC 12 reports -Wrestrict false positives inside <string> at -O2 (GCC bug 105329).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
  if(BATCHAI_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
  if(BATCHAI_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${BATCHAI_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${BATCHAI_SANITIZE})
  endif()
endfunction()

# A module library: sources from src/<module>/ (recursive), public headers in include/.
function(batchai_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(batchai_${name} STATIC ${ARG_SOURCES})
  add_library(batchai::${name} ALIAS batchai_${name})
  target_include_directories(batchai_${name}
    PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(batchai_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_target_properties(batchai_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  batchai_target_defaults(batchai_${name})
endfunction()
