#!/usr/bin/env bash
# The man page and the bash completion against the binary's own help: every command
# `loopwarden help` lists, and every flag each `loopwarden help COMMAND` lists, is in
# the man page and offered by completion; groff reads the page without a warning.
set -euo pipefail
root=$1 bin=$2
page=$root/deploy/man/loopwarden.1
fail=0

commands=$("$bin" help | sed -n '/^commands:/,/^$/p' | sed -nE 's/^  ([a-z]+) .*/\1/p')
[[ $(wc -w <<<"$commands") -ge 7 ]] || { echo "FAIL: could not read the commands from 'loopwarden help'"; exit 1; }

if command -v groff >/dev/null; then
  warnings=$(groff -man -ww -z "$page" 2>&1 || true)
  [[ -z $warnings ]] || { echo "FAIL: groff warns about the man page:"; echo "$warnings"; fail=1; }
else
  echo "note: groff is not installed; the page's syntax is not checked"
fi

# shellcheck disable=SC1091
source "$root/deploy/completion/loopwarden.bash"
complete_words() {  # complete_words WORD... : what completion offers for the last word
  COMP_WORDS=(loopwarden "$@")
  COMP_CWORD=$#
  COMPREPLY=()
  _loopwarden
  echo " ${COMPREPLY[*]} "
}

offered=$(complete_words "")
for c in $commands; do
  grep -qE "^\.B $c\$" "$page" || { echo "FAIL: man page: no entry for the command '$c'"; fail=1; }
  [[ $offered == *" $c "* ]] || { echo "FAIL: completion does not offer the command '$c'"; fail=1; }
  flags=$("$bin" help "$c" | grep -oE -- '--[a-z][a-z-]+' | sort -u)
  cflags=$(complete_words "$c" "--")
  for f in $flags; do
    escaped=${f//-/\\\\-}
    grep -qE -- "$escaped" "$page" || { echo "FAIL: man page: '$c' flag $f is not described"; fail=1; }
    [[ $cflags == *" $f "* ]] || { echo "FAIL: completion does not offer $f after '$c'"; fail=1; }
  done
done
# Values: the completion offers --by's fields and the log levels the help names.
[[ $(complete_words report --by "") == *" owner "* ]] || { echo "FAIL: completion of report --by"; fail=1; }
[[ $(complete_words --log-level "") == *" debug "* ]] || { echo "FAIL: completion of --log-level"; fail=1; }
# After a flag's value the command is still found.
[[ $(complete_words --log-level warn plan --) == *" --json "* ]] || { echo "FAIL: command after a global flag"; fail=1; }
[[ $fail -eq 0 ]] && echo "OK: $(wc -w <<<"$commands") commands, their flags in the man page and in completion"
exit $fail
