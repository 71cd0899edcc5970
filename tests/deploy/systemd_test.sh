#!/usr/bin/env bash
# The systemd unit: `systemd-analyze verify` passes, `systemd-analyze security
# --offline=true` rates it 2.5 or better, and `cmake --install` lays out the binary,
# the unit and the example configuration. Exit 77 (skipped) without systemd-analyze.
set -euo pipefail
root=$1 build=$2
unit=$root/deploy/systemd/loopwarden.service
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed (scripts/install-deps.sh --test installs systemd)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# verify needs ExecStart's binary to exist: point it at the one just built.
sed "s|/usr/bin/loopwarden|$build/daemon/loopwarden|" "$unit" >"$tmp/loopwarden.service"
# --man=no: the man page the unit names is checked where it is installed (deb_test.sh).
systemd-analyze verify --man=no "$tmp/loopwarden.service" 2>&1 | tee "$tmp/verify.out"
if grep -v -e '^$' "$tmp/verify.out" | grep -q .; then
  echo "FAIL: systemd-analyze verify printed warnings"
  exit 1
fi
# The threshold is on systemd's internal 0-100 scale: 25 is a displayed 2.5.
systemd-analyze security --offline=true --threshold=25 "$tmp/loopwarden.service" >"$tmp/security.out" 2>&1 || {
  cat "$tmp/security.out"
  echo "FAIL: exposure above 2.5"
  exit 1
}
score=$(sed -nE 's/.*Overall exposure level for [^:]+: ([0-9.]+).*/\1/p' "$tmp/security.out")
echo "systemd-analyze security: $score ($(systemd-analyze --version | head -1))"
[[ -n $score ]] || { echo "FAIL: no exposure score in the output"; exit 1; }

# cmake --install into a staging root (the build's prefix defaults to /usr).
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
if [[ $prefix != /usr ]]; then echo "SKIP: this build installs under $prefix, not /usr"; exit 77; fi
DESTDIR=$tmp/root cmake --install "$build" >"$tmp/install.out"
for f in usr/bin/loopwarden usr/lib/systemd/system/loopwarden.service etc/loopwarden/loopwarden.yaml \
         usr/share/loopwarden/prometheus/loopwarden.rules.yml usr/share/loopwarden/grafana/dashboards/loopwarden.json; do
  [[ -e $tmp/root/$f ]] || { cat "$tmp/install.out"; echo "FAIL: cmake --install did not install /$f"; exit 1; }
done
grep -q '^ExecStart=/usr/bin/loopwarden run --config /etc/loopwarden/loopwarden.yaml$' \
  "$tmp/root/usr/lib/systemd/system/loopwarden.service" || { echo "FAIL: installed unit has other paths"; exit 1; }
grep -q '^Documentation=man:loopwarden(1)' "$tmp/root/usr/lib/systemd/system/loopwarden.service" ||
  { echo "FAIL: the unit does not point at the man page"; exit 1; }
for f in usr/share/man/man1/loopwarden.1 usr/share/bash-completion/completions/loopwarden; do
  [[ -e $tmp/root/$f ]] || { echo "FAIL: cmake --install did not install /$f"; exit 1; }
done

# Another prefix at install time: the unit follows it and nothing lands outside it.
cmake --install "$build" --prefix "$tmp/opt" >"$tmp/install-opt.out"
unit_opt=$tmp/opt/lib/systemd/system/loopwarden.service
grep -q "^ExecStart=$tmp/opt/bin/loopwarden run --config $tmp/opt/etc/loopwarden/loopwarden.yaml\$" "$unit_opt" ||
  { grep ExecStart "$unit_opt"; echo "FAIL: --prefix $tmp/opt: the unit does not run the installed binary and config"; exit 1; }
[[ -e $tmp/opt/etc/loopwarden/loopwarden.yaml && -x $tmp/opt/bin/loopwarden ]] ||
  { echo "FAIL: --prefix did not install bin/ and etc/ under the prefix"; exit 1; }
outside=$(sed -nE 's/^-- (Installing|Up-to-date): //p' "$tmp/install-opt.out" | grep -v "^$tmp/opt/" || true)
[[ -z $outside ]] || { echo "FAIL: --prefix $tmp/opt wrote outside it:"; echo "$outside"; exit 1; }

# The installed example configuration is valid, with the credentials the unit loads.
mkdir -p "$tmp/creds"
printf 'bt-key' >"$tmp/creds/baseten"
printf 'https://hooks.slack.com/services/T0/B0/x' >"$tmp/creds/slack-webhook-url"
printf 'token' >"$tmp/creds/admin-token"
CREDENTIALS_DIRECTORY=$tmp/creds STATE_DIRECTORY=/var/lib/loopwarden \
  "$build/daemon/loopwarden" check --config "$tmp/root/etc/loopwarden/loopwarden.yaml"
echo "OK: unit verified, exposure $score, install layout complete, --prefix followed"
