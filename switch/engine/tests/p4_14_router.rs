//! A program in the P4_14 compiler's JSON (tests/fixtures/p4_14_router.json,
//! written by hand after BMv2's simple_router example: ipv4_lpm, forward,
//! send_frame), with its primitives (`modify_field`, `add_to_field`, `add`,
//! `subtract_from_field`, `bit_or`, `count`, `register_write`, `drop`,
//! `no_op`), 2-tuple header fields and tables named by action names: it
//! loads and forwards, compiled and interpreted alike.
mod common;
use common::*;
use ratelab_engine::{MatchValue, Switch};

fn routed(compiled: bool) -> Switch {
    let mut sw = switch("p4_14_router.json");
    if !compiled {
        sw.set_compiled(false);
    }
    sw.table_add(
        "ipv4_lpm",
        vec![MatchValue::Lpm(0x0a00_0100, 24)],
        "set_nhop",
        &[0x0a00_0101, 2],
        0,
    )
    .unwrap();
    sw.table_add(
        "ipv4_lpm",
        vec![MatchValue::Lpm(0x0a00_0200, 24)],
        "_drop",
        &[],
        0,
    )
    .unwrap();
    sw.table_add(
        "forward",
        vec![MatchValue::Exact(0x0a00_0101)],
        "set_dmac",
        &[0x0000_0000_0101],
        0,
    )
    .unwrap();
    sw.table_add(
        "send_frame",
        vec![MatchValue::Exact(2)],
        "rewrite_mac",
        &[0x00aa_bb00_0002],
        0,
    )
    .unwrap();
    sw.table_add("send_frame", vec![MatchValue::Exact(0)], "_nop", &[], 0)
        .unwrap();
    sw
}

/// Every frame out for `pkt` on port 1, compiled and interpreted (which
/// must agree).
fn forward(pkt: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    for compiled in [true, false] {
        let mut sw = routed(compiled);
        sw.inject(1, pkt, 0);
        let frames: Vec<_> = sw.poll(0).into_iter().map(|f| (f.port, f.data)).collect();
        if compiled {
            out = frames;
        } else {
            assert_eq!(frames, out, "compiled and interpreted differ");
        }
    }
    out
}

#[test]
fn the_program_loads_and_routes() {
    let pkt = ipv4_packet([10, 0, 1, 5], 64, b"data");
    let out = forward(&pkt);
    assert_eq!(out.len(), 1);
    let (port, d) = &out[0];
    assert_eq!(*port, 2);
    assert_eq!(d[0..6], [0, 0, 0, 0, 0x01, 0x01], "dst: forward's set_dmac");
    assert_eq!(
        d[6..12],
        [0, 0xaa, 0xbb, 0, 0, 0x02],
        "src: send_frame's rewrite_mac"
    );
    assert_eq!(d[14 + 8], 63, "add_to_field(ttl, -1)");
    assert_eq!(d[14 + 1], 0xfc, "subtract_from_field(diffserv, 4) from 0");
    assert_eq!(
        d[14 + 4..14 + 6],
        [0x92, 0x34],
        "bit_or(identification, 0x8000)"
    );
    assert_eq!(csum(&d[14..34]), 0, "checksum updated");
    assert_eq!(d[34..], *b"data");
}

#[test]
fn count_and_register_write_run() {
    let mut sw = routed(true);
    let pkt = ipv4_packet([10, 0, 1, 5], 64, b"data");
    sw.inject(1, &pkt, 0);
    sw.inject(1, &pkt, 1);
    assert_eq!(sw.poll(1).len(), 2);
    assert_eq!(sw.counter_read("port_packets", 1).unwrap().0, 2);
    assert_eq!(
        sw.register_read("last_length", 1).unwrap(),
        pkt.len() as u128
    );
}

#[test]
fn drop_unrouted_and_ttl_zero() {
    assert!(
        forward(&ipv4_packet([10, 0, 2, 5], 64, b"x")).is_empty(),
        "_drop"
    );
    // ttl 0: the condition skips the tables; egress_spec stays 0 (as in
    // simple_router), send_frame's port-0 entry runs no_op.
    let pkt = ipv4_packet([10, 0, 1, 5], 0, b"x");
    let out = forward(&pkt);
    assert_eq!(out, vec![(0, pkt)]);
}
