//! Helpers shared by the integration tests.
#![allow(dead_code)]

use ratelab_engine::{CloneSession, MatchValue, Rate, Replica, Switch};

pub fn fixture(name: &str) -> String {
    let p = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

pub fn switch(name: &str) -> Switch {
    Switch::new(&fixture(name), 1).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Internet checksum, computed independently of the engine.
pub fn csum(b: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in b.chunks(2) {
        let w = if c.len() == 2 {
            (c[0] as u32) << 8 | c[1] as u32
        } else {
            (c[0] as u32) << 8
        };
        s += w;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Ethernet + IPv4 (+ `payload`), with a correct header checksum.
pub fn ipv4_packet(dst: [u8; 4], ttl: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![
        0x00, 0x00, 0x00, 0x00, 0x00, 0xaa, // dst mac
        0x00, 0x00, 0x00, 0x00, 0x00, 0xbb, // src mac
        0x08, 0x00,
    ];
    let total = 20 + payload.len() as u16;
    let mut ip = vec![
        0x45,
        0x00,
        (total >> 8) as u8,
        total as u8,
        0x12,
        0x34,
        0x40,
        0x00,
        ttl,
        17,
        0,
        0,
        10,
        0,
        0,
        1,
    ];
    ip.extend_from_slice(&dst);
    let c = csum(&ip);
    ip[10] = (c >> 8) as u8;
    ip[11] = c as u8;
    p.extend_from_slice(&ip);
    p.extend_from_slice(payload);
    p
}

/// Ethernet (type 0x88b5) + cmd header {op: 8, arg: 16, val: 32}.
pub fn cmd_packet(op: u8, arg: u16, val: u32) -> Vec<u8> {
    let mut p = vec![0u8; 12];
    p[5] = 0xaa;
    p[11] = 0xbb;
    p.extend_from_slice(&[0x88, 0xb5, op]);
    p.extend_from_slice(&arg.to_be_bytes());
    p.extend_from_slice(&val.to_be_bytes());
    p.extend_from_slice(b"payload!");
    p
}

/// The report header the features program's egress appends after cmd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    pub itype: u32,
    pub rid: u32,
    pub enq_qdepth: u32,
    pub deq_qdepth: u32,
    pub deq_timedelta: u32,
    pub enq_ts: u32,
    pub eg_ts: u32,
    pub in_ts: u32,
    pub result: u32,
    pub pkt_len: u32,
    pub perr: u32,
    pub keep: u32,
}

pub const REPORT_AT: usize = 14 + 7;
pub const REPORT_LEN: usize = 37;

pub fn report(frame: &[u8]) -> Report {
    let r = &frame[REPORT_AT..REPORT_AT + REPORT_LEN];
    let u32at = |i: usize| u32::from_be_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
    Report {
        itype: r[0] as u32,
        rid: u16::from_be_bytes([r[1], r[2]]) as u32,
        enq_qdepth: u32at(3),
        deq_qdepth: u32at(7),
        deq_timedelta: u32at(11),
        enq_ts: u32at(15),
        eg_ts: u32at(19),
        in_ts: u32at(23),
        result: u32at(27),
        pkt_len: u32at(31),
        perr: r[35] as u32,
        keep: r[36] as u32,
    }
}

/// features.json with an entry for every command op, a multicast group, a
/// clone session, meter rates and a slow, shallow port 1.
pub fn features_switch() -> Switch {
    let mut sw = switch("features.json");
    let ops: [(u8, &str, &[u128]); 14] = [
        (2, "MyIngress.do_mcast", &[10]),
        (3, "MyIngress.do_clone", &[5, 1]),
        (4, "MyIngress.do_resubmit", &[]),
        (5, "MyIngress.do_hash", &[]),
        (6, "MyIngress.do_reg", &[]),
        (7, "MyIngress.do_count", &[]),
        (8, "MyIngress.do_meter", &[]),
        (9, "MyIngress.do_digest", &[]),
        (10, "MyIngress.do_drop", &[]),
        (11, "MyIngress.do_recirc", &[]),
        (12, "MyIngress.do_rng", &[]),
        (13, "MyIngress.do_truncate", &[]),
        (14, "MyIngress.do_exit", &[]),
        (1, "MyIngress.fwd", &[300]),
    ];
    for (op, a, p) in ops {
        sw.table_add(
            "MyIngress.ctl",
            vec![MatchValue::Exact(op as u128)],
            a,
            p,
            0,
        )
        .unwrap();
    }
    sw.mc_group_set(
        10,
        vec![Replica { port: 2, rid: 1 }, Replica { port: 3, rid: 2 }],
    )
    .unwrap();
    sw.clone_session_set(
        5,
        CloneSession {
            replicas: vec![Replica { port: 4, rid: 0 }],
            truncate: Some(3),
        },
    )
    .unwrap();
    sw.meter_set_rates("MyIngress.mtr", 1, [(10, 2), (20, 4)])
        .unwrap();
    sw.set_port_rate(1, Rate::Bps(1_000_000)).unwrap();
    sw.set_queue_depth(1, 8).unwrap();
    sw
}

/// basic.json with a route for 10.0.0.0/8 to port 1.
pub fn basic_switch() -> Switch {
    let mut sw = switch("basic.json");
    sw.table_add(
        "MyIngress.ipv4_lpm",
        vec![MatchValue::Lpm(0x0a000000, 8)],
        "MyIngress.ipv4_forward",
        &[1, 1],
        0,
    )
    .unwrap();
    sw
}

/// A small deterministic generator for random test inputs.
pub struct Lcg(pub u64);
impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
}
