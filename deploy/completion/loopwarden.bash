# bash completion for loopwarden. Installed as
# /usr/share/bash-completion/completions/loopwarden; or `source` this file.
# tests/deploy/completion_test.sh checks it offers what `loopwarden help` lists.

_loopwarden() {
  local cur prev cmd i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  local commands="run plan check status report snooze version help"
  local common="--config --log-level --log-format --help"
  local clock="--time-scale --epoch --time-anchor"

  # The command is the first word that is not a flag or a flag's value.
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -c | --config | --log-level | --log-format | --since | --by | --for | --reason | --policy | --address | \
        --time-scale | --epoch | --time-anchor) ((i++)) ;;
      -*) ;;
      *) cmd=${COMP_WORDS[i]}; break ;;
    esac
  done

  case $prev in
    -c | --config) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --log-level) COMPREPLY=($(compgen -W "debug info warn error" -- "$cur")); return ;;
    --log-format) COMPREPLY=($(compgen -W "json text" -- "$cur")); return ;;
    --by)
      [[ $cmd == snooze ]] && return  # who asked: free text
      COMPREPLY=($(compgen -W "provider account kind model owner team label:" -- "$cur"))
      return ;;
    --since | --for) COMPREPLY=($(compgen -W "1h 2h 24h 7d 30d" -- "$cur")); return ;;
    --reason | --policy | --address | --time-scale | --epoch | --time-anchor) return ;;
  esac

  local flags
  case $cmd in
    "") COMPREPLY=($(compgen -W "$commands $common" -- "$cur")); return ;;
    help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
    run) flags="--once $clock" ;;
    plan) flags="--json $clock" ;;
    check) flags="--explain --schema" ;;
    status) flags="--json $clock" ;;
    report) flags="--since --by --json $clock" ;;
    snooze) flags="--for --reason --policy --by --address" ;;
    version) flags="" ;;
  esac
  COMPREPLY=($(compgen -W "$flags $common" -- "$cur"))
}
complete -F _loopwarden loopwarden
