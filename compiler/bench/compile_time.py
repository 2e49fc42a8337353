"""Compile-time benchmark (`make bench`): how long ratelab-p4c takes, front end and
whole compile, on the router program and on a synthetic 600-line program.

Timings are written to a file, never asserted: these machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ratelab_p4c import cli
from ratelab_p4c.frontend import parse_and_check

HEAD = """#include <core.p4>
#include <v1model.p4>
const bit<16> TYPE_IPV4 = 0x800;
header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification;
    bit<3> flags; bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
struct metadata { bit<16> hash; bit<32> counter; }
struct headers { ethernet_t ethernet; ipv4_t ipv4; }
parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 { packet.extract(hdr.ipv4); transition accept; }
}
control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }
"""

STAGE = """
control Stage{i}(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {{
    action set_port(bit<9> port, bit<48> mac) {{
        standard_metadata.egress_spec = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl |-| 1;
    }}
    action drop() {{ mark_to_drop(standard_metadata); }}
    table route {{
        key = {{ hdr.ipv4.dstAddr : lpm; hdr.ipv4.protocol : ternary; }}
        actions = {{ set_port; drop; NoAction; }}
        default_action = drop();
        size = 1024;
    }}
    apply {{
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {{
            hash(meta.hash, HashAlgorithm.crc16, 16w0,
                 {{ hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol }}, 16w1024);
            switch (route.apply().action_run) {{
                drop: {{ meta.counter = meta.counter + {i}; }}
                default: {{ }}
            }}
        }}
    }}
}}
"""

TAIL = """
control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}
control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.ipv4); }
}
V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
"""


def best_of(runs: int, work: Callable[[], object]) -> float:
    """The fastest of `runs` timings, in seconds (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def compile_whole(source: Path, out_dir: Path) -> None:
    argv = ["--target", "bmv2", "--arch", "v1model", "-o", str(out_dir), str(source)]
    argv += ["--p4runtime-files", str(out_dir / f"{source.stem}.p4info.txtpb")]
    if cli.run(argv) != 0:
        raise SystemExit(f"compile_time: compiling {source} failed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="results file to write")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[2]
    rows: list[tuple[str, int, str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        synthetic = work / "synthetic.p4"
        synthetic.write_text(HEAD + "".join(STAGE.format(i=i) for i in range(24)) + TAIL)
        for source in (root / "p4src" / "router.p4", synthetic):
            lines = _count_lines(source)
            front = best_of(args.runs, lambda s=source: parse_and_check(str(s)))
            whole = best_of(args.runs, lambda s=source: compile_whole(s, work))
            rows.append((source.name, lines, "front end", front))
            rows.append((source.name, lines, "front end + JSON + P4Info", whole))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as out:
        out.write(f"# ratelab-p4c compile time, best of {args.runs} runs\n")
        out.write(f"{'program':<16} {'lines':>6}  {'phase':<26} {'ms':>8}\n")
        for name, lines, phase, seconds in rows:
            out.write(f"{name:<16} {lines:>6}  {phase:<26} {seconds * 1000:>8.1f}\n")
    print(args.out.read_text(), end="")
    return 0


def _count_lines(source: Path) -> int:
    """Source lines including the program's own quoted includes (p4src/include/)."""
    total = source.read_text().count("\n")
    include_dir = source.parent / "include"
    if source.name == "router.p4" and include_dir.is_dir():
        total += sum(p.read_text().count("\n") for p in include_dir.glob("*.p4"))
    return total


if __name__ == "__main__":
    sys.exit(main())
