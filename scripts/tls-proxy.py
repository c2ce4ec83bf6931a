#!/usr/bin/env python3
"""A TLS-terminating TCP proxy on loopback: HTTPS in, plain bytes out to an upstream port.

    tls-proxy.py --cert PEM --key PEM --upstream HOST:PORT [--owner-pid PID]

Puts TLS in front of a plain-HTTP local server (moto), so a client reaches it over HTTPS the way
the Lambda functions reach DynamoDB, with a certificate only the caller's private CA trusts.
Listens on a free port of 127.0.0.1 and prints that port on its first line of stdout once it
accepts connections. Bytes are copied both ways unchanged (HTTP/1.1 keep-alive included; ALPN
offers http/1.1 only, which is what moto speaks). Stops on SIGTERM, or once --owner-pid has
exited (a killed caller leaves no proxy behind). Stdlib only (asyncio, ssl).
"""

import argparse
import asyncio
import os
import signal
import ssl
import sys


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cert", required=True, help="server certificate chain (PEM)")
    p.add_argument("--key", required=True, help="its private key (PEM)")
    p.add_argument("--upstream", required=True, help="HOST:PORT of the plain server")
    p.add_argument("--owner-pid", type=int)
    args = p.parse_args()
    up_host, up_port = args.upstream.rsplit(":", 1)

    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.minimum_version = ssl.TLSVersion.TLSv1_2
    tls.load_cert_chain(args.cert, args.key)
    tls.set_alpn_protocols(["http/1.1"])

    async def serve(client_r, client_w):
        try:
            up_r, up_w = await asyncio.open_connection(up_host, int(up_port))
        except OSError:
            client_w.close()
            return
        await asyncio.gather(pipe(client_r, up_w), pipe(up_r, client_w))

    # A failed handshake (e.g. a client that does not trust the certificate) is the client's
    # business: it sees the alert; nothing to log here.
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, _ctx: None)
    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=tls)
    print(server.sockets[0].getsockname()[1], flush=True)

    stopping = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    loop.add_signal_handler(signal.SIGINT, stopping.set)

    async def watch_owner():
        while args.owner_pid:
            try:
                os.kill(args.owner_pid, 0)
            except ProcessLookupError:
                stopping.set()
                return
            await asyncio.sleep(1)

    watcher = asyncio.create_task(watch_owner())
    await stopping.wait()
    watcher.cancel()
    server.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
