"""The front end must handle a router-sized program (~600 lines plus core.p4 and
v1model.p4) well under half a second."""

from __future__ import annotations

import time
from pathlib import Path

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


def test_router_sized_program_is_fast(tmp_path: Path) -> None:
    text = HEAD + "".join(STAGE.format(i=i) for i in range(24)) + TAIL
    assert text.count("\n") >= 600
    src = tmp_path / "router.p4"
    src.write_text(text)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        program = parse_and_check(str(src))
        best = min(best, time.perf_counter() - start)
    assert program.main is not None
    assert best < 0.5, f"front end took {best:.3f} s"
