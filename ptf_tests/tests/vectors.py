"""The shared router test vectors (tests/vectors/*.json) on a live switch.

`timing: any` cases run exactly: one test per case, each frame sent only after
the previous one came out (or, for a drop, after the switch's counters show it
was processed), so the switch's queues stay empty as the case assumes. After
every frame all counters are read over P4Runtime and compared with the
reference model replaying the case frame by frame; every output must be the
expected frame on the expected port, in order; at the end the counters must
equal the file's.

A frame shorter than an Ethernet header (14 bytes) cannot be put on a wire: the
kernel refuses to send it on a veth. Such inputs (fwd_drops has one) are left
out for the switch and for the lockstep model alike, and the final counters are
then compared with the model's replay of the frames that were sent; the file's
counters are compared directly when every input was sent.

`timing: exact` cases are not run here. Their outcome depends on microsecond
arrival and dequeue times (queues building at a given drain rate, RED averages
decaying over given idle periods, ABT entries timing out after exactly
idle_timeout): a wall-clock target can neither send frames at those instants nor
drain at the vectors' per-case port rates (one switch run has one rate per port),
so they are compared exactly only on targets fed the vector's time (the engine,
the simulator, cocotb). The behaviours they cover are checked statistically on
the live switch by queues.py (tail drop, RED drop fractions) and rbcc.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ratelab_model.packet import ETH_HEADER_LEN
from ratelab_model.vectors.schema import load_file
from ratelab_ptf.base import RouterTest

VECTOR_DIR = Path(__file__).resolve().parents[2] / "tests" / "vectors"


class VectorCaseTest(RouterTest):
    """Base of the generated per-case tests (no runTest: not collected itself)."""

    vector_path: Path

    def check_vector(self) -> None:
        case, data = load_file(self.vector_path)
        self.assertEqual(case.timing, "any")
        used = {p.port for p in case.config.ports}
        missing = used - set(self.p["plain_ports"])
        self.assertFalse(missing, f"{case.name}: the switch has no unlimited ports {missing}")
        expected: dict[str, Any] = data["expected"]
        outputs = {o["input"]: o for o in expected["outputs"]}
        model = self.configure(case.config)
        left_out = 0
        for i, packet in enumerate(case.packets):
            want = expected["records"][i]
            if len(packet.frame) < ETH_HEADER_LEN:
                self.assertEqual(want["decision"], "malformed")
                self.assertNotIn(i, outputs)
                left_out += 1
                continue
            record = model.process(packet.port, packet.frame, packet.time_us)
            if not left_out:
                self.assertEqual(
                    (record.decision, record.egress_port, record.rbcc, record.share),
                    (want["decision"], want["egress_port"], want["rbcc"], want["share"]),
                    f"{case.name}: the file disagrees with the model (run vectors --check)",
                )
            self.send(packet.port, packet.frame)
            if i in outputs:
                o = outputs[i]
                self.expect_frame(o["port"], bytes.fromhex(o["frame"]), f"{case.name} input {i}")
            else:
                self.assertIsNone(record.output)
            self.assert_counters(model.counters(), what=f"{case.name} after input {i}")
        self.expect_nothing()
        final = {int(p): c for p, c in expected["counters"].items()}
        if left_out:
            final = {p: c.as_dict() for p, c in model.counters(sorted(final)).items()}
        got, gauges = self.read_counters(sorted(final))
        for port, counters in final.items():
            want = {k: v for k, v in counters.items() if gauges or k not in ("last_q", "last_avg")}
            self.assertEqual(got[port], want, f"{case.name}: port {port} counters")


def _runner(self: VectorCaseTest) -> None:
    self.check_vector()


def _make_tests() -> dict[str, type]:
    tests: dict[str, type] = {}
    for path in sorted(VECTOR_DIR.glob("*.json")):
        case, _ = load_file(path)
        if case.timing != "any":
            continue
        name = "Vector_" + case.name
        tests[name] = type(
            name,
            (VectorCaseTest,),
            {"vector_path": path, "runTest": _runner, "__doc__": case.description},
        )
    return tests


globals().update(_make_tests())
