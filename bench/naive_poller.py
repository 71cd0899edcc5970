#!/usr/bin/env python3
"""A naive single-threaded poller of the same generated fleet, for comparison only.

What a platform team writes first: the standard library's HTTP client and json module,
every listing page of every account read in turn, every object kept in a dict keyed by
id, and one idle rule evaluated over all of them. It reads no metrics, checkpoints or
token spend, writes no database and takes no action, so it does less than loopwarden;
it is the floor a script starts from, not a rival.

Prints one JSON object: CPU seconds of the cold poll and the median steady poll, peak
RSS, and the number of resources seen.
"""

import argparse
import http.client
import json
import resource
import time
import urllib.parse


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Client:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)

    def get(self, path, auth):
        self.conn.request("GET", path, headers={"Authorization": auth, "Accept": "application/json"})
        res = self.conn.getresponse()
        body = res.read()
        if res.status != 200:
            raise RuntimeError(f"GET {path}: HTTP {res.status}")
        return json.loads(body)


def poll_baseten(c, i, out):
    auth = f"Api-Key bt-gen-{i}"
    for what in ("runs", "samplers", "deployments"):
        for o in c.get(f"/v1/loops/{what}?scope=org", auth).get(what, []):
            out[f"bt{i}/{what}/{o['id']}"] = o
    for m in c.get("/v1/models", auth).get("models", []):
        for d in c.get(f"/v1/models/{m['id']}/deployments", auth).get("deployments", []):
            out[f"bt{i}/model_deployments/{d['id']}"] = d


def poll_fireworks(c, i, out):
    auth = f"Bearer fw-gen-{i}"
    for what in ("trainingSessions", "rlorTrainerJobs", "deployments", "models"):
        token = ""
        while True:
            path = f"/v1/accounts/gen-acct-{i}/{what}?pageSize=200"
            if token:
                path += "&pageToken=" + urllib.parse.quote(token)
            page = c.get(path, auth)
            for o in page.get(what, []):
                out[f"fw{i}/{what}/{o['name']}"] = o
            token = page.get("nextPageToken", "")
            if not token:
                break


def idle(o, now):
    # The rule a script starts with: running, and not updated for 20 minutes.
    status = o.get("status")
    state = str(o.get("state") or (status.get("name") if isinstance(status, dict) else status) or "").upper()
    updated = o.get("updateTime") or o.get("updated_at") or o.get("created_at") or ""
    if "RUNNING" not in state and "ACTIVE" not in state:
        return False
    try:
        t = time.mktime(time.strptime(updated[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return False
    return now - t > 20 * 60


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--accounts", type=int, required=True)
    ap.add_argument("--polls", type=int, default=4)
    a = ap.parse_args()
    c = Client(a.url)
    bt = (a.accounts + 1) // 2
    fw = a.accounts - bt
    fleet = {}
    cpu = []
    wall = []
    for _ in range(a.polls):
        t0, w0 = cpu_seconds(), time.monotonic()
        seen = {}
        for i in range(bt):
            poll_baseten(c, i, seen)
        for i in range(fw):
            poll_fireworks(c, i, seen)
        fleet = seen  # the previous poll's objects are dropped only now, as a script would
        now = time.time()
        flagged = sum(1 for o in fleet.values() if idle(o, now))
        cpu.append(cpu_seconds() - t0)
        wall.append(time.monotonic() - w0)
    steady = sorted(range(1, len(cpu)), key=lambda k: wall[k])
    mid = steady[len(steady) // 2] if steady else 0
    print(json.dumps({
        "resources": len(fleet),
        "flagged_idle": flagged,
        "cold_cpu_s": cpu[0],
        "cold_wall_s": wall[0],
        "steady_cpu_s": cpu[mid],
        "steady_wall_s": wall[mid],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }))


if __name__ == "__main__":
    main()
