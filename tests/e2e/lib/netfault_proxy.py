#!/usr/bin/env python3
"""A fault-injecting TCP proxy for the e2e network tests (not a test itself).

  netfault_proxy.py --listen HOST:PORT --to HOST:PORT [--delay MS] [--jitter MS]
                    [--stall-prob P --stall MS] [--drop-prob P] [--seed N] [--switch FILE]

Forwards every connection made to --listen to --to, byte for byte and in order, and while
FILE exists (always, without --switch) makes each chunk read from either side
  - wait DELAY (+ up to JITTER) ms before it goes on (order kept: a later chunk never
    overtakes an earlier one);
  - with probability P (--stall-prob), stall the direction for --stall ms first (a burst
    of loss that TCP would retransmit through);
  - with probability --drop-prob, end the connection, both sides (the peers reconnect).
The faults are drawn from --seed (one stream per connection, in the order connections
come), so a run can be replayed. Prints "listening HOST:PORT" once it listens, and one
line per dropped connection. No network netem here: this is where delay comes from.
"""
import argparse
import asyncio
import os
import random
import sys


def hostport(text):
    host, _, port = text.rpartition(":")
    return host, int(port)


class Faults:
    def __init__(self, args, seed):
        self.args = args
        self.rng = random.Random(seed)

    def active(self):
        return self.args.switch is None or os.path.exists(self.args.switch)


async def pump(reader, writer, faults, other_writer):
    """One direction: reads chunks, forwards each when due."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()
    a = faults.args

    async def send():
        while True:
            item = await queue.get()
            if item is None:
                break
            due, data = item
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.ensure_future(send())
    last_due = 0.0
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            due = loop.time()
            if faults.active():
                if a.drop_prob > 0 and faults.rng.random() < a.drop_prob:
                    print("dropped a connection", flush=True)
                    other_writer.close()
                    break
                if a.stall_prob > 0 and faults.rng.random() < a.stall_prob:
                    due += a.stall / 1000.0
                due += (a.delay + faults.rng.random() * a.jitter) / 1000.0
            last_due = max(last_due, due)
            await queue.put((last_due, data))
    except (ConnectionError, OSError):
        pass
    await queue.put(None)
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", required=True, type=hostport)
    p.add_argument("--to", required=True, type=hostport)
    p.add_argument("--delay", type=float, default=0)
    p.add_argument("--jitter", type=float, default=0)
    p.add_argument("--stall-prob", type=float, default=0)
    p.add_argument("--stall", type=float, default=0)
    p.add_argument("--drop-prob", type=float, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--switch")
    args = p.parse_args()
    counter = [0]

    async def handle(creader, cwriter):
        counter[0] += 1
        faults = Faults(args, args.seed * 1000003 + counter[0])
        try:
            sreader, swriter = await asyncio.open_connection(*args.to)
        except OSError:
            cwriter.close()
            return
        await asyncio.gather(pump(creader, swriter, faults, cwriter),
                             pump(sreader, cwriter, faults, swriter))

    server = await asyncio.start_server(handle, *args.listen)
    print("listening %s:%d" % args.listen, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
