#!/usr/bin/env python3
"""Lists the tools of real MCP servers (npm and PyPI packages, pinned in
servers.json) and writes them as the retrieval benchmark's catalog.

Usage: collect.py SERVERS_JSON NPM_DIR VENV_DIR OUT_JSON

Each server is started over stdio, initialised, listed (every page), and
stopped. Dummy credentials are passed where a server refuses to start
without them: listing tools calls no remote API.
"""
import json
import os
import subprocess
import sys
import threading


def rpc(proc, message):
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def read_response(proc, want_id, deadline_lines=10000):
    for _ in range(deadline_lines):
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout")
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("id") == want_id and ("result" in message or "error" in message):
            if "error" in message:
                raise RuntimeError(message["error"])
            return message["result"]
    raise RuntimeError("no response")


def list_tools(command, env, cwd):
    full_env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    full_env.update(env)
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=full_env, cwd=cwd)
    timer = threading.Timer(60, proc.kill)
    timer.start()
    try:
        rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "retrieval-collect", "version": "0"}}})
        init = read_response(proc, 1)
        rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools, cursor, n = [], None, 2
        while True:
            params = {"cursor": cursor} if cursor else {}
            rpc(proc, {"jsonrpc": "2.0", "id": n, "method": "tools/list", "params": params})
            page = read_response(proc, n)
            tools.extend(page.get("tools", []))
            cursor = page.get("nextCursor")
            n += 1
            if not cursor:
                return init, tools
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()


def main():
    servers_file, npm, venv, out = sys.argv[1:5]
    servers = json.load(open(servers_file))
    work = os.path.dirname(os.path.abspath(out))
    catalog = []
    for server in servers:
        command = [part.replace("{npm}", npm).replace("{venv}", venv).replace("{tmp}", work)
                   for part in server["command"]]
        try:
            init, tools = list_tools(command, server.get("env", {}), os.path.dirname(npm))
        except Exception as e:  # report and go on: one server is not the catalog
            print(f"{server['name']}: FAILED {e}", file=sys.stderr)
            continue
        keep = ("name", "title", "description", "inputSchema", "annotations")
        tools = [{k: t[k] for k in keep if k in t} for t in tools]
        print(f"{server['name']}: {len(tools)} tools", file=sys.stderr)
        entry = {"name": server["name"], "package": server["package"],
                 "description": server["description"],
                 "serverInfo": init.get("serverInfo", {}), "tools": tools}
        if init.get("instructions"):
            entry["instructions"] = init["instructions"]
        catalog.append(entry)
    with open(out, "w") as f:
        json.dump({"servers": catalog}, f, indent=1, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
