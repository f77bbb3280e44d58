#!/usr/bin/env python3
"""tests/cluster/test_by_hand.py — docs/cluster.md's "Start a three-node cluster by hand", run as a
newcomer would paste it (ctest cluster.by_hand): the ```pure block saved as shop.pure, then each
```sh block run by bash in one empty directory, in order, with pure-serve (PURE_SERVE) on the
PATH. Only the section's port numbers (4222-4224, 6222-6224, 8081-8083) are replaced by free ones,
so the test does not collide with anything else on the machine. Then the failover the section
describes: the leader found by /health, killed with kill -9 from its pN.pid, another node
reporting "role":"leader", an event acknowledged after the old leader's, and the killed node
started again with its own command line from the section, following.

Exit 0 when all of it held, 1 with the reason and the nodes' last log lines. About 15 s."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "docs", "cluster.md")
PORTS = [4222, 4223, 4224, 6222, 6223, 6224, 8081, 8082, 8083]


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def section_blocks():
    text = open(DOC, encoding="utf-8").read()
    start = text.index("## Start a three-node cluster by hand")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```(\w+)\n(.*?)```", text[start:end], re.S)


def http(port, method, path, body=None, timeout=3):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method,
                                 headers={"Content-Type": "application/json"} if body else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def shop_health(port):
    try:
        return http(port, "GET", "/health")[1].get("cluster", {}).get("shop", {})
    except (OSError, ValueError):
        return {}


def role(port):
    return shop_health(port).get("role")


def settled(ports):  # one leader, two followers, each naming it (a follower looks every tenth of a lease)
    hs = [shop_health(p) for p in ports]
    return sorted(str(h.get("role")) for h in hs) == ["follower", "follower", "leader"] and all(h.get("leader") for h in hs)


def wait_until(what, seconds):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        got = what()
        if got:
            return got
        time.sleep(0.1)
    return None


def main():
    serve = os.environ.get("PURE_SERVE")
    if not serve or not shutil.which("nats-server") or not shutil.which("curl"):
        print("cluster.by_hand: FAILED: needs PURE_SERVE, nats-server and curl (scripts/deps.sh)")
        return 1
    blocks = section_blocks()
    kinds = [k for k, _ in blocks]
    if kinds != ["pure", "sh", "sh", "sh"]:
        print(f"cluster.by_hand: FAILED: the section's blocks are {kinds}, not a module and three shell blocks")
        return 1
    mapping = dict(zip(PORTS, free_ports(len(PORTS))))
    swap = lambda text: re.sub(r"\b(%s)\b" % "|".join(map(str, PORTS)), lambda m: str(mapping[int(m.group(1))]), text)
    http_ports = [mapping[p] for p in (8081, 8082, 8083)]
    work = tempfile.mkdtemp(prefix="pure-by-hand-")
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(serve)) + os.pathsep + os.environ["PATH"])
    sessions = []  # each bash, in a session of its own: what it left running is killed at the end

    def run(script):
        # the output to a file, not a pipe: what the block leaves running in the background keeps it open
        out_path = os.path.join(work, f"block{len(sessions)}.out")
        with open(out_path, "w") as out_file:
            p = subprocess.Popen(["bash", "-e", "-c", script], cwd=work, env=env, start_new_session=True,
                                 stdout=out_file, stderr=subprocess.STDOUT)
        sessions.append(p.pid)
        p.wait(60)
        out = open(out_path).read()
        if p.returncode != 0:
            raise AssertionError(f"the block exited {p.returncode}:\n{script}\n{out}")
        return out

    try:
        with open(os.path.join(work, "shop.pure"), "w") as f:
            f.write(blocks[0][1])
        run(swap(blocks[1][1]))  # the NATS configs, the servers started in the background
        nodes = swap(blocks[2][1])
        run(nodes)  # the three pure-serve nodes
        if not wait_until(lambda: settled(http_ports), 40):
            raise AssertionError(f"not one leader and two followers within 40 s: {[role(p) for p in http_ports]}")
        out = run(swap(blocks[3][1]))  # each node's /health, then an event through a follower (-L)
        lines = [l for l in out.splitlines() if l.strip()]
        if len(lines) != 4 or '"role":"leader"' not in out or json.loads(lines[3]).get("seq") != 1:
            raise AssertionError(f"the health and event commands answered:\n{out}")
        # the failover: kill -9 the leader, another one leads and takes events after the first
        lead = next(i for i, p in enumerate(http_ports) if role(p) == "leader")
        pid = int(open(os.path.join(work, f"p{lead + 1}.pid")).read())
        os.kill(pid, signal.SIGKILL)
        others = [p for i, p in enumerate(http_ports) if i != lead]
        new = wait_until(lambda: next((p for p in others if role(p) == "leader"), None), 20)
        if not new:
            raise AssertionError(f"no other node leads within 20 s of killing p{lead + 1}")
        status, body = http(new, "POST", "/v1/shop/order", b'{"item":"tea","qty":3}')
        if status != 200 or body.get("seq") != 2:
            raise AssertionError(f"an order on the new leader answered {status} {body}")
        # started again with its own command line from the section, it follows
        again = "\n".join([nodes.splitlines()[0], nodes.splitlines()[lead + 1]])
        run(again)
        following = lambda: (lambda h: h.get("role") == "follower" and h.get("leader"))(shop_health(http_ports[lead]))
        if not wait_until(following, 30):  # a follower, naming the leader (it looks every tenth of a lease)
            raise AssertionError(f"p{lead + 1}, started again, does not follow: {role(http_ports[lead])}")
        status, body = http(http_ports[lead], "POST", "/v1/shop/order", b'{"item":"tea","qty":1}')
        if status != 307:
            raise AssertionError(f"an event sent to the restarted follower answered {status} {body}")
        print(f"cluster.by_hand: ok: the section's {len(blocks)} blocks ran; p{lead + 1} led, was killed, "
              f"another node took the lease and events, p{lead + 1} started again and follows")
        return 0
    except (AssertionError, subprocess.TimeoutExpired, OSError, ValueError) as e:
        print(f"cluster.by_hand: FAILED: {e}")
        for name in ("p1.log", "p2.log", "p3.log", "nats1.log"):
            path = os.path.join(work, name)
            if os.path.exists(path):
                print(f"--- {name}\n" + "".join(open(path, errors="replace").readlines()[-8:]))
        return 1
    finally:
        for sid in sessions:
            try:
                os.killpg(sid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
