"""Run a vector case through the model and write the whole case, expected results included."""

from __future__ import annotations

from typing import Any

from ratelab_model.router import Router
from ratelab_model.vectors.schema import (
    SCHEMA,
    VectorCase,
    config_to_json,
    installed_to_json,
)


def expected_results(case: VectorCase) -> dict[str, Any]:
    router = Router(case.config)
    outputs: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    for index, packet in enumerate(case.packets):
        record = router.process_packet(packet.port, packet.frame, packet.time_us)
        records.append(
            {
                "decision": record.decision,
                "egress_port": record.egress_port,
                "q": record.q,
                "avg": record.avg,
                "rbcc": record.rbcc,
                "share": record.share,
            }
        )
        if record.output is not None:
            outputs.append(
                {
                    "input": index,
                    "port": record.output.port,
                    "t_deq_us": record.output.t_deq_us,
                    "frame": record.output.frame.hex(),
                }
            )
    counters = {str(port): c.as_dict() for port, c in sorted(router.counters.items())}
    return {"outputs": outputs, "records": records, "counters": counters}


def case_to_json(case: VectorCase) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "name": case.name,
        "description": case.description,
        "timing": case.timing,
        "config": config_to_json(case.config),
        "installed": installed_to_json(case.config),
        "packets": [
            {"time_us": p.time_us, "port": p.port, "frame": p.frame.hex()} for p in case.packets
        ],
        "expected": expected_results(case),
    }
