"""A loopback stand-in for the release download host, for tests/nvim/install*_spec.lua.

Usage: asset_server.py DIR CERT KEY  -- serves DIR on 127.0.0.1 over https (CERT/KEY: a
throwaway self-signed certificate the test made) and over plain http, each on a free port,
printed as "port N" and "http_port M" on stdout, until stdin closes.

Paths under /truncate/ serve the same files, but announce the full Content-Length and close the
connection after half of the body: a download cut off mid-way.
Paths under /redirect-http/ answer 302 to the same path (without the prefix) on the plain-http
port: a redirect away from https.
Every request is appended to DIR/requests.log (one a line: "https <path>" or "http <path>").
"""

import http.server
import os
import ssl
import sys
import threading


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):  # quiet
        pass

    def do_GET(self):
        with open(os.path.join(self.server.root, "requests.log"), "a") as f:
            f.write(f"{self.server.scheme} {self.path}\n")
        if self.path.startswith("/redirect-http/"):
            rest = self.path[len("/redirect-http"):]
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{self.server.http_port}{rest}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/truncate/"):
            rel = self.path[len("/truncate/"):]
            path = os.path.join(self.server.root, rel)
            if not os.path.isfile(path):
                self.send_error(404)
                return
            data = open(path, "rb").read()
            body = data[: len(data) // 2]
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()


def serve(root, scheme, ctx=None):
    def handler(*args, **kwargs):
        return Handler(*args, directory=root, **kwargs)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if ctx is not None:
        # The TLS handshake happens in the request's thread, not in the accepting one.
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    srv.root = root
    srv.scheme = scheme
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def main():
    root = os.path.abspath(sys.argv[1])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[2], sys.argv[3])
    plain = serve(root, "http")
    secure = serve(root, "https", ctx)
    for s in (plain, secure):
        s.http_port = plain.server_address[1]
    print(f"port {secure.server_address[1]}", flush=True)
    print(f"http_port {plain.server_address[1]}", flush=True)
    sys.stdin.read()
    secure.shutdown()
    plain.shutdown()


if __name__ == "__main__":
    main()
