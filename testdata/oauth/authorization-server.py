#!/usr/bin/env python3
"""A small OAuth 2.1 authorization server with a protected MCP endpoint, for
the sign-in tests. Python standard library only.

It plays both parts a remote MCP server has when it asks for a sign-in:

- the protected resource: `/mcp`, a minimal Streamable HTTP MCP endpoint
  (initialize, tools/list with one tool `echo`, tools/call `echo`, ping) that
  answers 401 with `WWW-Authenticate: Bearer resource_metadata=...` unless the
  request carries a valid access token, and its protected-resource metadata
  (RFC 9728) at `/.well-known/oauth-protected-resource[/mcp]`;
- the authorization server: its metadata (RFC 8414) at
  `/.well-known/oauth-authorization-server`, dynamic client registration
  (RFC 7591) at `/register`, `/authorize` that approves at once (a 302 to the
  redirect with `code`, `state` and `iss`, RFC 9207), and `/token` with the
  `authorization_code` grant (PKCE S256 checked, `resource` checked) and the
  `refresh_token` grant. Refresh tokens are single-use and rotate: presenting
  a spent one revokes its whole family (its access and refresh tokens), as
  real servers do.

What real servers cannot do on demand, it can: access tokens live
`--access-ttl` seconds, `--token-delay` slows the token endpoint (to widen a
race), `POST /expire` expires every access token now, `POST /revoke` revokes
every token family (as a user revoking the app's access would), and
`GET /stats` counts what happened (`refresh_requests` above all).

Run: `authorization-server.py [--port 0] [--access-ttl 3600] [--token-delay 0]`.
The first line on stdout is `{"port": N}`; requests are logged on stderr.
"""

import argparse
import base64
import hashlib
import json
import secrets
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
ECHO = {
    "name": "echo",
    "description": "Says back the text it is given.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


class State:
    """Everything the server knows, under one lock."""

    def __init__(self, access_ttl, token_delay):
        self.lock = threading.Lock()
        self.access_ttl = access_ttl
        self.token_delay = token_delay
        self.clients = {}  # client_id -> registration
        self.codes = {}  # code -> grant
        self.access = {}  # token -> {expires, family, scope}
        self.refresh = {}  # token -> {family, spent, client_id, scope, resource}
        self.revoked = set()  # families
        self.stats = {
            "registrations": 0,
            "authorizations": 0,
            "code_exchanges": 0,
            "refresh_requests": 0,
            "refreshes_refused": 0,
            "revoked_families": 0,
            "mcp_requests": 0,
            "mcp_unauthorized": 0,
        }

    def issue(self, family, client_id, scope, resource):
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.access[access] = {
            "expires": time.time() + self.access_ttl,
            "family": family,
        }
        self.refresh[refresh] = {
            "family": family,
            "spent": False,
            "client_id": client_id,
            "scope": scope,
            "resource": resource,
        }
        body = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.access_ttl,
            "refresh_token": refresh,
        }
        if scope:
            body["scope"] = scope
        return body

    def revoke(self, family):
        self.revoked.add(family)
        self.stats["revoked_families"] += 1
        for token in [t for t, a in self.access.items() if a["family"] == family]:
            del self.access[token]

    def valid(self, token):
        entry = self.access.get(token)
        return (
            entry is not None
            and entry["expires"] > time.time()
            and entry["family"] not in self.revoked
        )


def challenge_of(verifier):
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def loopback_match(registered, given):
    """RFC 8252 7.3: a loopback redirect matches on any port."""
    a, b = urllib.parse.urlsplit(registered), urllib.parse.urlsplit(given)
    if a.hostname in ("127.0.0.1", "::1") and a.scheme == "http":
        return (a.scheme, a.hostname, a.path) == (b.scheme, b.hostname, b.path)
    return registered == given


class Handler(BaseHTTPRequestHandler):
    server_version = "oauth-test-server/1"

    # --- plumbing

    @property
    def state(self):
        return self.server.state

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def log_message(self, fmt, *args):
        sys.stderr.write("%s\n" % (fmt % args))

    def send_json(self, status, body, headers=()):
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_empty(self, status, headers=()):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def oauth_error(self, status, error, description):
        self.send_json(status, {"error": error, "error_description": description})

    # --- routes

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path in (
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ):
            return self.send_json(
                200,
                {
                    "resource": self.base + "/mcp",
                    "authorization_servers": [self.base],
                    "scopes_supported": ["mcp:tools"],
                    "bearer_methods_supported": ["header"],
                },
            )
        if url.path == "/.well-known/oauth-authorization-server":
            return self.send_json(
                200,
                {
                    "issuer": self.base,
                    "authorization_endpoint": self.base + "/authorize",
                    "token_endpoint": self.base + "/token",
                    "registration_endpoint": self.base + "/register",
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "authorization_response_iss_parameter_supported": True,
                    "scopes_supported": ["mcp:tools"],
                },
            )
        if url.path == "/authorize":
            return self.authorize(dict(urllib.parse.parse_qsl(url.query)))
        if url.path == "/stats":
            with self.state.lock:
                return self.send_json(200, dict(self.state.stats))
        if url.path == "/mcp":
            if not self.authorized():
                return None
            return self.send_empty(405, [("Allow", "POST, DELETE")])
        return self.send_json(404, {"error": "not found"})

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/register":
            return self.register()
        if path == "/token":
            return self.token()
        if path == "/expire":
            with self.state.lock:
                for entry in self.state.access.values():
                    entry["expires"] = 0
            return self.send_empty(204)
        if path == "/revoke":
            with self.state.lock:
                families = {e["family"] for e in self.state.refresh.values()}
                for family in families - self.state.revoked:
                    self.state.revoke(family)
            return self.send_empty(204)
        if path == "/mcp":
            return self.mcp()
        return self.send_json(404, {"error": "not found"})

    def do_DELETE(self):
        if urllib.parse.urlsplit(self.path).path == "/mcp" and self.authorized():
            return self.send_empty(200)
        return None

    # --- the authorization server

    def register(self):
        try:
            request = json.loads(self.body() or b"{}")
        except ValueError:
            return self.oauth_error(400, "invalid_client_metadata", "not JSON")
        uris = request.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            return self.oauth_error(400, "invalid_redirect_uri", "redirect_uris is required")
        client_id = "client-" + secrets.token_urlsafe(8)
        registration = {
            "client_id": client_id,
            "client_id_issued_at": int(time.time()),
            "client_name": request.get("client_name"),
            "redirect_uris": uris,
            "grant_types": request.get("grant_types", ["authorization_code"]),
            "token_endpoint_auth_method": "none",
        }
        with self.state.lock:
            self.state.clients[client_id] = registration
            self.state.stats["registrations"] += 1
        return self.send_json(201, registration)

    def authorize(self, q):
        with self.state.lock:
            client = self.state.clients.get(q.get("client_id"))
            if client is None:
                return self.send_json(400, {"error": "unknown client_id"})
            redirect = q.get("redirect_uri", "")
            if not any(loopback_match(r, redirect) for r in client["redirect_uris"]):
                return self.send_json(400, {"error": "redirect_uri not registered"})
            problem = None
            if q.get("response_type") != "code":
                problem = ("unsupported_response_type", "response_type must be code")
            elif q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
                problem = ("invalid_request", "PKCE with S256 is required")
            elif q.get("resource") != self.base + "/mcp":
                problem = ("invalid_target", "resource must be this server's MCP endpoint")
            params = {"state": q.get("state", ""), "iss": self.base}
            if problem:
                params.update(error=problem[0], error_description=problem[1])
            else:
                code = "code-" + secrets.token_urlsafe(16)
                self.state.codes[code] = {
                    "client_id": client["client_id"],
                    "redirect_uri": redirect,
                    "challenge": q["code_challenge"],
                    "resource": q.get("resource"),
                    "scope": q.get("scope", ""),
                    "used": False,
                }
                self.state.stats["authorizations"] += 1
                params["code"] = code
        separator = "&" if "?" in redirect else "?"
        self.send_empty(302, [("Location", redirect + separator + urllib.parse.urlencode(params))])
        return None

    def token(self):
        form = dict(urllib.parse.parse_qsl(self.body().decode("utf-8", "replace")))
        if self.state.token_delay:
            time.sleep(self.state.token_delay)
        grant = form.get("grant_type")
        with self.state.lock:
            if grant == "authorization_code":
                return self.code_grant(form)
            if grant == "refresh_token":
                return self.refresh_grant(form)
        return self.oauth_error(400, "unsupported_grant_type", "grant_type %r" % grant)

    def code_grant(self, form):
        state = self.state
        state.stats["code_exchanges"] += 1
        grant = state.codes.get(form.get("code", ""))
        if grant is None or grant["used"]:
            return self.oauth_error(400, "invalid_grant", "unknown or used code")
        grant["used"] = True
        if form.get("client_id") != grant["client_id"]:
            return self.oauth_error(400, "invalid_grant", "the code is another client's")
        if form.get("redirect_uri") != grant["redirect_uri"]:
            return self.oauth_error(400, "invalid_grant", "redirect_uri differs")
        if challenge_of(form.get("code_verifier", "")) != grant["challenge"]:
            return self.oauth_error(400, "invalid_grant", "PKCE verification failed")
        if form.get("resource") != grant["resource"]:
            return self.oauth_error(400, "invalid_target", "resource differs")
        family = secrets.token_urlsafe(8)
        body = state.issue(family, grant["client_id"], grant["scope"], grant["resource"])
        return self.send_json(200, body)

    def refresh_grant(self, form):
        state = self.state
        state.stats["refresh_requests"] += 1
        entry = state.refresh.get(form.get("refresh_token", ""))

        def refuse(description):
            state.stats["refreshes_refused"] += 1
            return self.oauth_error(400, "invalid_grant", description)

        if entry is None:
            return refuse("unknown refresh token")
        if entry["family"] in state.revoked:
            return refuse("the token family was revoked")
        if entry["spent"]:
            state.revoke(entry["family"])
            return refuse("refresh token reused: its family is revoked")
        if form.get("client_id") != entry["client_id"]:
            return refuse("the refresh token is another client's")
        if form.get("resource") not in (None, entry["resource"]):
            return self.oauth_error(400, "invalid_target", "resource differs")
        entry["spent"] = True
        body = state.issue(entry["family"], entry["client_id"], entry["scope"], entry["resource"])
        return self.send_json(200, body)

    # --- the protected resource

    def authorized(self):
        header = self.headers.get("Authorization", "")
        token = header[7:] if header.startswith("Bearer ") else None
        with self.state.lock:
            self.state.stats["mcp_requests"] += 1
            if token is not None and self.state.valid(token):
                return True
            self.state.stats["mcp_unauthorized"] += 1
        challenge = 'Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"' % self.base
        if token is not None:
            challenge += ', error="invalid_token"'
        self.send_json(401, {"error": "unauthorized"}, [("WWW-Authenticate", challenge)])
        return False

    def mcp(self):
        data = self.body()
        if not self.authorized():
            return None
        try:
            message = json.loads(data)
        except ValueError:
            return self.send_json(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        if not isinstance(message, dict):
            return self.send_json(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}})
        if "id" not in message:
            return self.send_empty(202)
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            asked = params.get("protocolVersion")
            result = {
                "protocolVersion": asked if asked in SUPPORTED else SUPPORTED[1],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "oauth-test-server", "version": "1"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [ECHO]}
        elif method == "tools/call" and params.get("name") == "echo":
            text = (params.get("arguments") or {}).get("text", "")
            result = {"content": [{"type": "text", "text": str(text)}]}
        else:
            error = {"code": -32601, "message": "Method not found: %s" % method}
            return self.send_json(200, {"jsonrpc": "2.0", "id": message["id"], "error": error})
        return self.send_json(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--access-ttl", type=int, default=3600)
    parser.add_argument("--token-delay", type=float, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.state = State(args.access_ttl, args.token_delay)
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
