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

# An executable-facing plugin ABI: batchai::<name> (INTERFACE) whose include folder holds only
# the given public headers of <module> (include/batchai/<module>/<header>), staged as a wall of
# their own, so that the executable sees the plugin's options and entry, nothing else.
function(batchai_plugin_api name module)
  set(dir ${PROJECT_BINARY_DIR}/walls/${name})
  file(MAKE_DIRECTORY ${dir}/batchai/${module})
  foreach(header ${ARGN})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/batchai/${module}/${header} ${dir}/batchai/${module}/${header}
         SYMBOLIC)
  endforeach()
  add_library(batchai_${name} INTERFACE)
  add_library(batchai::${name} ALIAS batchai_${name})
  target_include_directories(batchai_${name} INTERFACE ${dir})
endfunction()

# A plugin the executable dlopens on demand: a MODULE <target> (file lib<OUTPUT_NAME>.so),
# self-contained (LIBS linked in statically), every symbol hidden but its extern "C" entry,
# written beside the executable in the build tree and installed to lib/batchai/ (the two places
# src/cli/compose.cpp looks), in install COMPONENT (default runtime).
function(batchai_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME;COMPONENT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_COMPONENT)
    set(ARG_COMPONENT runtime)
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  target_link_options(${target} PRIVATE -Wl,--no-undefined -Wl,--exclude-libs,ALL)
  set_target_properties(${target} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/src/cli
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME})
  endif()
  batchai_target_defaults(${target})
  install(TARGETS ${target} LIBRARY DESTINATION ${BATCHAI_INSTALL_PLUGINDIR} COMPONENT ${ARG_COMPONENT})
endfunction()
