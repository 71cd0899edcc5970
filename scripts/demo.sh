#!/usr/bin/env bash
# The main job: loopwarden against loopwarden-sim's demo fleet (sim/scenarios/demo.yaml)
# on a clock running 60x, with the embedded SQLite store. It marks what is idle, warns
# in "Slack" (a local receiver), acts when each grace ends, then prints
# `loopwarden status` and `loopwarden report`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build=build/release
echo "building loopwarden, loopwarden-sim and a Slack stand-in ($build/build.log)..."
mkdir -p $build
if ! { cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOOPWARDEN_BUILD_TESTS=ON &&
       cmake --build $build -j"$(nproc)" --target loopwarden loopwarden-sim lw-receiver; } >$build/build.log 2>&1; then
  tail -40 $build/build.log
  exit 1
fi
lw=$build/daemon/loopwarden

demo=$(mktemp -d /tmp/loopwarden-demo.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# One simulated timeline for every process: 60 simulated seconds per real second.
anchor=$(date +%s)
epoch=$(date -u -d "@$anchor" +%Y-%m-%dT%H:%M:%SZ)
time_flags=(--time-scale 60 --epoch "$epoch" --time-anchor "$anchor")

$build/sim/loopwarden-sim --scenario sim/scenarios/demo.yaml --listen 127.0.0.1:0 --port-file "$demo/sim.port" \
  --log-level warn "${time_flags[@]}" >"$demo/sim.log" 2>&1 &
pids+=($!)
$build/tests/e2e/lw-receiver --mode slack --record "$demo/slack.jsonl" --port-file "$demo/slack.port" --print yes &
pids+=($!)
for _ in $(seq 100); do [[ -s $demo/sim.port && -s $demo/slack.port ]] && break; sleep 0.05; done

export DEMO_DIR=$demo SIM_URL=http://127.0.0.1:$(cat "$demo/sim.port") ADMIN_PORT=0 \
  SLACK_WEBHOOK_URL=http://127.0.0.1:$(cat "$demo/slack.port")/services/TDEMO/BDEMO/demo \
  BASETEN_API_KEY=bt-demo-key FIREWORKS_API_KEY=fw-demo-key LOOPWARDEN_ADMIN_TOKEN=demo-admin-token

echo
echo "== loopwarden plan (before anything ran): what it would do and why"
$lw plan --config examples/demo.yaml "${time_flags[@]}" 2>/dev/null || true

echo
echo "== loopwarden run: 25 real seconds = 25 simulated minutes (graces are 5m and 10m)"
$lw run --config examples/demo.yaml "${time_flags[@]}" --log-format text 2>"$demo/daemon.log" &
daemon=$!
pids+=($daemon)
sleep 25
kill -TERM $daemon
wait $daemon || true
echo "-- its log (decisions and actions; the full log is $demo/daemon.log):"
grep -E '^[^ ]+ (info|warn) (marked|acted|checkpoint promoted and verified|provider refused the action) ' "$demo/daemon.log" |
  sed -E 's/^[^ ]+ [^ ]+ /  /' | cut -c1-200 || true

echo
echo "== the provider calls loopwarden made (the simulator's journal)"
journal() {  # bash's /dev/tcp: no curl needed on a fresh machine
  exec 3<>"/dev/tcp/127.0.0.1/$(cat "$demo/sim.port")"
  printf 'GET /_sim/journal HTTP/1.0\r\nHost: sim\r\n\r\n' >&3
  cat <&3
  exec 3<&-
}
journal | sed 's/{"seq"/\n{"seq"/g' | sed -nE 's/.*"method":"([A-Z]+)","path":"([^"]+)".*"status":([0-9]+).*/  \1 \2 -> \3/p'

echo
echo "== loopwarden status"
$lw status --config examples/demo.yaml "${time_flags[@]}"
echo
echo "== loopwarden report --since 1d --by owner"
$lw report --config examples/demo.yaml --since 1d --by owner "${time_flags[@]}"
echo
echo "(the demo's files: $demo)"
