"""The controller's example configuration file (control_plane/examples/router.yaml,
read by ratelab_ctl as `ratelab-ctl push` reads it) as a full-core case: two
senders into the 10 Mbit/s RED bottleneck (port 3), the receiver's ACKs back,
and a few frames the router drops; the expected results come from the model."""

from __future__ import annotations

import random
from typing import Any

from ratelab_ctl import ControllerConfig, load_config
from ratelab_model.vectors.runner import expected_results
from ratelab_model.vectors.schema import InputFrame, VectorCase

from frames import IPPROTO_RBCC, RbccFields, ipv4_frame
from hdlsim import HDL_DIR

EXAMPLE = HDL_DIR.parent / "control_plane" / "examples" / "router.yaml"
SENDER1, SENDER2, RECEIVER = 0x0A000101, 0x0A000201, 0x0A000301  # 10.0.{1,2,3}.1


def load_example(overrides: tuple[str, ...] = ()) -> ControllerConfig:
    return load_config(EXAMPLE, overrides)


def config_file_case(seed: int = 3, n_packets: int = 120) -> tuple[VectorCase, dict[str, Any]]:
    cfg = load_example()
    rng = random.Random(seed)
    packets: list[InputFrame] = []
    now = 0
    for i in range(n_packets):
        # bursts that fill the bottleneck queue, then one idle gap long enough
        # for RED's idle decay (service time 1.2 ms at 10 Mbit/s)
        now += 50_000 if i == n_packets // 2 else rng.choice([0, 2, 10, 40])
        kind = rng.random()
        if kind < 0.45:  # sender1: RBCC data to the receiver
            rb = RbccFields(rate=rng.choice([0xFFFFFFFF, 2_000_000]), current_rate=1_000_000)
            frame = ipv4_frame(SENDER1, RECEIVER, IPPROTO_RBCC, rb.encode() + bytes(200))
            port = 1
        elif kind < 0.8:  # sender2: UDP to the receiver
            frame = ipv4_frame(SENDER2, RECEIVER, 17, bytes(rng.choice([18, 300])))
            port = 2
        elif kind < 0.9:  # the receiver's ACK to sender1 (hosts.ack_for's fields)
            rb = RbccFields(flags=2, rate=0xFFFFFFFF, current_rate=0)
            frame = ipv4_frame(RECEIVER, SENDER1, IPPROTO_RBCC, rb.encode())
            port = 3
        else:  # no route, TTL expired, bad checksum
            broken = [
                ipv4_frame(SENDER1, 0x0A000909, 17, bytes(20)),
                ipv4_frame(SENDER2, RECEIVER, 17, bytes(20), ttl=1),
                ipv4_frame(SENDER1, RECEIVER, 17, bytes(20), bad_csum=True),
            ]
            frame = rng.choice(broken)
            port = rng.choice([1, 2])
        packets.append(InputFrame(now, port, frame))
    case = VectorCase("router.yaml", "the controller's example file", "exact", cfg.router,
                      tuple(packets))  # fmt: skip
    return case, expected_results(case)
