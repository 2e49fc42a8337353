//! `Switch::inject_owned`: the packet takes the frame's buffer instead of a
//! copy, and everything comes out as from `inject`: forwarding, clones and
//! resubmits (which go round again with the frame as it came in), compiled
//! and interpreted.
mod common;
use common::*;
use ratelab_engine::{CloneSession, Frame, MatchValue, Replica, Switch};

fn routed(compiled: bool) -> Switch {
    let mut sw = switch("basic.json");
    sw.set_compiled(compiled);
    sw.table_add(
        "MyIngress.ipv4_lpm",
        vec![MatchValue::Lpm(0x0a000200, 24)],
        "MyIngress.ipv4_forward",
        &[0x0000_0000_0222, 2],
        0,
    )
    .unwrap();
    sw
}

fn features(compiled: bool) -> Switch {
    let mut sw = switch("features.json");
    sw.set_compiled(compiled);
    let mut op = |op: u8, action: &str, params: &[u128]| {
        let key = vec![MatchValue::Exact(u128::from(op))];
        sw.table_add("MyIngress.ctl", key, action, params, 0)
            .unwrap();
    };
    op(3, "MyIngress.do_clone", &[5, 1]);
    op(4, "MyIngress.do_resubmit", &[]);
    let replicas = vec![Replica { port: 7, rid: 9 }];
    let session = CloneSession {
        replicas,
        truncate: None,
    };
    sw.clone_session_set(5, session).unwrap();
    sw
}

/// (port, time, bytes) of every frame polled.
fn frames(out: Vec<Frame>) -> Vec<(u32, u64, Vec<u8>)> {
    let mut v: Vec<_> = out
        .into_iter()
        .map(|f| (f.port, f.time_us, f.data))
        .collect();
    v.sort();
    v
}

#[test]
fn an_owned_frame_is_forwarded_in_its_own_buffer() {
    for compiled in [true, false] {
        let pkt = ipv4_packet([10, 0, 2, 7], 64, &[0xAB; 300]);
        let mut copied = routed(compiled);
        copied.inject(1, &pkt, 100);
        let mut owned = routed(compiled);
        let buf = pkt.clone();
        let at = buf.as_ptr();
        owned.inject_owned(1, buf, 100);
        let (a, b) = (copied.poll(100), owned.poll(100));
        if compiled {
            // The compiled deparser writes the headers in place: the same
            // buffer leaves.
            assert_eq!(b[0].data.as_ptr(), at);
        }
        assert_eq!(frames(a), frames(b), "compiled: {compiled}");
        assert_eq!(owned.port_stats(1).rx_bytes, pkt.len() as u64);
    }
}

#[test]
fn clones_and_resubmits_of_an_owned_frame_match_a_copied_one() {
    for compiled in [true, false] {
        for pkt in [cmd_packet(3, 0, 0x11), cmd_packet(4, 0, 0)] {
            let mut copied = features(compiled);
            copied.inject(2, &pkt, 10);
            let mut owned = features(compiled);
            owned.inject_owned(2, pkt.clone(), 10);
            let (a, b) = (frames(copied.poll(10)), frames(owned.poll(10)));
            assert!(!a.is_empty());
            assert_eq!(a, b, "compiled: {compiled}, op {}", pkt[14]);
        }
    }
}
