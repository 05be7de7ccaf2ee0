"""Interop checks: real MCP clients and servers around the release mcp-workbench,
and the real Claude Code CLI as its host, in front of a fake model API (fake_anthropic.py).

Run by scripts/interop, which installs the peers and sets IO_ROOT, IO_CACHE and
IO_WORKBENCH (the binary it just built, in cargo's target folder).
Prints `PASS name` or `FAIL name: reason` per check and ends with `N passed, M failed`.
"""

import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client import Client
from mcp.client.stdio import stdio_client

from fake_anthropic import FakeAnthropic

ROOT = os.environ["IO_ROOT"]
CACHE = os.environ["IO_CACHE"]
HERE = os.path.join(ROOT, "scripts", "interop.d")
WB = os.environ["IO_WORKBENCH"]
NPM = os.path.join(CACHE, "npm", "node_modules")
VENV = os.path.join(CACHE, "venv")
LOGS = os.path.join(CACHE, "logs")
EVERYTHING_JS = os.path.join(NPM, "@modelcontextprotocol", "server-everything", "dist", "index.js")
INSPECTOR = os.path.join(NPM, ".bin", "mcp-inspector")
CLAUDE = os.path.join(NPM, ".bin", "claude")
OPEN_TIMEOUT = 90  # an open starts node/python servers; slow on a busy 2-core machine
CLAUDE_TIMEOUT = 120  # Claude Code's first request comes about 1 s after it starts, here
ALLOW_LIST = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM"]
# Every run directory lives in this one; leftover processes are found by their cwd.
SESSION = tempfile.mkdtemp(prefix="wb-interop-")

# Tool names of the pinned versions (scripts/interop.d/package-lock.json and requirements.txt).
EXPECTED_TOOLS = {
    "everything": ["echo", "get-annotated-message", "get-env", "get-resource-links",
                   "get-resource-reference", "get-structured-content", "get-sum", "get-tiny-image",
                   "gzip-file-as-resource", "toggle-simulated-logging", "toggle-subscriber-updates",
                   "trigger-long-running-operation", "simulate-research-query"],
    "time": ["get_current_time", "convert_time"],
    "filesystem": ["read_file", "read_text_file", "read_media_file", "read_multiple_files",
                   "write_file", "edit_file", "create_directory", "list_directory",
                   "list_directory_with_sizes", "directory_tree", "move_file", "search_files",
                   "get_file_info", "list_allowed_directories"],
    "memory": ["create_entities", "create_relations", "add_observations", "delete_entities",
               "delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes"],
}

passed, failed = [], []


class Failure(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise Failure(message)


@contextlib.asynccontextmanager
async def step(name, timeout=OPEN_TIMEOUT):
    """One check: PASS if the block finishes in time, else FAIL with the reason."""
    try:
        with anyio.fail_after(timeout):
            yield
    except Exception as e:  # noqa: BLE001 - every failure is reported, none stops the run
        failed.append(name)
        print(f"FAIL {name}: {describe(e)}", flush=True)
    else:
        passed.append(name)
        print(f"PASS {name}", flush=True)


def describe(e):
    """The first real error inside exception groups, as one short line."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    reason = "timed out" if isinstance(e, TimeoutError) and not str(e) else f"{type(e).__name__}: {e}"
    return " ".join(reason.split())[:600]


def info(message):
    print(f"  {message}", flush=True)


# ---------------------------------------------------------------- set-up helpers

def new_run_dir():
    """A temp dir the workbench and its servers run in, with dev/prod data folders."""
    run = tempfile.mkdtemp(dir=SESSION)
    for env in ("dev", "prod"):
        os.mkdir(os.path.join(run, env))
        with open(os.path.join(run, env, f"only-{env}.txt"), "w") as f:
            f.write(f"hello from {env}\n")
    return run


def write_config(run, mode="proxy", name="workbench-config.json"):
    with open(os.path.join(HERE, name)) as f:
        config = json.load(f)
    config["mode"] = mode
    path = os.path.join(run, name)
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


def workbench_env(run):
    """The workbench's environment: the allow-list (all six set), the config's
    references, and a secret that must not reach any child."""
    env = {k: os.environ.get(k, f"interop-{k.lower()}") for k in ALLOW_LIST}
    env.update(IO_RUN=run, IO_NPM=NPM, IO_ROOT=ROOT, IO_VENV=VENV, IO_SECRET="must-not-leak", RUST_LOG="info",
               XDG_CACHE_HOME=os.path.join(run, "cache"))
    return env


def workbench_params(run, mode="proxy", name="workbench-config.json"):
    return StdioServerParameters(command=WB, args=["--config", write_config(run, mode, name)],
                                 env=workbench_env(run), cwd=run)


def log_file(name):
    os.makedirs(LOGS, exist_ok=True)
    return open(os.path.join(LOGS, f"{name}.log"), "w")


@contextlib.asynccontextmanager
async def sdk_session(name, run, mode="proxy", config="workbench-config.json"):
    """The official SDK's legacy path: stdio_client + ClientSession.initialize()."""
    with log_file(name) as errlog:
        async with stdio_client(workbench_params(run, mode, config), errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=OPEN_TIMEOUT) as session:
                session.init_result = await session.initialize()
                yield session


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


async def open_toolbox(session, toolbox):
    result = await session.call_tool("open_toolbox", {"toolbox_name": toolbox})
    expect(not result.is_error, f"open_toolbox {toolbox}: {text_of(result)}")
    opened = json.loads(text_of(result))
    expect(not opened.get("_errors"), f"open_toolbox {toolbox}: _errors {opened.get('_errors')}")
    return opened


async def use_tool(session, toolbox, server, tool, arguments, ok=True, **kw):
    result = await session.call_tool(
        "use_tool", {"tool": {"toolbox": toolbox, "server": server, "tool": tool}, "arguments": arguments}, **kw)
    if ok:
        expect(not result.is_error, f"{toolbox}/{server}/{tool}: isError: {text_of(result)}")
    return result


def processes_in(run):
    """Pids whose cwd is inside `run` or whose command line names it."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(run) or run in cmd:
            found.append(f"{pid} {cmd.strip()[:120]}")
    return found


class RawClient:
    """A bare JSON-lines client, for byte-level comparisons and the shutdown check."""

    def __init__(self, argv, env, cwd, log):
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=log)
        self.lines, self.next_id = queue.Queue(), 1
        self.notifications = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.decode().rstrip("\r\n"))
        self.lines.put(None)

    def send(self, message):
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params=None, timeout=OPEN_TIMEOUT):
        """Returns (raw line, parsed message) of the response; keeps notifications."""
        rid, self.next_id = self.next_id, self.next_id + 1
        self.send({"id": rid, "method": method, **({"params": params} if params is not None else {})})
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            expect(line is not None, f"{method}: stdout closed")
            message = json.loads(line)
            if message.get("id") == rid and "method" not in message:
                expect("result" in message, f"{method}: error {message.get('error')}")
                return line, message
            if "method" in message and "id" not in message:
                self.notifications.append(message)

    def handshake(self):
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "interop-raw", "version": "0"}})
        self.send({"method": "notifications/initialized"})

    def close(self, timeout=30):
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def raw_member(line, key):
    """The exact bytes of a top-level member of a JSON object line."""
    decoder, i = json.JSONDecoder(), line.index("{") + 1
    while True:
        while line[i] in " \t,":
            i += 1
        name, i = decoder.raw_decode(line, i)
        i = line.index(":", i) + 1
        while line[i] in " \t":
            i += 1
        _, end = decoder.raw_decode(line, i)
        if name == key:
            return line[i:end]
        i = end


# ---------------------------------------------------------------- checks

async def check_sdk_and_real_servers():
    """1, 3, 5: the SDK's ClientSession drives every real server through the workbench."""
    run = new_run_dir()
    async with sdk_session("sdk-session", run) as session:
        async with step("sdk-initialize"):
            init = session.init_result
            expect(init.protocol_version == "2025-11-25", f"protocolVersion {init.protocol_version}")
            expect(init.server_info.name == "mcp-workbench", f"serverInfo {init.server_info}")
            expect("everything" in (init.instructions or ""), "instructions do not list the toolboxes")

        async with step("sdk-tools-list"):
            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            expect(names[:4] == ["open_toolbox", "use_tool", "find_tools", "close_toolbox"], f"tools {names}")
            enum = tools[0].input_schema["properties"]["toolbox_name"].get("enum")
            expect(enum == ["everything", "dev", "prod"], f"toolbox_name enum {enum}")

        opened = {}
        async with step("sdk-open-toolbox"):
            for toolbox in ("everything", "dev"):
                opened[toolbox] = await open_toolbox(session, toolbox)
            for toolbox, servers in (("everything", ["everything", "time"]), ("dev", ["filesystem", "memory"])):
                expect(opened[toolbox]["servers_connected"] == len(servers), f"{toolbox}: {opened[toolbox]}")
                for server in servers:
                    got = [t["name"] for t in opened[toolbox]["tools"] if t["source_server"] == server]
                    expect(sorted(got) == sorted(EXPECTED_TOOLS[server]),
                           f"{server} tools: missing {set(EXPECTED_TOOLS[server]) - set(got)}, "
                           f"new {set(got) - set(EXPECTED_TOOLS[server])}")

        async with step("everything-echo"):
            result = await use_tool(session, "everything", "everything", "echo", {"message": "hi there"})
            expect(text_of(result) == "Echo: hi there", f"echo gave {text_of(result)!r}")

        async with step("everything-get-sum"):
            result = await use_tool(session, "everything", "everything", "get-sum", {"a": 2, "b": 40})
            expect("42" in text_of(result), f"get-sum gave {text_of(result)!r}")

        async with step("everything-image"):
            result = await use_tool(session, "everything", "everything", "get-tiny-image", {})
            images = [c for c in result.content if c.type == "image"]
            expect(images and images[0].mime_type == "image/png" and len(images[0].data) > 100,
                   f"no PNG image content: {[c.type for c in result.content]}")

        async with step("everything-structured-content"):
            result = await use_tool(session, "everything", "everything", "get-structured-content",
                                    {"location": "Chicago"})
            schema = next(t["outputSchema"] for t in opened["everything"]["tools"]
                          if t["name"] == "get-structured-content")
            jsonschema.validate(result.structured_content, schema)
            expect(result.structured_content == json.loads(text_of(result)), "text and structuredContent differ")

        async with step("memory-create-read"):
            entity = {"name": "Alice", "entityType": "person", "observations": ["likes tea"]}
            await use_tool(session, "dev", "memory", "create_entities", {"entities": [entity]})
            result = await use_tool(session, "dev", "memory", "open_nodes", {"names": ["Alice"]})
            got = result.structured_content["entities"]
            expect(got == [{"type": "entity", **entity}] or got == [entity], f"open_nodes gave {got}")

        async with step("filesystem-read"):
            path = os.path.join(run, "dev", "only-dev.txt")
            result = await use_tool(session, "dev", "filesystem", "read_text_file", {"path": path})
            expect(text_of(result) == "hello from dev\n", f"read_text_file gave {text_of(result)!r}")
            expect(result.structured_content == {"content": "hello from dev\n"}, f"{result.structured_content}")

        async with step("time-get-current-time"):
            result = await use_tool(session, "everything", "time", "get_current_time", {"timezone": "Asia/Tokyo"})
            got = result.structured_content or {}
            expect(got.get("timezone") == "Asia/Tokyo" and got.get("datetime", "").endswith("+09:00"), f"{got}")

        async with step("progress-to-client"):
            progress = []

            async def on_progress(value, total, message):
                progress.append((value, total))

            result = await use_tool(session, "everything", "everything", "trigger-long-running-operation",
                                    {"duration": 2, "steps": 4}, progress_callback=on_progress)
            expect(progress == [(1, 4), (2, 4), (3, 4), (4, 4)], f"progress seen: {progress}")
            expect("completed" in text_of(result).lower(), f"result {text_of(result)!r}")

        async with step("env-allow-list"):
            result = await use_tool(session, "everything", "everything", "get-env", {})
            got = json.loads(text_of(result))
            env = workbench_env(run)
            want = {k: env[k] for k in ALLOW_LIST} | {"IO_CONFIGURED": "configured-value"}
            expect(got == want, f"extra {sorted(set(got) - set(want))}, missing {sorted(set(want) - set(got))}, "
                                f"differing {[k for k in want if k in got and got[k] != want[k]]}")

        async with step("sdk-close-toolbox"):
            for toolbox in ("everything", "dev"):
                result = await session.call_tool("close_toolbox", {"toolbox_name": toolbox})
                expect(text_of(result) == f"Toolbox '{toolbox}' closed (2 servers stopped)", text_of(result))
            # A closed toolbox is no error: the call starts just that server (docs/reference.md §5.2).
            result = await use_tool(session, "dev", "memory", "read_graph", {})
            expect(result.structured_content is not None and "entities" in result.structured_content,
                   f"after close: {text_of(result)}")
            result = await session.call_tool("close_toolbox", {"toolbox_name": "dev"})
            expect(text_of(result) == "Toolbox 'dev' closed (1 server stopped)", text_of(result))

        async with step("sdk-find-tools"):
            # The catalog holds what was listed (everything and dev), opened now or not.
            result = await session.call_tool("find_tools", {"query": "show the environment variables"})
            found = json.loads(text_of(result))
            first = found["tools"][0]
            expect((first["toolbox"], first["server"], first["tool"]) == ("everything", "everything", "get-env"),
                   f"find_tools: {found['tools'][:3]}")
            expect([t["toolbox"] for t in found.get("not_indexed", [])] == ["prod"], f"not_indexed: {found}")
            result = await use_tool(session, first["toolbox"], first["server"], first["tool"], {})
            expect("PATH" in json.loads(text_of(result)), f"found then used: {text_of(result)[:200]}")
    shutil.rmtree(run, ignore_errors=True)


async def check_auto_mode():
    """1: the high-level Client probes server/discover first; the -32601 must come at once."""
    run = new_run_dir()
    async with step("sdk-auto-mode-connect"):
        with log_file("sdk-auto") as errlog:
            # The default mode ("auto"); the transport is given only to send stderr to a file.
            start = time.monotonic()
            async with Client(stdio_client(workbench_params(run), errlog=errlog)) as client:
                elapsed = time.monotonic() - start
                info(f"auto-mode connect took {elapsed * 1000:.0f} ms (protocol {client.protocol_version})")
                expect(elapsed < 3, f"connect took {elapsed:.1f} s (a server/discover probe went unanswered?)")
                expect(client.protocol_version == "2025-11-25", f"protocol {client.protocol_version}")
                names = [t.name for t in (await client.list_tools()).tools]
                expect("use_tool" in names, f"tools {names}")
    shutil.rmtree(run, ignore_errors=True)


async def check_isolation():
    """4: dev and prod run the same servers on different data; closing dev leaves prod working."""
    run = new_run_dir()
    files = {env: os.path.join(run, env, f"only-{env}.txt") for env in ("dev", "prod")}
    async with sdk_session("isolation", run) as session:
        async with step("isolation-open-both"):
            for toolbox in ("dev", "prod"):
                await open_toolbox(session, toolbox)

        async with step("isolation-filesystem"):
            for mine, other in (("dev", "prod"), ("prod", "dev")):
                result = await use_tool(session, mine, "filesystem", "read_text_file", {"path": files[mine]})
                expect(text_of(result) == f"hello from {mine}\n", f"{mine} read own file: {text_of(result)!r}")
                result = await use_tool(session, mine, "filesystem", "read_text_file", {"path": files[other]},
                                        ok=False)
                expect(result.is_error and "hello" not in text_of(result),
                       f"{mine} could read {other}'s file: {text_of(result)!r}")
                result = await use_tool(session, mine, "filesystem", "list_allowed_directories", {})
                expect(os.path.join(run, mine) in text_of(result) and os.path.join(run, other) not in text_of(result),
                       f"{mine} allowed directories: {text_of(result)!r}")

        async with step("isolation-memory"):
            for toolbox in ("dev", "prod"):
                entity = {"name": f"{toolbox}-entity", "entityType": "marker", "observations": [toolbox]}
                await use_tool(session, toolbox, "memory", "create_entities", {"entities": [entity]})
            for toolbox in ("dev", "prod"):
                result = await use_tool(session, toolbox, "memory", "read_graph", {})
                names = [e["name"] for e in result.structured_content["entities"]]
                expect(names == [f"{toolbox}-entity"], f"{toolbox} graph holds {names}")
                with open(os.path.join(run, f"{toolbox}-memory.jsonl")) as f:
                    stored = f.read()
                expect(f"{toolbox}-entity" in stored and stored.count("-entity") == 1, f"{toolbox} file: {stored!r}")

        async with step("isolation-close-dev-keeps-prod"):
            result = await session.call_tool("close_toolbox", {"toolbox_name": "dev"})
            expect(text_of(result) == "Toolbox 'dev' closed (2 servers stopped)", text_of(result))
            # Closed, dev is no error: the call starts just its filesystem server again.
            result = await use_tool(session, "dev", "filesystem", "read_text_file", {"path": files["dev"]})
            expect(text_of(result) == "hello from dev\n", f"dev after close: {text_of(result)!r}")
            result = await use_tool(session, "prod", "filesystem", "read_text_file", {"path": files["prod"]})
            expect(text_of(result) == "hello from prod\n", f"prod read: {text_of(result)!r}")
            result = await use_tool(session, "prod", "memory", "read_graph", {})
            names = [e["name"] for e in result.structured_content["entities"]]
            expect(names == ["prod-entity"], f"prod graph after closing dev: {names}")
    shutil.rmtree(run, ignore_errors=True)


def inspector(run, *args, double_dash=False):
    """One MCP Inspector CLI run against the workbench; returns its parsed stdout.
    `--config` after the command would be taken by the inspector itself: the path
    goes by env (the README's first form), or with `double_dash` after a `--` that
    ends the inspector's own options (its second form)."""
    env = workbench_env(run)
    argv = [INSPECTOR, "--cli"]
    for key in ("IO_RUN", "IO_NPM", "IO_VENV"):
        argv += ["-e", f"{key}={env[key]}"]
    if double_dash:
        argv += [*args, "--", WB, "--config", write_config(run)]
    else:
        argv += ["-e", f"WORKBENCH_CONFIG={write_config(run)}", WB, *args]
    with log_file("inspector") as errlog:
        done = subprocess.run(argv, cwd=run, stdout=subprocess.PIPE, stderr=errlog, timeout=OPEN_TIMEOUT)
    expect(done.returncode == 0, f"inspector exited {done.returncode}: {done.stdout.decode()[-300:]}")
    return json.loads(done.stdout)


async def check_inspector():
    """2: the MCP Inspector CLI lists the meta-tools and calls them (one process per call)."""
    run = new_run_dir()
    async with step("inspector-tools-list"):
        got = await anyio.to_thread.run_sync(inspector, run, "--method", "tools/list")
        names = [t["name"] for t in got["tools"]]
        expect(names[:4] == ["open_toolbox", "use_tool", "find_tools", "close_toolbox"], f"tools {names}")

    async with step("inspector-config-after-double-dash"):
        got = await anyio.to_thread.run_sync(
            lambda: inspector(run, "--method", "tools/list", double_dash=True))
        names = [t["name"] for t in got["tools"]]
        expect(names[:4] == ["open_toolbox", "use_tool", "find_tools", "close_toolbox"], f"tools {names}")

    async with step("inspector-open-toolbox"):
        got = await anyio.to_thread.run_sync(inspector, run, "--method", "tools/call", "--tool-name", "open_toolbox",
                                             "--tool-arg", "toolbox_name=dev")
        expect(not got.get("isError"), f"open: {got}")
        expect(got["structuredContent"]["servers_connected"] == 2, f"open: {got['structuredContent']}")

    async with step("inspector-use-tool"):
        # Each CLI run is a fresh workbench, so no toolbox is open: the call starts just the
        # named server (docs/reference.md §5.2), and its answer proves the JSON object
        # arguments arrived intact.
        got = await anyio.to_thread.run_sync(
            inspector, run, "--method", "tools/call", "--tool-name", "use_tool",
            "--tool-arg", 'tool={"toolbox":"dev","server":"memory","tool":"read_graph"}', "arguments={}")
        expect(not got.get("isError") and "entities" in got.get("structuredContent", {}), f"use_tool: {got}")
    shutil.rmtree(run, ignore_errors=True)


async def check_exact_passthrough():
    """3: tool definitions and results of server-everything reach the host byte for byte."""
    run = new_run_dir()
    async with step("everything-exact-passthrough"):
        def compare():
            with log_file("raw-direct") as log:
                direct = RawClient(["node", EVERYTHING_JS, "stdio"], workbench_env(run), run, log)
                try:
                    direct.handshake()
                    listing, _ = direct.request("tools/list")
                    call, _ = direct.request("tools/call", {"name": "get-structured-content",
                                                            "arguments": {"location": "Los Angeles"}})
                finally:
                    direct.close()
            with log_file("raw-workbench") as log:
                wb = RawClient([WB, "--config", write_config(run)], workbench_env(run), run, log)
                try:
                    wb.handshake()
                    _, opened = wb.request("tools/call", {"name": "open_toolbox",
                                                          "arguments": {"toolbox_name": "everything"}})
                    via, _ = wb.request("tools/call", {"name": "use_tool", "arguments": {
                        "tool": {"toolbox": "everything", "server": "everything", "tool": "get-structured-content"},
                        "arguments": {"location": "Los Angeles"}}})
                    _, progressed = wb.request("tools/call", {"name": "use_tool", "_meta": {"progressToken": "tok-42"},
                                                              "arguments": {"tool": {"toolbox": "everything", "server": "everything",
                                                                                     "tool": "trigger-long-running-operation"},
                                                                            "arguments": {"duration": 1, "steps": 2}}})
                finally:
                    wb.close()
            open_text = opened["result"]["content"][0]["text"]
            for tool in json.loads(raw_member(listing, "result"))["tools"]:
                start = listing.index('{"name":' + json.dumps(tool["name"]))
                _, end = json.JSONDecoder().raw_decode(listing, start)
                spliced = listing[start:end - 1] + ',"toolbox_name":"everything","source_server":"everything"}'
                expect(spliced in open_text, f"tool {tool['name']} not passed through byte for byte")
            expect(raw_member(via, "result") == raw_member(call, "result"),
                   f"result differs: direct {raw_member(call, 'result')} via workbench {raw_member(via, 'result')}")
            tokens = [n["params"]["progressToken"] for n in wb.notifications if n["method"] == "notifications/progress"]
            expect(tokens == ["tok-42", "tok-42"], f"progress tokens seen: {tokens}")
        await anyio.to_thread.run_sync(compare)
    shutil.rmtree(run, ignore_errors=True)


async def check_dynamic_validation():
    """3: in dynamic mode the SDK itself validates structuredContent against the passed-through outputSchema."""
    run = new_run_dir()
    async with step("dynamic-sdk-validates-structured-content"):
        async with sdk_session("dynamic", run, mode="dynamic") as session:
            await open_toolbox(session, "everything")
            tools = (await session.list_tools()).tools
            native = [t for t in tools if (t.meta or {}).get("original_name") == "get-structured-content"]
            expect(len(native) == 1 and native[0].output_schema, f"native tools: {[t.name for t in tools]}")
            # call_tool raises if structuredContent is missing or does not match outputSchema.
            result = await session.call_tool(native[0].name, {"location": "New York"})
            expect(not result.is_error, text_of(result))
            expect(result.structured_content == {"temperature": 33, "conditions": "Cloudy", "humidity": 82},
                   f"{result.structured_content}")

    async with step("dynamic-one-list-changed-per-open"):
        # server-everything itself sends tools/list_changed 1-4 times after initialized;
        # the host must still see exactly one per open and one per close.
        def scenario():
            with log_file("dynamic-raw") as log:
                wb = RawClient([WB, "--config", write_config(run, "dynamic")], workbench_env(run), run, log)
                try:
                    wb.handshake()
                    wb.request("tools/call", {"name": "open_toolbox", "arguments": {"toolbox_name": "everything"}})
                    time.sleep(1.5)
                    opened = [n["method"] for n in wb.notifications].count("notifications/tools/list_changed")
                    wb.request("tools/call", {"name": "close_toolbox", "arguments": {"toolbox_name": "everything"}})
                    wb.request("ping")
                    total = [n["method"] for n in wb.notifications].count("notifications/tools/list_changed")
                finally:
                    wb.close()
            expect((opened, total) == (1, 2), f"list_changed after open: {opened}, after close: {total}")
        await anyio.to_thread.run_sync(scenario)
    shutil.rmtree(run, ignore_errors=True)


async def check_shutdown():
    """6: server-everything with simulated logging ignores stdin EOF; closing the workbench's
    stdin must still leave no process behind within the escalation time (2 s + 2 s)."""
    run = new_run_dir()
    async with step("shutdown-no-leftovers"):
        def scenario():
            with log_file("shutdown") as log:
                wb = RawClient([WB, "--config", write_config(run)], workbench_env(run), run, log)
                try:
                    wb.handshake()
                    wb.request("tools/call", {"name": "open_toolbox", "arguments": {"toolbox_name": "everything"}})
                    wb.request("tools/call", {"name": "use_tool", "arguments": {
                        "tool": {"toolbox": "everything", "server": "everything", "tool": "toggle-simulated-logging"},
                        "arguments": {}}})
                    expect(len(processes_in(run)) >= 3, f"expected workbench + 2 servers: {processes_in(run)}")
                finally:
                    start = time.monotonic()
                    code = wb.close(timeout=20)
            exited = time.monotonic() - start
            info(f"workbench exited {code} {exited:.1f} s after stdin EOF")
            while processes_in(run) and time.monotonic() - start < 6:
                time.sleep(0.1)
            left = processes_in(run)
            expect(not left, f"left after {time.monotonic() - start:.1f} s: {left}")
            expect(code == 0 and exited < 6, f"exit code {code} after {exited:.1f} s")
        await anyio.to_thread.run_sync(scenario)
    shutil.rmtree(run, ignore_errors=True)


MODERN_TOOLS = ["echo", "add", "count", "wait", "aborted"]


async def check_era_bridge():
    """A modern-only server (the TypeScript SDK v2 with legacy: 'reject', MCP 2026-07-28) refuses
    initialize; a legacy-only host (the Python SDK's ClientSession, which sends only initialize)
    reaches it through the workbench, in one toolbox with a legacy-only server (server-memory)."""
    run = new_run_dir()
    config = "bridge-config.json"

    async with step("bridge-modern-only-refuses-legacy"):
        # The server itself, without the workbench: initialize gets -32022 naming 2026-07-28 only.
        def direct():
            argv = ["node", os.path.join(HERE, "modern-only-server.mjs"), NPM]
            with log_file("bridge-direct") as log:
                raw = RawClient(argv, workbench_env(run), run, log)
                try:
                    raw.send({"id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "interop-raw", "version": "0"}}})
                    answer = json.loads(raw.lines.get(timeout=OPEN_TIMEOUT))
                finally:
                    raw.close()
            error = answer.get("error") or {}
            expect(error.get("code") == -32022 and error.get("data", {}).get("supported") == ["2026-07-28"],
                   f"initialize answered {answer}")
        await anyio.to_thread.run_sync(direct)

    async with sdk_session("bridge-sdk", run, config=config) as session:
        opened = {}
        async with step("bridge-open-mixed-toolbox"):
            expect(session.init_result.protocol_version == "2025-11-25", "the host side is legacy")
            opened = await open_toolbox(session, "bridge")
            expect(opened["servers_connected"] == 2, f"{opened}")
            for server, want in (("modern", MODERN_TOOLS), ("memory", EXPECTED_TOOLS["memory"])):
                got = [t["name"] for t in opened["tools"] if t["source_server"] == server]
                expect(sorted(got) == sorted(want), f"{server} tools: {got}")

        async with step("bridge-modern-call"):
            result = await use_tool(session, "bridge", "modern", "echo", {"text": "through the bridge"})
            expect(text_of(result) == "modern echo: through the bridge", f"echo gave {text_of(result)!r}")

        async with step("bridge-modern-structured-content"):
            result = await use_tool(session, "bridge", "modern", "add", {"a": 2, "b": 3})
            schema = next(t["outputSchema"] for t in opened["tools"] if t["name"] == "add")
            jsonschema.validate(result.structured_content, schema)
            expect(result.structured_content == {"sum": 5}, f"{result.structured_content}")

        async with step("bridge-modern-progress"):
            progress = []

            async def on_progress(value, total, message):
                progress.append((value, total))

            result = await use_tool(session, "bridge", "modern", "count", {"n": 3}, progress_callback=on_progress)
            expect(progress == [(1, 3), (2, 3), (3, 3)], f"progress seen: {progress}")
            expect(text_of(result) == "counted to 3", f"{text_of(result)!r}")

        async with step("bridge-modern-error-shape"):
            result = await use_tool(session, "bridge", "modern", "no-such-tool", {}, ok=False)
            expect(result.is_error, f"unknown tool: {text_of(result)}")

        async with step("bridge-legacy-in-same-toolbox"):
            entity = {"name": "Bob", "entityType": "person", "observations": ["crosses bridges"]}
            await use_tool(session, "bridge", "memory", "create_entities", {"entities": [entity]})
            result = await use_tool(session, "bridge", "memory", "open_nodes", {"names": ["Bob"]})
            got = result.structured_content["entities"]
            expect(got == [{"type": "entity", **entity}] or got == [entity], f"open_nodes gave {got}")

    async with step("bridge-modern-cancel"):
        # A legacy host's notifications/cancelled reaches the modern server (its call is aborted),
        # and no answer to the cancelled call comes back.
        def cancel():
            with log_file("bridge-raw") as log:
                wb = RawClient([WB, "--config", write_config(run, name=config)], workbench_env(run), run, log)
                try:
                    wb.handshake()
                    wb.request("tools/call", {"name": "open_toolbox", "arguments": {"toolbox_name": "bridge"}})
                    wb.send({"id": "w-1", "method": "tools/call", "params": {"name": "use_tool", "arguments": {
                        "tool": {"toolbox": "bridge", "server": "modern", "tool": "wait"}, "arguments": {}}}})
                    time.sleep(0.5)
                    wb.send({"method": "notifications/cancelled", "params": {"requestId": "w-1"}})
                    deadline = time.monotonic() + 10
                    text = ""
                    while time.monotonic() < deadline and text != "aborted: 1":
                        _, answer = wb.request("tools/call", {"name": "use_tool", "arguments": {
                            "tool": {"toolbox": "bridge", "server": "modern", "tool": "aborted"}, "arguments": {}}})
                        text = answer["result"]["content"][0]["text"]
                        time.sleep(0.1)
                    expect(text == "aborted: 1", f"the modern server saw no cancel: {text}")
                    wb.request("ping")
                    late = [line for line in list(wb.lines.queue) if line and '"w-1"' in line]
                    expect(not late, f"an answer to the cancelled call: {late}")
                finally:
                    wb.close()
        await anyio.to_thread.run_sync(cancel)

    async with step("bridge-check-shows-era"):
        def check():
            out = subprocess.run([WB, "check", "--config", write_config(run, name=config), "--json"],
                                 env=workbench_env(run), cwd=run, capture_output=True, timeout=OPEN_TIMEOUT)
            report = json.loads(out.stdout)
            servers = {s["name"]: s for s in report["toolboxes"][0]["servers"]}
            expect(out.returncode == 0, f"check exited {out.returncode}: {servers}")
            eras = {name: (s.get("era"), s.get("protocol_version")) for name, s in servers.items()}
            expect(eras == {"modern": ("modern", "2026-07-28"), "memory": ("legacy", "2025-11-25")}, f"{eras}")
        await anyio.to_thread.run_sync(check)
    shutil.rmtree(run, ignore_errors=True)


META_TOOLS = ["open_toolbox", "use_tool", "find_tools", "close_toolbox"]


def claude_env(run, api):
    """Claude Code's environment, built from nothing: the fake API with a dummy key; its home,
    config and temporary folders in `run`; no auto-update, telemetry or other nonessential
    traffic (without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC it calls api.anthropic.com
    itself); and the fake API as its proxy, so any other host it tries is recorded and refused."""
    folders = {key: os.path.join(run, "claude", key.lower()) for key in
               ("HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")}
    for folder in folders.values():
        os.makedirs(folder, exist_ok=True)
    return folders | {
        "PATH": os.environ["PATH"], "USER": os.environ.get("USER", "interop"), "TERM": "dumb",
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-interop-dummy",
        "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
        # How long Claude Code waits for an MCP server to connect before its first request.
        "MCP_TIMEOUT": str(CLAUDE_TIMEOUT * 1000 // 2),
        "HTTPS_PROXY": api.url, "HTTP_PROXY": api.url, "NO_PROXY": "127.0.0.1,localhost",
    }


def claude_mcp_config(run, stderr):
    """Claude Code's --mcp-config: the workbench as server `workbench` (its tools are
    mcp__workbench__*), through `sh` only to keep its stderr, which Claude Code swallows."""
    env = workbench_env(run) | {"RUST_LOG": "debug", "IO_WB_STDERR": stderr}
    server = {"command": "sh", "args": ["-c", 'exec "$0" "$@" 2>"$IO_WB_STDERR"', WB, "--config", write_config(run)],
              "env": env}
    path = os.path.join(run, "claude-mcp.json")
    with open(path, "w") as f:
        json.dump({"mcpServers": {"workbench": server}}, f, indent=2)
    return path


def tail(path, lines=40):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-lines:]
    except OSError as e:
        return [f"({e})"]


def meta_tools_in(request, want):
    """What Claude Code's request to the model shows of each meta-tool: "full" (its whole
    definition in `tools`), or why not."""
    sent = {t.get("name"): t for t in request.get("tools", [])}
    text = json.dumps(request)
    shown = {}
    for tool in META_TOOLS:
        name = f"mcp__workbench__{tool}"
        got = sent.get(name)
        if got is None:
            shown[tool] = ("deferred: only its name, behind ToolSearch" if name in text
                           else "missing (the workbench did not connect in time?)")
        elif got.get("defer_loading"):
            shown[tool] = "deferred: defer_loading"
        elif got.get("input_schema") != want[tool]["inputSchema"]:
            shown[tool] = f"input_schema differs: {json.dumps(got.get('input_schema'))[:200]}"
        else:
            shown[tool] = "full"
    return shown


def claude_code_first_request(run):
    """Runs `claude -p` once against the fake API and checks its first request."""
    with log_file("claude-code-workbench-tools-list") as log:
        wb = RawClient([WB, "--config", write_config(run)], workbench_env(run), run, log)
        try:
            wb.handshake()
            _, listed = wb.request("tools/list")
        finally:
            wb.close()
    want = {t["name"]: t for t in listed["result"]["tools"]}
    wb_stderr = os.path.join(LOGS, "claude-code-workbench.log")
    output = os.path.join(LOGS, "claude-code.log")
    try:
        with FakeAnthropic() as api, open(output, "w") as out:
            argv = [CLAUDE, "-p", "Say ok.", "--mcp-config", claude_mcp_config(run, wb_stderr), "--strict-mcp-config"]
            claude = subprocess.Popen(argv, env=claude_env(run, api), cwd=run, stdin=subprocess.DEVNULL,
                                      stdout=out, stderr=subprocess.STDOUT)
            try:
                try:
                    first = api.next_message(timeout=CLAUDE_TIMEOUT)
                except queue.Empty:
                    raise Failure(f"no POST /v1/messages within {CLAUDE_TIMEOUT} s "
                                  f"(Claude Code {'exited ' + str(claude.poll()) if claude.poll() is not None else 'still running'})")
                code = claude.wait(timeout=CLAUDE_TIMEOUT)
            finally:
                if claude.poll() is None:
                    claude.kill()
                    claude.wait()
        with open(os.path.join(LOGS, "claude-code-first-request.json"), "w") as f:
            json.dump(first, f, indent=1)
        info(f"Claude Code asked the fake API: {api.requests}; other hosts: {api.outside or 'none'}")
        shown = meta_tools_in(first, want)
        expect(all(v == "full" for v in shown.values()), f"the first request to the model: {shown}")
        expect(code == 0, f"Claude Code exited {code}")
        expect(not api.outside, f"Claude Code tried other hosts: {api.outside}")
    except Exception:
        info(f"the workbench's stderr ({wb_stderr}), last lines:")
        for line in tail(wb_stderr):
            info(f"  {line}")
        info(f"Claude Code's output ({output}):")
        for line in tail(output):
            info(f"  {line}")
        raise


async def check_claude_code():
    """12: the real Claude Code, whose tool search hides MCP tools from the model by default
    (only their names, to be searched for), in print mode against a fake Messages API: its
    first request to the model carries the four meta-tools' whole definitions, as the
    workbench's `anthropic/alwaysLoad` hints ask."""
    run = new_run_dir()
    async with step("claude-code-first-request-has-meta-tools", timeout=3 * CLAUDE_TIMEOUT):
        await anyio.to_thread.run_sync(claude_code_first_request, run)
    shutil.rmtree(run, ignore_errors=True)


def run_logged(argv, env, cwd, log, timeout=CLAUDE_TIMEOUT):
    """Runs `argv` to its end, its output appended to `log`; its exit code and output."""
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)
    log.write(f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}(exit {done.returncode})\n")
    log.flush()
    return done.returncode, done.stdout + done.stderr


def claude_code_install_and_undo(run):
    """Moves a Claude Code user's server in (import --write, install claude-code --replace),
    lets the real Claude Code run on it (it rewrites ~/.claude.json as it does on every run),
    then undoes the install: Claude Code lists the workbench connected after the install and
    the user's server again after the undo, and what it wrote in between is still there."""
    with FakeAnthropic() as api, log_file("claude-code-install-undo") as log:
        env = claude_env(run, api)
        home = env["HOME"]
        host_file = os.path.join(home, ".claude.json")
        with open(host_file, "w") as f:
            json.dump({"numStartups": 1, "mcpServers": {
                "everything": {"type": "stdio", "command": "node", "args": [EVERYTHING_JS], "env": {}}}},
                f, indent=2)
        config = os.path.join(run, "moved-in.json")
        wb_env = env | {"RUST_LOG": "warn"}
        code, out = run_logged([WB, "import", "--from", "claude-code", "--write", "--no-start",
                                "--config", config], wb_env, run, log)
        expect(code == 0, f"import --write exited {code}: {out[-400:]}")
        code, out = run_logged([WB, "install", "claude-code", "--replace", "--config", config], wb_env, run, log)
        expect(code == 0, f"install claude-code --replace exited {code}: {out[-400:]}")
        with open(host_file) as f:
            servers = json.load(f).get("mcpServers", {})
        expect(list(servers) == ["workbench"], f"after install, ~/.claude.json's servers: {list(servers)}")
        code, listed = run_logged([CLAUDE, "mcp", "list"], env, run, log)
        expect(code == 0 and any("workbench" in line and "Connected" in line for line in listed.splitlines()),
               f"claude mcp list after install (exit {code}): {listed[-600:]}")
        # A run of Claude Code writes its own keys (startups, the project's state, ...).
        with open(host_file) as f:
            before = json.load(f)
        code, out = run_logged([CLAUDE, "-p", "Say ok."], env, run, log)
        expect(code == 0 and api.requests, f"claude -p exited {code}, asked the API {api.requests} times")
        with open(host_file) as f:
            written = json.load(f)
        expect(written != before, "Claude Code's run left ~/.claude.json as it was: nothing to keep")
        code, out = run_logged([WB, "install", "claude-code", "--undo", "--config", config], wb_env, run, log)
        expect(code == 0, f"install claude-code --undo exited {code}: {out[-400:]}")
        with open(host_file) as f:
            after = json.load(f)
        lost = {key for key in written if key != "mcpServers" and after.get(key) != written[key]}
        expect(not lost, f"--undo lost what Claude Code wrote since the install: {sorted(lost)}")
        expect(list(after.get("mcpServers", {})) == ["everything"],
               f"after --undo, ~/.claude.json's servers: {list(after.get('mcpServers', {}))}")
        code, listed = run_logged([CLAUDE, "mcp", "list"], env, run, log)
        expect(code == 0 and any(line.startswith("everything") for line in listed.splitlines())
               and "workbench" not in listed,
               f"claude mcp list after --undo (exit {code}): {listed[-600:]}")
        info(f"Claude Code wrote {sorted(set(written) ^ set(before) or set(k for k in written if written[k] != before.get(k)))} "
             "between the install and the undo; all kept")


async def check_claude_code_install_undo():
    """13: `install claude-code --replace` and `--undo` with the real Claude Code around them."""
    run = new_run_dir()
    async with step("claude-code-install-and-undo-keep-what-it-wrote", timeout=4 * CLAUDE_TIMEOUT):
        await anyio.to_thread.run_sync(claude_code_install_and_undo, run)
    shutil.rmtree(run, ignore_errors=True)


def free_port():
    """A loopback port nothing listens on (for a server told to listen there)."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def wait_for_port(port, timeout=OPEN_TIMEOUT):
    import socket
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            expect(time.monotonic() < deadline, f"nothing listens on port {port}")
            await anyio.sleep(0.1)


async def check_remote_everything():
    """13: server-everything as a remote server of the workbench (docs/reference.md §11),
    over Streamable HTTP and over the legacy HTTP+SSE transport: the toolbox opens with
    both, calls answer, progress comes through, and closing stops both."""
    run = new_run_dir()
    servers, urls = [], {}
    try:
        # It listens on every interface, on the port PORT names; only for the check.
        for mode, var, path in (("streamableHttp", "IO_HTTP_URL", "/mcp"), ("sse", "IO_SSE_URL", "/sse")):
            port = free_port()
            log = log_file(f"everything-{mode}")
            servers.append(subprocess.Popen(["node", EVERYTHING_JS, mode], env=dict(os.environ, PORT=str(port)),
                                            cwd=run, stdout=log, stderr=log))
            await wait_for_port(port)
            urls[var] = f"http://127.0.0.1:{port}{path}"
        params = workbench_params(run, name="remote-config.json")
        params.env.update(urls)
        with log_file("remote-everything") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=OPEN_TIMEOUT) as session:
                    await session.initialize()
                    async with step("remote-everything-open"):
                        opened = await open_toolbox(session, "remote")
                        expect(opened["servers_connected"] == 2, f"{opened}")
                        for server in ("http", "sse"):
                            got = [t["name"] for t in opened["tools"] if t["source_server"] == server]
                            expect(sorted(got) == sorted(EXPECTED_TOOLS["everything"]), f"{server} tools: {got}")

                    for server in ("http", "sse"):
                        async with step(f"remote-everything-{server}-echo"):
                            result = await use_tool(session, "remote", server, "echo", {"message": f"via {server}"})
                            expect(text_of(result) == f"Echo: via {server}", f"echo gave {text_of(result)!r}")

                    async with step("remote-everything-http-progress"):
                        progress = []

                        async def on_progress(value, total, message):
                            progress.append((value, total))

                        result = await use_tool(session, "remote", "http", "trigger-long-running-operation",
                                                {"duration": 2, "steps": 4}, progress_callback=on_progress)
                        expect(progress == [(1, 4), (2, 4), (3, 4), (4, 4)], f"progress seen: {progress}")
                        expect("completed" in text_of(result).lower(), f"result {text_of(result)!r}")

                    async with step("remote-everything-close"):
                        result = await session.call_tool("close_toolbox", {"toolbox_name": "remote"})
                        expect(text_of(result) == "Toolbox 'remote' closed (2 servers stopped)", text_of(result))
    finally:
        for server in servers:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(run, ignore_errors=True)


async def check_scripts():
    """§13: `tools` and `call` from a script against the real servers: list,
    describe, call (one, --json, --batch), the usage error of a missing
    argument, no secret in any output, no process left."""
    run = new_run_dir()
    config = write_config(run)
    env = workbench_env(run)

    def wb(*args, stdin=""):
        done = subprocess.run([WB, *args, "--config", config], env=env, cwd=run, input=stdin,
                              capture_output=True, text=True, timeout=OPEN_TIMEOUT)
        expect("must-not-leak" not in done.stdout + done.stderr, f"the secret in {args}")
        return done.returncode, done.stdout, done.stderr

    async with step("scripts-tools-and-call"):
        code, out, err = wb("tools")
        expect(code == 0, f"tools: exit {code}: {err[-500:]}")
        lines = out.splitlines()
        for name in ("everything/everything/echo", "everything/time/get_current_time", "dev/memory/read_graph"):
            expect(any(line.startswith(name + "  ") or line == name for line in lines), f"{name} not in {out[:800]}")
        code, out, err = wb("tools", "everything/time/convert_time")
        expect(code == 0 and "(string, required)" in out and "mcp-workbench call everything/time/convert_time" in out,
               f"describe: exit {code}: {out}{err}")
        code, out, err = wb("call", "everything/everything/echo", "message=hello from a script")
        expect(code == 0 and "hello from a script" in out, f"echo: exit {code}: {out}{err}")
        code, out, err = wb("call", "everything/everything/get-sum", '{"a": 2, "b": 3}', "--json")
        result = json.loads(out)
        expect(code == 0 and "5" in result["content"][0]["text"], f"get-sum: exit {code}: {out}{err}")
        code, out, err = wb("call", "everything/time/get_current_time")
        expect(code == 2 and "'timezone'" in err, f"missing timezone: exit {code}: {err}")
        batch = "\n".join(json.dumps(line) for line in (
            {"tool": "everything/time/get_current_time", "arguments": {"timezone": "UTC"}},
            {"tool": "everything/everything/echo", "arguments": {"message": "second"}},
            {"tool": "everything/everything/nope"},
        ))
        code, out, err = wb("call", "--batch", stdin=batch)
        answers = [json.loads(line) for line in out.splitlines()]
        expect(code == 1 and len(answers) == 3, f"batch: exit {code}: {out}{err}")
        expect("datetime" in answers[0]["result"]["content"][0]["text"], f"batch 1: {answers[0]}")
        expect("second" in answers[1]["result"]["content"][0]["text"], f"batch 2: {answers[1]}")
        expect("unknown tool 'nope'" in answers[2]["error"], f"batch 3: {answers[2]}")
        # A workbench's watchdog (whose command line names the config) ends
        # just after the workbench: wait for it as for anything else.
        deadline = time.monotonic() + 5
        while (left := processes_in(run)) and time.monotonic() < deadline:
            await anyio.sleep(0.1)
        expect(not left, f"left after the calls: {left}")
    shutil.rmtree(run, ignore_errors=True)


async def main():
    started = time.monotonic()
    checks = (check_sdk_and_real_servers, check_auto_mode, check_inspector, check_isolation,
              check_exact_passthrough, check_dynamic_validation, check_shutdown, check_era_bridge,
              check_remote_everything, check_claude_code, check_claude_code_install_undo, check_scripts)
    # IO_CHECKS=check_era_bridge,... runs only those (while working on one area).
    only = [name for name in os.environ.get("IO_CHECKS", "").split(",") if name]
    for check in (c for c in checks if not only or c.__name__ in only):
        try:
            await check()
        except Exception as e:  # noqa: BLE001 - a check that could not even start
            failed.append(check.__name__)
            print(f"FAIL {check.__name__}: {describe(e)}", flush=True)
    async with step("no-process-left", timeout=10):
        await anyio.sleep(0.5)
        left = processes_in(SESSION)
        expect(not left, f"{left}")
    shutil.rmtree(SESSION, ignore_errors=True)
    info(f"checks took {time.monotonic() - started:.0f} s; logs in {LOGS}")
    print(f"{len(passed)} passed, {len(failed)} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
