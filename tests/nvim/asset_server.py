"""A loopback stand-in for the release download host, for tests/nvim/install*_spec.lua.

Usage: asset_server.py DIR  -- serves DIR on 127.0.0.1 (a free port, printed as "port N" on the
first line of stdout) until stdin closes.

Paths under /truncate/ serve the same files, but announce the full Content-Length and close the
connection after half of the body: a download cut off mid-way.
Every request is appended to DIR/requests.log (one path a line).
"""

import http.server
import os
import sys
import threading


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):  # quiet
        pass

    def do_GET(self):
        with open(os.path.join(self.server.root, "requests.log"), "a") as f:
            f.write(self.path + "\n")
        if self.path.startswith("/truncate/"):
            rel = self.path[len("/truncate/"):]
            path = os.path.join(self.server.root, rel)
            if not os.path.isfile(path):
                self.send_error(404)
                return
            data = open(path, "rb").read()
            if path.endswith(".sha256"):
                body = data
            else:
                body = data[: len(data) // 2]
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()


def main():
    root = os.path.abspath(sys.argv[1])

    def handler(*args, **kwargs):
        return Handler(*args, directory=root, **kwargs)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.root = root
    print(f"port {srv.server_address[1]}", flush=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    sys.stdin.read()
    srv.shutdown()


if __name__ == "__main__":
    main()
