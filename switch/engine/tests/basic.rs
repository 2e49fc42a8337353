//! Basic IPv4 forwarding (tests/fixtures/basic.json).
mod common;
use common::*;
use ratelab_engine::{MatchValue, Switch};

fn routed() -> Switch {
    let mut sw = switch("basic.json");
    sw.table_add(
        "MyIngress.ipv4_lpm",
        vec![MatchValue::Lpm(0x0a000200, 24)],
        "MyIngress.ipv4_forward",
        &[0x0000_0000_0222, 2],
        0,
    )
    .unwrap();
    sw.table_add(
        "MyIngress.ipv4_lpm",
        vec![MatchValue::Lpm(0x0a000000, 8)],
        "MyIngress.ipv4_forward",
        &[0x0000_0000_0333, 3],
        0,
    )
    .unwrap();
    sw
}

#[test]
fn forwards_rewrites_and_fixes_checksum() {
    let mut sw = routed();
    let pkt = ipv4_packet([10, 0, 2, 7], 64, b"hello");
    sw.inject(1, &pkt, 100);
    let out = sw.poll(100);
    assert_eq!(out.len(), 1);
    let f = &out[0];
    assert_eq!(f.port, 2);
    assert_eq!(f.time_us, 100);
    let d = &f.data;
    assert_eq!(d.len(), pkt.len());
    assert_eq!(&d[0..6], &[0, 0, 0, 0, 0x02, 0x22]); // dst = action param
    assert_eq!(&d[6..12], &pkt[0..6]); // src = old dst
    assert_eq!(d[14 + 8], 63); // ttl decremented
    assert_eq!(csum(&d[14..34]), 0, "checksum updated");
    assert_eq!(&d[34..], b"hello");
}

#[test]
fn a_recycled_buffer_carries_the_next_frame_and_nothing_of_the_last() {
    let mut sw = routed();
    sw.inject(1, &ipv4_packet([10, 0, 2, 7], 64, &[0xEE; 200]), 0);
    let first = sw.poll(0).pop().expect("forwarded");
    let reused = first.data.as_ptr();
    sw.recycle(first.data);
    let short = ipv4_packet([10, 0, 2, 8], 64, b"hi");
    sw.inject(1, &short, 1);
    let second = sw.poll(1).pop().expect("forwarded");
    assert_eq!(second.data.as_ptr(), reused, "the spare buffer was used");
    assert_eq!(second.data.len(), short.len());
    assert_eq!(&second.data[34..], b"hi");
    assert_eq!(csum(&second.data[14..34]), 0);
}

#[test]
fn longest_prefix_wins_and_miss_drops() {
    let mut sw = routed();
    sw.inject(1, &ipv4_packet([10, 9, 9, 9], 64, b""), 0);
    sw.inject(1, &ipv4_packet([11, 0, 2, 7], 64, b""), 0);
    let out = sw.poll(0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 3);
    assert_eq!(sw.stats().ingress_drops, 1, "default action drop");
}

#[test]
fn non_ipv4_goes_to_port_0_unchanged() {
    // egress_spec stays 0 when ingress does nothing (as in simple_switch).
    let mut sw = routed();
    let mut pkt = ipv4_packet([10, 0, 2, 7], 64, b"");
    pkt[12] = 0x86;
    pkt[13] = 0xdd;
    sw.inject(1, &pkt, 0);
    let out = sw.poll(0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 0);
    assert_eq!(out[0].data, pkt);
}

#[test]
fn ttl_wraps_like_bmv2() {
    let mut sw = routed();
    sw.inject(1, &ipv4_packet([10, 0, 2, 7], 0, b""), 0);
    let out = sw.poll(0);
    assert_eq!(out[0].data[22], 255);
}

#[test]
fn entry_counters_and_modify_delete() {
    let mut sw = routed();
    let h = sw
        .table_find("MyIngress.ipv4_lpm", &[MatchValue::Lpm(0x0a000200, 24)], 0)
        .unwrap()
        .unwrap();
    let pkt = ipv4_packet([10, 0, 2, 7], 64, b"");
    let t = "MyIngress.ipv4_lpm";
    assert_eq!(sw.table_entry(t, h).unwrap().last_hit_us, None);
    sw.inject(1, &pkt, 0);
    assert_eq!(sw.table_entry_counter(t, h).unwrap(), (1, pkt.len() as u64));
    sw.inject(1, &pkt, 42);
    assert_eq!(sw.table_entry(t, h).unwrap().last_hit_us, Some(42));
    assert_eq!(sw.table_entry_counter(t, h).unwrap().0, 2);
    sw.table_set_entry_counter(t, h, 1, pkt.len() as u64)
        .unwrap();
    sw.table_modify(
        "MyIngress.ipv4_lpm",
        h,
        "MyIngress.ipv4_forward",
        &[0x444, 4],
    )
    .unwrap();
    sw.inject(1, &pkt, 0);
    sw.table_delete("MyIngress.ipv4_lpm", h).unwrap();
    sw.inject(1, &pkt, 0);
    let ports: Vec<u32> = sw.poll(42).iter().map(|f| f.port).collect();
    assert_eq!(ports, vec![2, 2, 4, 3]);
    let e = sw.table_entries("MyIngress.ipv4_lpm").unwrap();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].action, "MyIngress.ipv4_forward");
    assert_eq!(e[0].params, vec![0x333, 3]);
}

#[test]
fn bad_checksum_sets_checksum_error_but_forwards() {
    // The program does not drop on checksum_error; the update recomputes it.
    let mut sw = routed();
    let mut pkt = ipv4_packet([10, 0, 2, 7], 64, b"");
    pkt[24] ^= 0xff;
    sw.inject(1, &pkt, 0);
    let out = sw.poll(0);
    assert_eq!(out.len(), 1);
    assert_eq!(csum(&out[0].data[14..34]), 0);
}

#[test]
fn truncated_ipv4_header_is_not_extracted() {
    // PacketTooShort in parse_ipv4: ipv4 stays invalid, the conditional
    // skips the table, and the packet leaves unchanged on port 0.
    let mut sw = routed();
    let pkt = ipv4_packet([10, 0, 2, 7], 64, b"");
    sw.inject(1, &pkt[..20], 0);
    let out = sw.poll(0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 0);
    assert_eq!(out[0].data, &pkt[..20]);
}
