//! Externs, replication, traffic manager (tests/fixtures/features.json).
//!
//! The program parses ethernet + cmd {op, arg, val}; ingress table
//! `MyIngress.ctl` maps cmd.op to one feature; egress appends a report header
//! with the queueing metadata (see tests/common).
mod common;
use common::*;
use ratelab_engine::{
    instance_type as it, CloneSession, ControlError, MatchValue, Rate, Replica, Switch,
};

fn op(sw: &mut Switch, op: u8, action: &str, params: &[u128]) {
    sw.table_add(
        "MyIngress.ctl",
        vec![MatchValue::Exact(op as u128)],
        action,
        params,
        0,
    )
    .unwrap();
}

#[test]
fn default_forwarding_and_report_metadata() {
    let mut sw = switch("features.json");
    let pkt = cmd_packet(0, 1, 2);
    sw.inject(3, &pkt, 1234);
    let out = sw.poll(1234);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 1);
    assert_eq!(out[0].data.len(), pkt.len() + REPORT_LEN);
    let r = report(&out[0].data);
    assert_eq!(r.itype, it::NORMAL);
    assert_eq!(r.in_ts, 1234);
    assert_eq!(r.eg_ts, 1234);
    assert_eq!(r.enq_ts, 1234);
    assert_eq!(r.pkt_len, pkt.len() as u32);
    assert_eq!(r.perr, 0);
    // payload follows the report
    assert_eq!(&out[0].data[REPORT_AT + REPORT_LEN..], b"payload!");
}

#[test]
fn clone_i2e_preserves_field_list_and_goes_to_session_port() {
    let mut sw = switch("features.json");
    op(&mut sw, 3, "MyIngress.do_clone", &[5, 1]);
    sw.clone_session_set(
        5,
        CloneSession {
            replicas: vec![Replica { port: 7, rid: 9 }],
            truncate: None,
        },
    )
    .unwrap();
    sw.inject(2, &cmd_packet(3, 0, 0x11), 0);
    let mut out = sw.poll(0);
    out.sort_by_key(|f| f.port);
    assert_eq!(out.len(), 2);
    let (orig, clone) = (report(&out[0].data), report(&out[1].data));
    assert_eq!(out[0].port, 1);
    assert_eq!(orig.itype, it::NORMAL);
    assert_eq!(orig.keep, 0x2a);
    assert_eq!(out[1].port, 7);
    assert_eq!(clone.itype, it::INGRESS_CLONE);
    assert_eq!(clone.keep, 0x2a, "field list preserved");
    assert_eq!(clone.rid, 9);
}

#[test]
fn clone_to_missing_session_is_counted() {
    let mut sw = switch("features.json");
    op(&mut sw, 3, "MyIngress.do_clone", &[5, 1]);
    sw.inject(2, &cmd_packet(3, 0, 0), 0);
    assert_eq!(sw.poll(0).len(), 1);
    assert_eq!(sw.stats().no_target_drops, 1);
}

#[test]
fn clone_session_truncates() {
    let mut sw = switch("features.json");
    op(&mut sw, 3, "MyIngress.do_clone", &[5, 1]);
    sw.clone_session_set(
        5,
        CloneSession {
            replicas: vec![Replica { port: 7, rid: 0 }],
            truncate: Some(20),
        },
    )
    .unwrap();
    sw.inject(2, &cmd_packet(3, 0, 0), 0);
    let out = sw.poll(0);
    let c = out.iter().find(|f| f.port == 7).unwrap();
    assert_eq!(c.data.len(), 20);
}

#[test]
fn resubmit_runs_ingress_again_with_preserved_fields() {
    let mut sw = switch("features.json");
    op(&mut sw, 4, "MyIngress.do_resubmit", &[]);
    sw.inject(2, &cmd_packet(4, 0, 0), 0);
    let out = sw.poll(0);
    assert_eq!(out.len(), 1);
    assert_eq!(
        out[0].port, 2,
        "second pass takes the instance_type == 6 branch"
    );
    let r = report(&out[0].data);
    assert_eq!(r.itype, it::RESUBMIT);
    assert_eq!(r.keep, 7);
}

#[test]
fn recirculate_reinjects_deparsed_packet() {
    let mut sw = switch("features.json");
    op(&mut sw, 0x0b, "MyIngress.do_recirc", &[]);
    let pkt = cmd_packet(0x0b, 0, 0);
    sw.inject(2, &pkt, 0);
    let out = sw.poll(0);
    assert_eq!(out.len(), 1);
    // first pass added a report (now payload), second pass adds another
    assert_eq!(out[0].data.len(), pkt.len() + 2 * REPORT_LEN);
    let r = report(&out[0].data);
    assert_eq!(r.itype, it::RECIRC);
    assert_eq!(r.keep, 5);
    assert_eq!(r.pkt_len, (pkt.len() + REPORT_LEN) as u32);
}

#[test]
fn multicast_replicates_with_rid() {
    let mut sw = switch("features.json");
    op(&mut sw, 2, "MyIngress.do_mcast", &[10]);
    sw.mc_group_set(
        10,
        vec![Replica { port: 3, rid: 1 }, Replica { port: 4, rid: 2 }],
    )
    .unwrap();
    sw.inject(1, &cmd_packet(2, 0, 0), 0);
    let mut out = sw.poll(0);
    out.sort_by_key(|f| f.port);
    assert_eq!(out.iter().map(|f| f.port).collect::<Vec<_>>(), vec![3, 4]);
    assert_eq!(report(&out[0].data).rid, 1);
    assert_eq!(report(&out[1].data).rid, 2);
    assert_eq!(report(&out[0].data).itype, it::REPLICATION);
    sw.mc_group_delete(10).unwrap();
    sw.inject(1, &cmd_packet(2, 0, 0), 0);
    assert!(sw.poll(0).is_empty());
    assert_eq!(sw.stats().no_target_drops, 1);
    assert!(matches!(
        sw.mc_group_delete(10),
        Err(ControlError::NotFound(..))
    ));
    assert!(sw.mc_group_set(0, vec![]).is_err());
    assert!(sw
        .mc_group_set(1, vec![Replica { port: 600, rid: 0 }])
        .is_err());
}

#[test]
fn digest_carries_learn_list_values() {
    let mut sw = switch("features.json");
    op(&mut sw, 9, "MyIngress.do_digest", &[]);
    sw.inject(6, &cmd_packet(9, 0, 0xdead), 77);
    let d = sw.take_digests();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].list_name, "digest_t");
    assert_eq!(d[0].values, vec![0xdead, 6]);
    assert_eq!(d[0].receiver, 1);
    assert_eq!(d[0].time_us, 77);
    assert!(sw.take_digests().is_empty());
}

#[test]
fn register_read_write() {
    let mut sw = switch("features.json");
    op(&mut sw, 6, "MyIngress.do_reg", &[]);
    sw.inject(1, &cmd_packet(6, 3, 5), 0);
    sw.inject(1, &cmd_packet(6, 3, 5), 0);
    let out = sw.poll(0);
    assert_eq!(report(&out[0].data).result, 0);
    assert_eq!(report(&out[1].data).result, 5);
    assert_eq!(sw.register_read("MyIngress.reg", 3).unwrap(), 10);
    sw.register_write("MyIngress.reg", 3, 100).unwrap();
    sw.inject(1, &cmd_packet(6, 3, 5), 0);
    assert_eq!(report(&sw.poll(0)[0].data).result, 100);
    // out-of-range index in the packet: read gives 0, write is ignored
    sw.inject(1, &cmd_packet(6, 999, 5), 0);
    assert_eq!(report(&sw.poll(0)[0].data).result, 0);
    assert!(matches!(
        sw.register_read("MyIngress.reg", 16),
        Err(ControlError::OutOfRange(..))
    ));
    assert!(sw.register_write("MyIngress.reg", 0, 1 << 32).is_err());
    assert!(matches!(
        sw.register_read("nope", 0),
        Err(ControlError::NotFound(..))
    ));
    sw.register_reset("MyIngress.reg").unwrap();
    assert_eq!(sw.register_read("MyIngress.reg", 3).unwrap(), 0);
    assert_eq!(sw.register_shape("MyIngress.reg").unwrap(), (16, 32));
}

#[test]
fn counters_count_packets_and_bytes() {
    let mut sw = switch("features.json");
    op(&mut sw, 7, "MyIngress.do_count", &[]);
    let pkt = cmd_packet(7, 2, 0);
    for _ in 0..3 {
        sw.inject(1, &pkt, 0);
    }
    assert_eq!(
        sw.counter_read("MyIngress.ctr", 2).unwrap(),
        (3, 3 * pkt.len() as u64)
    );
    assert_eq!(sw.counter_read("MyIngress.ctr", 1).unwrap(), (0, 0));
    sw.counter_write("MyIngress.ctr", 1, 5, 6).unwrap();
    assert_eq!(sw.counter_read("MyIngress.ctr", 1).unwrap(), (5, 6));
    sw.counter_reset("MyIngress.ctr").unwrap();
    assert_eq!(sw.counter_read("MyIngress.ctr", 2).unwrap(), (0, 0));
    assert!(sw.counter_read("MyIngress.ctr", 8).is_err());
    assert!(matches!(
        sw.counter_read("MyIngress.acl_ctr", 0),
        Err(ControlError::InvalidArgument(_))
    ));
}

#[test]
fn meter_colors_packets() {
    let mut sw = switch("features.json");
    op(&mut sw, 8, "MyIngress.do_meter", &[]);
    // unconfigured: green
    sw.inject(1, &cmd_packet(8, 1, 0), 0);
    // 1 packet/s committed (burst 1), 2 packets/s peak (burst 2)
    sw.meter_set_rates("MyIngress.mtr", 1, [(1, 1), (2, 2)])
        .unwrap();
    for _ in 0..3 {
        sw.inject(1, &cmd_packet(8, 1, 0), 0);
    }
    // a second later the buckets are full again
    sw.inject(1, &cmd_packet(8, 1, 0), 1_000_000);
    let colors: Vec<u32> = sw
        .poll(1_000_000)
        .iter()
        .map(|f| report(&f.data).result)
        .collect();
    assert_eq!(colors, vec![0, 0, 1, 2, 0]);
    assert_eq!(
        sw.meter_get_rates("MyIngress.mtr", 1).unwrap(),
        Some([(1, 1), (2, 2)])
    );
    assert!(sw
        .meter_set_rates("MyIngress.mtr", 1, [(3, 1), (2, 2)])
        .is_err());
    sw.meter_reset("MyIngress.mtr", 1).unwrap();
    assert_eq!(sw.meter_get_rates("MyIngress.mtr", 1).unwrap(), None);
}

/// Bitwise CRC-32 (IEEE), independent of the engine's table-driven one.
fn crc32_ref(data: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

#[test]
fn hash_crc32_of_field() {
    let mut sw = switch("features.json");
    op(&mut sw, 5, "MyIngress.do_hash", &[]);
    sw.inject(1, &cmd_packet(5, 0, 0x0102_0304), 0);
    let r = report(&sw.poll(0)[0].data);
    assert_eq!(r.result, crc32_ref(&[1, 2, 3, 4]));
}

#[test]
fn rng_is_seeded_and_in_range() {
    let run = |seed| {
        let mut sw = Switch::new(&fixture("features.json"), seed).unwrap();
        op(&mut sw, 12, "MyIngress.do_rng", &[]);
        for _ in 0..50 {
            sw.inject(1, &cmd_packet(12, 0, 0), 0);
        }
        sw.poll(0)
            .iter()
            .map(|f| report(&f.data).result)
            .collect::<Vec<_>>()
    };
    let a = run(7);
    assert!(a.iter().all(|&v| (10..=20).contains(&v)), "{a:?}");
    assert_eq!(a, run(7));
    assert_ne!(a, run(8));
    let distinct: std::collections::BTreeSet<_> = a.iter().collect();
    assert!(distinct.len() > 5);
}

#[test]
fn truncate_limits_output() {
    let mut sw = switch("features.json");
    op(&mut sw, 13, "MyIngress.do_truncate", &[]);
    sw.inject(1, &cmd_packet(13, 0, 0), 0);
    assert_eq!(sw.poll(0)[0].data.len(), 16);
}

#[test]
fn exit_stops_action_and_control() {
    let mut sw = switch("features.json");
    op(&mut sw, 14, "MyIngress.do_exit", &[]);
    // an acl entry that would drop everything must not run after exit
    sw.table_add(
        "MyIngress.acl",
        vec![MatchValue::Ternary(0, 0), MatchValue::Range(0, 0xffff)],
        "MyIngress.acl_deny",
        &[],
        1,
    )
    .unwrap();
    sw.inject(1, &cmd_packet(14, 0, 0), 0);
    let out = sw.poll(0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 3);
}

#[test]
fn mark_to_drop_drops() {
    let mut sw = switch("features.json");
    op(&mut sw, 10, "MyIngress.do_drop", &[]);
    sw.inject(1, &cmd_packet(10, 0, 0), 0);
    assert!(sw.poll(0).is_empty());
    assert_eq!(sw.stats().ingress_drops, 1);
}

#[test]
fn ternary_range_acl_with_priorities_and_direct_counters() {
    let mut sw = switch("features.json");
    let permit = sw
        .table_add(
            "MyIngress.acl",
            vec![
                MatchValue::Ternary(0x100, 0xff00),
                MatchValue::Range(10, 20),
            ],
            "MyIngress.acl_permit",
            &[0xbeef],
            1,
        )
        .unwrap();
    let deny = sw
        .table_add(
            "MyIngress.acl",
            vec![MatchValue::Ternary(0, 0), MatchValue::Range(0, 100)],
            "MyIngress.acl_deny",
            &[],
            2,
        )
        .unwrap();
    sw.inject(1, &cmd_packet(0, 15, 0x1ff), 0); // permit (priority 1 beats 2)
    sw.inject(1, &cmd_packet(0, 15, 0x2ff), 0); // deny
    sw.inject(1, &cmd_packet(0, 21, 0x1ff), 0); // deny (out of range)
    sw.inject(1, &cmd_packet(0, 200, 0x1ff), 0); // no match: forwarded
    let out = sw.poll(0);
    assert_eq!(out.len(), 2);
    assert_eq!(&out[0].data[17..21], &0xbeefu32.to_be_bytes());
    assert_eq!(&out[1].data[17..21], &0x1ffu32.to_be_bytes());
    assert_eq!(
        sw.table_entry_counter("MyIngress.acl", permit).unwrap().0,
        1
    );
    assert_eq!(sw.table_entry_counter("MyIngress.acl", deny).unwrap().0, 2);
    let info = sw.table_info("MyIngress.acl").unwrap();
    assert!(info.uses_priority && info.with_counters);
    assert_eq!(info.entries, 2);
    // same key, same priority: duplicate; other priority: fine
    assert!(matches!(
        sw.table_add(
            "MyIngress.acl",
            vec![MatchValue::Ternary(0, 0), MatchValue::Range(0, 100)],
            "MyIngress.acl_deny",
            &[],
            2
        ),
        Err(ControlError::Duplicate(_))
    ));
    assert_eq!(
        sw.table_find(
            "MyIngress.acl",
            &[MatchValue::Ternary(0, 0), MatchValue::Range(0, 100)],
            2
        )
        .unwrap(),
        Some(deny)
    );
}

#[test]
fn parser_value_set() {
    let mut sw = switch("features.json");
    let mut pkt = cmd_packet(0, 0, 0);
    pkt[12] = 0x12;
    pkt[13] = 0x34;
    sw.inject(1, &pkt, 0);
    let out = sw.poll(0);
    assert_eq!(out[0].port, 0, "cmd not parsed");
    assert_eq!(out[0].data, pkt);
    sw.value_set_add("MyParser.pvs", 0x1234).unwrap();
    sw.inject(1, &pkt, 0);
    let out = sw.poll(0);
    assert_eq!(out[0].port, 1, "cmd parsed, default fwd(1)");
    assert_eq!(out[0].data.len(), pkt.len() + REPORT_LEN);
    assert_eq!(sw.value_set_values("MyParser.pvs").unwrap(), vec![0x1234]);
    sw.value_set_remove("MyParser.pvs", 0x1234).unwrap();
    assert!(sw.value_set_remove("MyParser.pvs", 0x1234).is_err());
    assert!(sw.value_set_add("MyParser.pvs", 0x10000).is_err());
}

// ------------------------------------------------------------------ traffic manager

#[test]
fn drain_schedule_and_queueing_metadata_are_exact() {
    let mut sw = switch("features.json");
    // 8000 bit/s: one byte per millisecond.
    sw.set_port_rate(1, Rate::Bps(8000)).unwrap();
    let pkt = cmd_packet(0, 0, 0);
    let wire = pkt.len() + REPORT_LEN; // 66 bytes out
    let tx = (wire as u64 * 8 * 1_000_000).div_ceil(8000);
    sw.inject(1, &pkt, 0);
    sw.inject(1, &pkt, 10);
    sw.inject(1, &pkt, 20);
    assert_eq!(
        sw.next_event_time(),
        Some(20),
        "the first frame waits for poll"
    );
    let out = sw.poll(20);
    assert_eq!(out.len(), 1);
    assert_eq!(sw.next_event_time(), Some(tx));
    assert_eq!(sw.queue_len(1), 2);
    let out2 = sw.poll(tx + 2 * tx);
    let all: Vec<_> = out.iter().chain(out2.iter()).collect();
    assert_eq!(
        all.iter().map(|f| f.time_us).collect::<Vec<_>>(),
        vec![0, tx, 2 * tx]
    );
    let r: Vec<Report> = all.iter().map(|f| report(&f.data)).collect();
    assert_eq!(r[0].enq_qdepth, 0);
    assert_eq!(r[0].deq_qdepth, 0);
    assert_eq!(r[0].deq_timedelta, 0);
    assert_eq!(r[1].enq_ts, 10);
    assert_eq!(r[1].enq_qdepth, 0);
    assert_eq!(r[1].deq_qdepth, 1);
    assert_eq!(r[1].deq_timedelta as u64, tx - 10);
    assert_eq!(r[1].eg_ts as u64, tx);
    assert_eq!(r[2].enq_qdepth, 1);
    assert_eq!(r[2].deq_qdepth, 0);
    assert_eq!(r[2].deq_timedelta as u64, 2 * tx - 20);
    assert_eq!(sw.next_event_time(), None);
    assert_eq!(sw.port_stats(1).tx_packets, 3);
    assert_eq!(sw.port_stats(1).tx_bytes, 3 * wire as u64);
    assert_eq!(sw.port_stats(1).rx_packets, 3);
}

#[test]
fn packet_rate_and_idle_link() {
    let mut sw = switch("features.json");
    sw.set_port_rate(1, Rate::Pps(10)).unwrap();
    let pkt = cmd_packet(0, 0, 0);
    sw.inject(1, &pkt, 0);
    sw.inject(1, &pkt, 0);
    // the link is idle again long after: no waiting
    sw.inject(1, &pkt, 1_000_000);
    let t: Vec<u64> = sw.poll(2_000_000).iter().map(|f| f.time_us).collect();
    assert_eq!(t, vec![0, 100_000, 1_000_000]);
}

#[test]
fn queue_limit_drops_and_counts() {
    let mut sw = switch("features.json");
    sw.set_port_rate(1, Rate::Pps(1)).unwrap();
    sw.set_queue_depth(1, 2).unwrap();
    let pkt = cmd_packet(0, 0, 0);
    for _ in 0..5 {
        sw.inject(1, &pkt, 0);
    }
    // first dequeued at 0 (when the second arrived), two wait, two dropped
    assert_eq!(sw.port_stats(1).queue_drops, 2);
    assert_eq!(sw.poll(10_000_000).len(), 3);
}

#[test]
fn mtu_drops_are_counted() {
    let mut sw = switch("features.json");
    sw.set_port_mtu(1, 50).unwrap();
    sw.inject(1, &cmd_packet(0, 0, 0), 0);
    assert!(sw.poll(0).is_empty());
    assert_eq!(sw.port_stats(1).mtu_drops, 1);
    sw.set_port_mtu(1, 0).unwrap();
    sw.inject(1, &cmd_packet(0, 0, 0), 0);
    assert_eq!(sw.poll(0).len(), 1);
    assert!(sw.set_port_rate(512, Rate::Unlimited).is_err());
}

#[test]
fn time_never_goes_backwards() {
    let mut sw = switch("features.json");
    sw.inject(1, &cmd_packet(0, 0, 0), 100);
    sw.inject(1, &cmd_packet(0, 0, 0), 50);
    let out = sw.poll(0);
    assert_eq!(
        out.iter().map(|f| f.time_us).collect::<Vec<_>>(),
        vec![100, 100]
    );
    assert_eq!(sw.now(), 100);
}

#[test]
fn reload_validates_first() {
    let mut sw = switch("features.json");
    op(&mut sw, 10, "MyIngress.do_drop", &[]);
    let bad = fixture("features.json").replace("\"exact\"", "\"exactly\"");
    let e = sw.reload(&bad).unwrap_err();
    assert!(
        e.to_string().contains("unknown match_type \"exactly\""),
        "{e}"
    );
    // untouched: the entry still drops
    sw.inject(1, &cmd_packet(10, 0, 0), 0);
    assert!(sw.poll(0).is_empty());
    sw.reload(&fixture("features.json")).unwrap();
    assert!(sw.table_entries("MyIngress.ctl").unwrap().is_empty());
    sw.inject(1, &cmd_packet(10, 0, 0), 0);
    assert_eq!(sw.poll(0).len(), 1);
}

#[test]
fn control_api_errors() {
    let mut sw = switch("features.json");
    let k = || vec![MatchValue::Exact(1)];
    assert!(matches!(
        sw.table_add("nope", k(), "MyIngress.fwd", &[1], 0),
        Err(ControlError::NotFound("table", _))
    ));
    assert!(matches!(
        sw.table_add("MyIngress.ctl", k(), "MyIngress.acl_deny", &[], 0),
        Err(ControlError::InvalidArgument(_))
    ));
    assert!(matches!(
        sw.table_add("MyIngress.ctl", k(), "MyIngress.fwd", &[], 0),
        Err(ControlError::InvalidArgument(_))
    ));
    assert!(matches!(
        sw.table_add("MyIngress.ctl", k(), "MyIngress.fwd", &[512], 0),
        Err(ControlError::InvalidArgument(_))
    ));
    assert!(matches!(
        sw.table_add(
            "MyIngress.ctl",
            vec![MatchValue::Exact(256)],
            "MyIngress.fwd",
            &[1],
            0
        ),
        Err(ControlError::InvalidArgument(_))
    ));
    assert!(matches!(
        sw.table_add(
            "MyIngress.ctl",
            vec![MatchValue::Lpm(1, 8)],
            "MyIngress.fwd",
            &[1],
            0
        ),
        Err(ControlError::InvalidArgument(_))
    ));
    assert!(matches!(
        sw.table_delete("MyIngress.ctl", 42),
        Err(ControlError::BadHandle(..))
    ));
    assert!(matches!(
        sw.table_modify("MyIngress.ctl", 42, "MyIngress.fwd", &[1]),
        Err(ControlError::BadHandle(..))
    ));
    assert!(matches!(
        sw.table_set_default("tbl_resubmit", "MyIngress.set_keep_resub", &[]),
        Err(ControlError::Immutable(_))
    ));
    sw.table_set_default("MyIngress.ctl", "MyIngress.fwd", &[9])
        .unwrap();
    assert_eq!(
        sw.table_get_default("MyIngress.ctl").unwrap(),
        Some(("MyIngress.fwd".into(), vec![9]))
    );
    sw.table_reset_default("MyIngress.ctl").unwrap();
    assert_eq!(
        sw.table_get_default("MyIngress.ctl").unwrap(),
        Some(("MyIngress.fwd".into(), vec![1]))
    );
    let h = sw
        .table_add("MyIngress.ctl", k(), "MyIngress.fwd", &[1], 0)
        .unwrap();
    assert_eq!(sw.table_entry("MyIngress.ctl", h).unwrap().key, k());
    sw.table_clear("MyIngress.ctl").unwrap();
    assert!(sw.table_entries("MyIngress.ctl").unwrap().is_empty());
    assert!(sw.table_names().contains(&"MyIngress.acl".to_string()));
    assert_eq!(
        sw.action_info("MyIngress.fwd").unwrap().params,
        vec![("port".to_string(), 9)]
    );
    assert!(sw.counter_names().contains(&"MyIngress.ctr".to_string()));
    assert_eq!(sw.register_names(), vec!["MyIngress.reg".to_string()]);
    assert_eq!(sw.meter_names(), vec!["MyIngress.mtr".to_string()]);
    assert_eq!(sw.value_set_names(), vec!["MyParser.pvs".to_string()]);
    assert!(sw.action_names().contains(&"MyEgress.report".to_string()));
    assert!(matches!(
        sw.clone_session_delete(1),
        Err(ControlError::NotFound(..))
    ));
}

#[test]
fn table_full() {
    let mut sw = Switch::new(
        &fixture("features.json").replace("\"max_size\": 1024", "\"max_size\": 2"),
        1,
    )
    .unwrap();
    sw.table_add(
        "MyIngress.ctl",
        vec![MatchValue::Exact(1)],
        "MyIngress.fwd",
        &[1],
        0,
    )
    .unwrap();
    sw.table_add(
        "MyIngress.ctl",
        vec![MatchValue::Exact(2)],
        "MyIngress.fwd",
        &[1],
        0,
    )
    .unwrap();
    assert!(matches!(
        sw.table_add(
            "MyIngress.ctl",
            vec![MatchValue::Exact(3)],
            "MyIngress.fwd",
            &[1],
            0
        ),
        Err(ControlError::Full(_))
    ));
}

#[test]
fn packet_and_control_threads_share_a_switch() {
    use std::sync::{Arc, Mutex};
    let sw = Arc::new(Mutex::new(switch("features.json")));
    let pkts = {
        let sw = Arc::clone(&sw);
        std::thread::spawn(move || {
            let mut n = 0;
            for t in 0..2000u64 {
                let mut s = sw.lock().unwrap();
                s.inject(1, &cmd_packet((t % 3) as u8 + 20, 0, 0), t);
                n += s.poll(t).len();
            }
            n
        })
    };
    for op in 20..23u8 {
        sw.lock()
            .unwrap()
            .table_add(
                "MyIngress.ctl",
                vec![MatchValue::Exact(op as u128)],
                "MyIngress.fwd",
                &[2],
                0,
            )
            .unwrap();
    }
    assert_eq!(pkts.join().unwrap(), 2000);
    assert_eq!(
        sw.lock()
            .unwrap()
            .table_entries("MyIngress.ctl")
            .unwrap()
            .len(),
        3
    );
}

/// features.json plus an action `set_prio` (priority = cmd.arg, port 1).
fn with_priority_action() -> Switch {
    use serde_json::{json, Value};
    let mut v: Value = serde_json::from_str(&fixture("features.json")).unwrap();
    v["actions"].as_array_mut().unwrap().push(json!({
        "name": "MyIngress.set_prio", "id": 99, "runtime_data": [],
        "primitives": [
            {"op": "assign", "parameters": [
                {"type": "field", "value": ["standard_metadata", "priority"]},
                {"type": "field", "value": ["cmd", "arg"]}]},
            {"op": "assign", "parameters": [
                {"type": "field", "value": ["standard_metadata", "egress_spec"]},
                {"type": "hexstr", "value": "0x0001"}]}]}));
    let t = &mut v["pipelines"][0]["tables"][0];
    t["actions"]
        .as_array_mut()
        .unwrap()
        .push(json!("MyIngress.set_prio"));
    t["action_ids"].as_array_mut().unwrap().push(json!(99));
    t["next_tables"]["MyIngress.set_prio"] = json!("MyIngress.acl");
    let mut sw = Switch::new(&v.to_string(), 1).unwrap_or_else(|e| panic!("{e}"));
    op(&mut sw, 30, "MyIngress.set_prio", &[]);
    sw
}

#[test]
fn strict_priority_queues() {
    let mut sw = with_priority_action();
    sw.set_port_rate(1, Rate::Pps(1)).unwrap();
    sw.set_priority_queues(1, 2).unwrap();
    sw.inject(1, &cmd_packet(30, 0, 0xa), 0); // dequeued at 0
    sw.inject(1, &cmd_packet(30, 0, 0xb), 1);
    sw.inject(1, &cmd_packet(30, 1, 0xc), 2);
    sw.inject(1, &cmd_packet(30, 7, 0xd), 3); // priority 7 -> top queue (1)
    sw.inject(1, &cmd_packet(30, 0, 0xe), 4);
    assert!(sw.set_priority_queues(1, 4).is_err(), "packets queued");
    let out = sw.poll(10_000_000);
    let vals: Vec<u8> = out.iter().map(|f| f.data[20]).collect();
    assert_eq!(vals, vec![0xa, 0xc, 0xd, 0xb, 0xe]);
    let times: Vec<u64> = out.iter().map(|f| f.time_us).collect();
    assert_eq!(times, vec![0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    // enq_qdepth counts the packet's own queue: c and d went to queue 1
    let r: Vec<Report> = out.iter().map(|f| report(&f.data)).collect();
    assert_eq!((r[1].enq_qdepth, r[2].enq_qdepth), (0, 1));
    assert_eq!((r[3].enq_qdepth, r[4].enq_qdepth), (0, 1));
    assert!(sw.set_priority_queues(1, 0).is_err());
    assert!(sw.set_priority_queues(1, 9).is_err());
    sw.set_priority_queues(1, 1).unwrap();
}

#[test]
fn priority_does_not_preempt_an_earlier_arrival() {
    // a low-priority packet waiting alone is sent when the link frees up,
    // even if a high-priority one arrives later
    let mut sw = with_priority_action();
    sw.set_port_rate(1, Rate::Pps(1)).unwrap();
    sw.set_priority_queues(1, 2).unwrap();
    sw.inject(1, &cmd_packet(30, 0, 0xa), 0);
    sw.inject(1, &cmd_packet(30, 0, 0xb), 1);
    sw.inject(1, &cmd_packet(30, 1, 0xc), 1_500_000);
    let vals: Vec<u8> = sw.poll(10_000_000).iter().map(|f| f.data[20]).collect();
    assert_eq!(vals, vec![0xa, 0xb, 0xc]);
}
