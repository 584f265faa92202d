
# The function behind the tables above (packaging/completion/batchai.bash, appended by
# docs/gen-cli-doc.sh). The command is the words that are subcommands, from the start; after an
# option with fixed values, those values; after an option naming a resource, the names the store
# holds (`batchai __complete-names`, read-only), scoped by the -g/-w/-e given on the line (or
# $AZURE_DEFAULTS_GROUP); otherwise options after a '-', subcommands, or files.

# _batchai_resource <command> <option>: sets _batchai_kind to the kind of resource <option> names
# in <command> ("batchai cluster show"), or to nothing (a variable, not output: no subshell).
_batchai_resource() {
  _batchai_kind=""
  case "$2" in
    -g | --resource-group) _batchai_kind=groups ;;
    -w | --workspace) _batchai_kind=workspaces ;;
    -e | --experiment) _batchai_kind=experiments ;;
    -c | --cluster) _batchai_kind=clusters ;;
    -j | --job) _batchai_kind=jobs ;;
    --nfs) _batchai_kind=file-servers ;;
    --account-name | --storage-account-name) _batchai_kind=storage-accounts ;;
    -n | --name)
      case "$1" in
        "batchai group "*) _batchai_kind=groups ;;
        "batchai workspace "*) _batchai_kind=workspaces ;;
        "batchai experiment "*) _batchai_kind=experiments ;;
        "batchai cluster "*) _batchai_kind=clusters ;;
        "batchai file-server "*) _batchai_kind=file-servers ;;
        "batchai job "*) _batchai_kind=jobs ;;
        "batchai storage account "*) _batchai_kind=storage-accounts ;;
      esac ;;
  esac
}

_batchai() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" command=batchai i=1 word
  (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
  [ "${COMP_WORDS[1]:-}" = batchai ] && (( COMP_CWORD > 1 )) && i=2  # `batchai batchai ...`
  while (( i < COMP_CWORD )); do
    word="${COMP_WORDS[i]}"
    [[ " ${_batchai_subs[$command]:-} " == *" $word "* ]] || break
    command="$command $word"
    i=$(( i + 1 ))
  done
  COMPREPLY=()
  if [[ "$prev" == -* ]] && (( i < COMP_CWORD )); then
    local choices="${_batchai_choices[$command $prev]:-}"
    if [ -n "$choices" ]; then
      mapfile -t COMPREPLY < <(compgen -W "$choices" -- "$cur")
      return 0
    fi
    local kind _batchai_kind
    _batchai_resource "$command" "$prev"
    kind="$_batchai_kind"
    if [ -n "$kind" ]; then
      local group="${AZURE_DEFAULTS_GROUP:-}" workspace="" experiment="" j exe="${COMP_WORDS[0]}"
      for (( j = 1; j + 1 < COMP_CWORD; j++ )); do
        case "${COMP_WORDS[j]}" in
          -g | --resource-group) group="${COMP_WORDS[j + 1]}" ;;
          -w | --workspace) workspace="${COMP_WORDS[j + 1]}" ;;
          -e | --experiment) experiment="${COMP_WORDS[j + 1]}" ;;
        esac
      done
      local parents=()
      if [ -n "$group" ]; then
        parents+=("$group")
        if [ -n "$workspace" ]; then
          parents+=("$workspace")
          [ -n "$experiment" ] && parents+=("$experiment")
        fi
      fi
      # The batchai being completed when typed as a path; else PATH's (never a file of the
      # current folder that happens to be called batchai).
      exe="${exe/#\~/$HOME}"
      [[ "$exe" == */* && -x "$exe" ]] || exe=batchai
      # One name a line, none with a blank or a glob character (the executable leaves them out);
      # a command substitution reads them at once, where mapfile would read a pipe byte by byte.
      local IFS=$'\n'
      COMPREPLY=($("$exe" __complete-names "$kind" "$cur" "${parents[@]}" 2> /dev/null))
      return 0
    fi
  fi
  if [[ "$cur" == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${_batchai_opts[$command]:-}" -- "$cur")
  elif [ -n "${_batchai_subs[$command]:-}" ]; then
    mapfile -t COMPREPLY < <(compgen -W "${_batchai_subs[$command]}" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
  return 0
}
complete -F _batchai batchai
