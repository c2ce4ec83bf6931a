#!/usr/bin/env python3
"""A function's init time on this machine: from spawning its bootstrap to its first
`GET /runtime/invocation/next` on a Lambda Runtime API emulator (what Lambda counts as the
init phase of a custom runtime: everything the process does before it asks for an event).

    init-time.py [--runs N] [--runner CMD] BOOTSTRAP...

For each BOOTSTRAP, N runs (default 15), each a fresh process with AWS_LAMBDA_RUNTIME_API
pointing at a loopback server, the variables Lambda sets, test credentials and Region, and
no policy (the defaults); the process is stopped (TERM, then KILL) once it asked for an
event, before any AWS call. Prints one line per bootstrap: its size in bytes and the init
time's min / median / max in milliseconds. The first run of each is a warm-up (page cache)
and is not counted. --runner runs each bootstrap under CMD (e.g. `qemu-aarch64-static -L
/usr/aarch64-linux-gnu` for the arm64 bootstraps `sam build` makes: an emulated time, to compare
two builds with, not Lambda's). Stdlib only; a measurement, not a test.
"""

import argparse
import http.server
import os
import shlex
import statistics
import subprocess
import sys
import threading
import time

NEXT = "/2018-06-01/runtime/invocation/next"


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        self.asked = threading.Event()
        self.asked_at = None
        super().__init__(("127.0.0.1", 0), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == NEXT and not self.server.asked.is_set():
            self.server.asked_at = time.perf_counter()
            self.server.asked.set()
        # Hold the request: no event is ever handed out.
        time.sleep(5)

    def do_POST(self):
        # An init error, or anything else: record it and answer as Lambda does.
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length)
        sys.stderr.write(f"init-time: POST {self.path}: {body[:300]!r}\n")
        self.send_response(202)
        self.end_headers()

    def log_message(self, *args):
        pass


def environment(port: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ROLLOVER_"))}
    env.update(
        {
            "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{port}",
            "AWS_LAMBDA_FUNCTION_NAME": "init-time",
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
            "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/init-time",
            "AWS_LAMBDA_LOG_STREAM_NAME": "init-time",
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_LAMBDA_LOG_FORMAT": "JSON",
        }
    )
    return env


def one_run(bootstrap: str, runner: list) -> float:
    server = Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        started = time.perf_counter()
        process = subprocess.Popen(
            runner + [bootstrap],
            env=environment(server.server_address[1]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            if not server.asked.wait(30):
                raise SystemExit(f"init-time: {bootstrap} asked for no event within 30 s")
            return (server.asked_at - started) * 1000
        finally:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--runner", default="", help="a command to run each bootstrap under")
    parser.add_argument("bootstraps", nargs="+")
    args = parser.parse_args()
    print(f"{'bootstrap':<56} {'bytes':>10} {'min ms':>7} {'median':>7} {'max ms':>7}  (runs: {args.runs})")
    for bootstrap in args.bootstraps:
        runner = shlex.split(args.runner)
        one_run(bootstrap, runner)
        times = [one_run(bootstrap, runner) for _ in range(args.runs)]
        size = os.path.getsize(bootstrap)
        print(
            f"{bootstrap:<56} {size:>10} {min(times):>7.1f} {statistics.median(times):>7.1f} {max(times):>7.1f}"
        )


if __name__ == "__main__":
    main()
