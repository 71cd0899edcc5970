#!/usr/bin/env bash
# Fails when a module includes a header from a module it must not depend on
# (shared/DESIGN.md: core <- net <- providers, core <- policies, core <- store,
# core <- exporters, policies <- config, sim -> net, core; reconcile -> everything but sim
# and daemon; daemon -> everything; nothing includes daemon/),
# or when Beast leaks out of net/'s .cc files (it is slow to compile).
set -u
root=${1:-.}
cd "$root" || exit 2
declare -A allowed=(
  [core]="core"
  [net]="core net"
  [providers]="core net providers"
  [policies]="core policies"
  [store]="core store"
  [exporters]="core exporters"
  [config]="core policies config"
  [reconcile]="core net providers policies store exporters config reconcile"
  [sim]="core net sim"
  [daemon]="core net providers policies store exporters config reconcile daemon"
)
modules="core net providers policies store exporters config reconcile sim daemon"
fail=0
for m in $modules; do
  [ -d "$m" ] || continue
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(sed -E 's/.*#include *"([a-z_]+)\/.*/\1/' <<<"$line")
    case " $modules " in *" $inc "*) ;; *) continue ;; esac
    if [[ " ${allowed[$m]} " != *" $inc "* ]]; then
      echo "layering: $file includes $inc/ but $m may only use: ${allowed[$m]}"
      fail=1
    fi
  done < <(grep -rnE '^\s*#\s*include\s*"[a-z_]+/' "$m" --include='*.h' --include='*.cc' | sed -E 's/^([^:]+):[0-9]+:/\1:/')
done
# Beast stays inside net/ implementation files, never in a header anyone else includes.
beast=$(grep -rlE '#\s*include\s*<boost/beast' core net providers policies store exporters config reconcile sim daemon 2>/dev/null |
  grep -vE '^net/[a-z_]+\.cc$' || true)
if [ -n "$beast" ]; then
  echo "layering: Beast included outside net/*.cc: $beast"
  fail=1
fi
if [ $fail -eq 0 ]; then echo "layering: ok"; fi
exit $fail
