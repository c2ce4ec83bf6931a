#!/usr/bin/env python3
"""One Lambda invocation of a custom-runtime `bootstrap`, through the Lambda Runtime API.

    lambda-runtime-emulator.py --event FILE --result FILE [--timeout S] [--log FILE]
                               [--function-name NAME] -- COMMAND...

Serves the Runtime API (version 2018-06-01, as AWS documents it: "Using the Lambda runtime API
for custom runtimes") on a free loopback port, starts COMMAND with AWS_LAMBDA_RUNTIME_API
pointing at it, hands the event in FILE to its first `GET /runtime/invocation/next`, and waits
for the function's answer:

  POST /runtime/invocation/{id}/response   the result         -> exit 0
  POST /runtime/invocation/{id}/error      a function error   -> exit 1
  POST /runtime/init/error                 an init error      -> exit 1
  COMMAND exits first, or --timeout passes                    -> exit 1

Each of those POSTs gets 202 Accepted, as from Lambda. The second `next` is held, as Lambda
holds it while no event is queued; then COMMAND is stopped (TERM, then KILL) and --result gets
one JSON document: {"kind": "response"|"error"|"init_error"|"exited"|"timeout", "body": ...,
"error_type": the Lambda-Runtime-Function-Error-Type header, "exit_code": ...}. The body is the
function's JSON (or text when it is not JSON). COMMAND's output goes to --log (default: ours).

COMMAND inherits our environment plus AWS_LAMBDA_RUNTIME_API; the caller sets the rest
(AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_MEMORY_SIZE, ... as Lambda would). Stdlib only.
"""

import argparse
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

API = "/2018-06-01/runtime"


class Invocation:
    """The one event handed out, and what the function answered."""

    def __init__(self, event: bytes, timeout: float, function_arn: str):
        self.event = event
        self.request_id = str(uuid.uuid4())
        self.timeout = timeout
        self.function_arn = function_arn
        self.handed_out = False
        self.outcome = None  # (kind, body bytes, error type)
        self.lock = threading.Lock()
        self.done = threading.Event()

    def record(self, kind, body, error_type):
        """The first outcome counts; the wait goes on until `finish`."""
        with self.lock:
            if self.outcome is None:
                self.outcome = (kind, body, error_type)

    def finish(self, kind, body, error_type):
        self.record(kind, body, error_type)
        self.done.set()


def handler_for(inv: Invocation):
    class RuntimeApi(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # the function's own log is what matters
            pass

        def body(self) -> bytes:
            # lambda_runtime sends a buffered response with Content-Length, a streamed one chunked.
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                out = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def reply(self, status: int, payload: bytes, headers=()):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self):
            if self.path != f"{API}/invocation/next":
                return self.reply(404, b'{"errorMessage":"not found","errorType":"InvalidRequest"}')
            if inv.handed_out:
                # No second event: hold the call, as Lambda does until the next invoke.
                inv.done.wait()
                time.sleep(3600)
                return
            inv.handed_out = True
            deadline_ms = int((time.time() + inv.timeout) * 1000)
            trace = f"Root=1-{int(time.time()):08x}-{uuid.uuid4().hex[:24]};Parent={uuid.uuid4().hex[:16]};Sampled=0"
            self.reply(
                200,
                inv.event,
                [
                    ("Lambda-Runtime-Aws-Request-Id", inv.request_id),
                    ("Lambda-Runtime-Deadline-Ms", str(deadline_ms)),
                    ("Lambda-Runtime-Invoked-Function-Arn", inv.function_arn),
                    ("Lambda-Runtime-Trace-Id", trace),
                ],
            )

        def do_POST(self):
            body = self.body()
            error_type = self.headers.get("Lambda-Runtime-Function-Error-Type")
            if self.path == f"{API}/init/error":
                kind = "init_error"
            elif self.path == f"{API}/invocation/{inv.request_id}/response":
                kind = "response"
            elif self.path == f"{API}/invocation/{inv.request_id}/error":
                kind = "error"
            else:
                # An unknown request id or path: Lambda answers 400 / 404.
                return self.reply(400, b'{"errorMessage":"unknown request id or path","errorType":"InvalidRequestID"}')
            # Recorded before the 202: a function that exits as soon as it has its answer (an
            # init error) must not be taken for one that exited without a word.
            inv.record(kind, body, error_type)
            self.reply(202, b'{"status":"OK"}')
            inv.finish(kind, body, error_type)

    return RuntimeApi


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # The function stopped with a call open (the held `next`): expected, not worth a trace.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def decode(body: bytes):
    try:
        return json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")


def stop(child: subprocess.Popen):
    if child.poll() is not None:
        return
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(5)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--event", required=True)
    p.add_argument("--result", required=True)
    p.add_argument("--timeout", type=float, default=300, help="the function's Timeout (s)")
    p.add_argument("--log")
    p.add_argument("--function-name", default=os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "function"))
    p.add_argument("command", nargs="+")
    args = p.parse_args()

    with open(args.event, "rb") as f:
        event = f.read()
    json.loads(event)  # a bad event file is our error, not the function's
    region = os.environ.get("AWS_REGION", "us-east-1")
    arn = f"arn:aws:lambda:{region}:123456789012:function:{args.function_name}"
    inv = Invocation(event, args.timeout, arn)

    server = Server(("127.0.0.1", 0), handler_for(inv))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ, AWS_LAMBDA_RUNTIME_API=f"127.0.0.1:{server.server_port}")

    log = open(args.log, "ab") if args.log else None
    child = subprocess.Popen(args.command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    # The child exiting ends the wait too (a panic, or a runtime that gave up).
    threading.Thread(target=lambda: (child.wait(), inv.finish("exited", b"", None)), daemon=True).start()
    # A little more than the function's timeout: start-up under qemu is not counted by Lambda.
    if not inv.done.wait(args.timeout + 60):
        inv.finish("timeout", b"", None)
    stop(child)
    server.shutdown()
    if log:
        log.close()

    kind, body, error_type = inv.outcome
    result = {"kind": kind, "body": decode(body), "error_type": error_type, "exit_code": child.returncode}
    with open(args.result, "w") as f:
        json.dump(result, f, indent=1)
    return 0 if kind == "response" else 1


if __name__ == "__main__":
    sys.exit(main())
