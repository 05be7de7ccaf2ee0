#!/usr/bin/env python3
"""The token economy of find_tools, measured on real servers: the bytes a
model reads to reach one tool

  - through find_tools + use_tool: the workbench's tools/list (its four
    meta-tools) and one find_tools result;
  - through open_toolbox + use_tool: the same tools/list and the open result
    of the toolbox that holds the tool;
  - with every tool listed natively: each server's own tools/list.

Usage: economy.py WORKBENCH NPM_DIR VENV_DIR DATA_DIR SERVERS_JSON
Runs `mcp-workbench index`, then one session with every query of
queries.json (the target: its first relevant tool). Prints a table.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collect import list_tools  # noqa: E402


def main():
    workbench, npm, venv, data, servers_file = map(os.path.abspath, sys.argv[1:6])
    servers = {s["name"]: s for s in json.load(open(servers_file))}
    toolboxes = json.load(open(os.path.join(data, "toolboxes.json")))
    queries = json.load(open(os.path.join(data, "queries.json")))
    work = tempfile.mkdtemp(prefix="mcp-workbench-economy-")
    fill = lambda part: part.replace("{npm}", npm).replace("{venv}", venv).replace("{tmp}", work)
    config = {"toolboxes": {}}
    box_of = {}
    for box, spec in toolboxes.items():
        config["toolboxes"][box] = {"description": spec["description"], "mcpServers": {}}
        for name in spec["servers"]:
            server = servers[name]
            command = [fill(p) for p in server["command"]]
            config["toolboxes"][box]["mcpServers"][name] = {
                "command": command[0], "args": command[1:], "env": server.get("env", {}),
                "startupTimeoutMs": 60000}
            box_of[name] = box
    path = os.path.join(work, "config.json")
    json.dump(config, open(path, "w"))
    env = {"PATH": os.environ["PATH"], "HOME": work, "XDG_CACHE_HOME": os.path.join(work, "cache"),
           "RUST_LOG": "off"}
    index = subprocess.run([workbench, "index", "--config", path], env=env, capture_output=True, text=True)
    print(index.stdout.strip(), file=sys.stderr)

    # Native: every server's own tools/list result, as the host would read it.
    native = 0
    for name in box_of:
        server = servers[name]
        _, tools = list_tools([fill(p) for p in server["command"]], server.get("env", {}), work)
        native += len(json.dumps({"tools": tools}, separators=(",", ":")))

    proc = subprocess.Popen([workbench, "--config", path], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    next_id = [0]

    def request(method, params):
        next_id[0] += 1
        line = json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params})
        proc.stdin.write((line + "\n").encode())
        proc.stdin.flush()
        while True:
            out = proc.stdout.readline()
            message = json.loads(out)
            if message.get("id") == next_id[0]:
                return len(out.rstrip(b"\n")), message, len(line)

    request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                           "clientInfo": {"name": "economy", "version": "0"}})
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.flush()
    meta, _, _ = request("tools/list", {})
    find_bytes, find3_bytes, open_bytes, found, found3 = [], [], [], 0, 0
    opened = {}
    for q in queries:
        target = q["relevant"][0]
        server, tool = target.split("/", 1)
        n, answer, _ = request("tools/call", {"name": "find_tools", "arguments": {"query": q["query"]}})
        find_bytes.append(n)
        result = json.loads(answer["result"]["content"][0]["text"])
        ids = [f"{t['server']}/{t['tool']}" for t in result["tools"]]
        found += any(r in ids for r in q["relevant"])
        n, answer, _ = request("tools/call", {"name": "find_tools", "arguments": {"query": q["query"], "limit": 3}})
        find3_bytes.append(n)
        result = json.loads(answer["result"]["content"][0]["text"])
        found3 += any(f"{t['server']}/{t['tool']}" in q["relevant"] for t in result["tools"])
        box = box_of[server]
        if box not in opened:
            n, _, _ = request("tools/call", {"name": "open_toolbox", "arguments": {"toolbox_name": box}})
            opened[box] = n
        open_bytes.append(opened[box])
    proc.stdin.close()
    proc.wait(timeout=30)
    mean = lambda xs: sum(xs) / len(xs)
    k = len(queries)
    print(f"{len(box_of)} real servers in {len(toolboxes)} toolboxes; {k} queries")
    print(f"{'path to one tool':<40} {'bytes read':>10} {'~tokens':>8}")
    rows = [
        ("find_tools (limit 8) + use_tool", meta + mean(find_bytes), f"target in the result for {found}/{k}"),
        ("find_tools (limit 3) + use_tool", meta + mean(find3_bytes), f"target in the result for {found3}/{k}"),
        ("open_toolbox + use_tool", meta + mean(open_bytes), "the target's toolbox, full form"),
        ("every tool listed natively", native, "each server's own tools/list"),
    ]
    for label, size, note in rows:
        print(f"{label:<40} {size:>10.0f} {size / 4:>8.0f}  {note}")
    print(f"(the workbench's tools/list, counted in the first three: {meta} bytes)")


if __name__ == "__main__":
    main()
