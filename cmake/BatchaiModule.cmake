# Modules and their walls (docs/architecture.md). A module's public headers are reachable only
# through a folder of its own, ${PROJECT_BINARY_DIR}/walls/<module>/batchai/<module> (a link to
# include/batchai/<module>), which it exports to the targets that link it. So a module sees the
# headers of itself and of the modules it links, nothing else: an include across a missing edge
# of the module graph, or of another module's internal header (src/<module>/), fails to compile.
# tests/walls proves it.

# Stages include/batchai/<module> as <dir>/batchai/<module>; sets <out_var> to <dir>.
function(batchai_stage_public_headers module out_var)
  set(dir ${PROJECT_BINARY_DIR}/walls/${module})
  file(MAKE_DIRECTORY ${dir}/batchai)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/batchai/${module} ${dir}/batchai/${module} SYMBOLIC)
  set(${out_var} ${dir} PARENT_SCOPE)
endfunction()

# A module library batchai::<name> from src/<name>/: SOURCES relative to that folder, whose
# headers are the module's internal ones. Also batchai::<name>_internals, for white-box tests and
# benchmarks only: the module plus its internal headers, spelled as the module's sources do.
function(batchai_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(batchai_${name} STATIC ${ARG_SOURCES})
  add_library(batchai::${name} ALIAS batchai_${name})
  batchai_stage_public_headers(${name} public_dir)
  target_include_directories(batchai_${name} PUBLIC ${public_dir} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(batchai_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_target_properties(batchai_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  batchai_target_defaults(batchai_${name})

  add_library(batchai_${name}_internals INTERFACE)
  add_library(batchai::${name}_internals ALIAS batchai_${name}_internals)
  target_include_directories(batchai_${name}_internals INTERFACE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(batchai_${name}_internals INTERFACE batchai_${name} ${ARG_PRIVATE_DEPS})
endfunction()
