"""A tiny cloud for the HTTP probe: clusters and machines in memory, keyed as the probe keys
them, served on 127.0.0.1. It writes its port to the file named by its only argument, and
stops by itself after ten minutes.

    PUT    /clusters/UID          -> {"state": "creating"}, then {"state": "ready", "host", "port"}
    DELETE /clusters/UID          -> {"state": "deleted"}
    PUT    /machines/KEY          -> {"id", "name", "state": "booting"}, then "running"
    GET    /machines?cluster=UID  -> [{"key", "id", "name", "state"}, ...]
    DELETE /machines/KEY          -> {"state": "deleted"}
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CLUSTERS: dict[str, int] = {}
MACHINES: dict[str, dict] = {}
LOCK = threading.Lock()


class Cloud(BaseHTTPRequestHandler):
    def answer(self, status: int, value: object) -> None:
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read(self) -> dict:
        length = int(self.headers.get("content-length", 0))
        return json.loads(self.rfile.read(length) or b"{}")

    def do_PUT(self) -> None:
        kind, _, name = urlsplit(self.path).path.strip("/").partition("/")
        body = self.read()
        with LOCK:
            if kind == "clusters":
                seen = CLUSTERS[name] = CLUSTERS.get(name, 0) + 1
                if seen < 2:
                    return self.answer(200, {"state": "creating"})
                return self.answer(200, {"state": "ready", "host": "lb.probe.test", "port": 6443})
            if kind == "machines":
                machine = MACHINES.get(name)
                if machine is None:
                    machine = MACHINES[name] = {
                        "key": name,
                        "id": f"i-{len(MACHINES) + 1}",
                        "name": body["name"],
                        "cluster": body["cluster"],
                        "state": "booting",
                    }
                else:
                    machine["state"] = "running"
                return self.answer(200, machine)
        self.answer(404, {"error": "no such kind"})

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        cluster = parse_qs(url.query).get("cluster", [""])[0]
        with LOCK:
            listed = [m for m in MACHINES.values() if m["cluster"] == cluster]
        self.answer(200, listed)

    def do_DELETE(self) -> None:
        kind, _, name = urlsplit(self.path).path.strip("/").partition("/")
        with LOCK:
            (CLUSTERS if kind == "clusters" else MACHINES).pop(name, None)
        self.answer(200, {"state": "deleted"})

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write("backend: " + format % args + "\n")


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Cloud)
    with open(sys.argv[1], "w") as port_file:
        port_file.write(str(server.server_address[1]))
    threading.Timer(600, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
