#!/usr/bin/env bash
# The .deb: CPack builds it from the install rules, its control data is right, and it
# installs with dpkg on this machine: binary, unit (verified by systemd-analyze, neither
# enabled nor started), conffile, man page and completion; then it is purged again.
# Installing needs root and dpkg; exit 77 (skipped) otherwise, or if a loopwarden
# package this test did not install is present.
set -euo pipefail
root=$1 build=$2
for tool in cpack dpkg dpkg-deb dpkg-shlibdeps; do
  command -v $tool >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
# The package is a release artifact: a sanitizer build's binary is not what ships.
if grep -q '^LOOPWARDEN_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "SKIP: this is a sanitizer build; the package is tested from the plain build"
  exit 77
fi
tmp=$(mktemp -d)
installed=0
cleanup() {
  if [[ $installed -eq 1 ]]; then dpkg --purge loopwarden >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -B "$tmp" >"$tmp/cpack.out" 2>&1) ||
  { cat "$tmp/cpack.out"; echo "FAIL: cpack"; exit 1; }
deb=$(ls "$tmp"/loopwarden_*.deb 2>/dev/null | head -1)
[[ -n $deb ]] || { cat "$tmp/cpack.out"; echo "FAIL: cpack wrote no loopwarden_*.deb"; exit 1; }
echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"

info=$(dpkg-deb --info "$deb")
for want in "Package: loopwarden" "Section: admin" "Depends: " "libsqlite3-0" "libssl3" "libyaml-cpp" "Recommends: libpq5"; do
  grep -q -- "$want" <<<"$info" || { echo "$info"; echo "FAIL: control data lacks '$want'"; exit 1; }
done
[[ $(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles) == /etc/loopwarden/loopwarden.yaml ]] ||
  { echo "FAIL: /etc/loopwarden/loopwarden.yaml is not a conffile"; exit 1; }
contents=$(dpkg-deb --contents "$deb")
for f in ./usr/bin/loopwarden ./usr/lib/systemd/system/loopwarden.service ./etc/loopwarden/loopwarden.yaml \
         ./usr/share/man/man1/loopwarden.1 ./usr/share/bash-completion/completions/loopwarden \
         ./usr/share/loopwarden/prometheus/loopwarden.rules.yml; do
  grep -q " $f\$" <<<"$contents" || { echo "FAIL: the package does not ship $f"; exit 1; }
done

if [[ $(id -u) -ne 0 ]]; then echo "SKIP: installing the package needs root; its contents were checked"; exit 77; fi
if dpkg-query -W -f='${Status}' loopwarden 2>/dev/null | grep -q "install ok installed"; then
  echo "SKIP: a loopwarden package is already installed here; not replacing it"
  exit 77
fi
installed=1
dpkg -i "$deb" >"$tmp/dpkg.out" 2>&1 || { cat "$tmp/dpkg.out"; echo "FAIL: dpkg -i"; exit 1; }
dpkg-query -W -f='${Status} ${Version}\n' loopwarden | grep -q "install ok installed 0.1.0" ||
  { echo "FAIL: dpkg does not list loopwarden as installed"; exit 1; }
/usr/bin/loopwarden version | grep -q "^loopwarden 0.1.0" || { echo "FAIL: installed binary does not run"; exit 1; }
unit=/usr/lib/systemd/system/loopwarden.service
grep -q '^ExecStart=/usr/bin/loopwarden run --config /etc/loopwarden/loopwarden.yaml$' $unit ||
  { echo "FAIL: the installed unit runs something else"; exit 1; }
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify $unit 2>"$tmp/verify.out" || true
  if grep -v -e '^$' "$tmp/verify.out" | grep -q .; then cat "$tmp/verify.out"; echo "FAIL: systemd-analyze verify"; exit 1; fi
fi
[[ ! -e /etc/systemd/system/multi-user.target.wants/loopwarden.service ]] ||
  { echo "FAIL: the package enabled the unit"; exit 1; }
# The shipped configuration is valid with the credentials the unit loads.
mkdir -p "$tmp/creds"
printf 'bt-key' >"$tmp/creds/baseten"
printf 'https://hooks.slack.com/services/T0/B0/x' >"$tmp/creds/slack-webhook-url"
printf 'token' >"$tmp/creds/admin-token"
CREDENTIALS_DIRECTORY=$tmp/creds STATE_DIRECTORY=$tmp/state /usr/bin/loopwarden check >"$tmp/check.out" 2>&1 ||
  { cat "$tmp/check.out"; echo "FAIL: the installed configuration does not pass check"; exit 1; }
dpkg --purge loopwarden >"$tmp/purge.out" 2>&1 || { cat "$tmp/purge.out"; echo "FAIL: dpkg --purge"; exit 1; }
installed=0
[[ ! -e /usr/bin/loopwarden && ! -e $unit && ! -e /etc/loopwarden/loopwarden.yaml ]] ||
  { echo "FAIL: purge left files behind"; exit 1; }
echo "OK: $(basename "$deb") installs, its unit verifies, check passes on its configuration, purge removes it"
