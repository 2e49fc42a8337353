//! A port whose capacity follows a mahimahi trace (`Switch::set_port_trace`):
//! frames leave at the opportunities that carry their bytes
//! (tests/fixtures/features.json; op 0 forwards to port 1).
mod common;
use common::*;
use ratelab_engine::{Frame, Rate, Switch, Trace};
use std::sync::Arc;

/// A frame forwarded to port 1 carrying an IP packet of `ip_bytes` (the
/// trace counts those: the frame less its 14-byte Ethernet header).
fn frame_of(ip_bytes: usize) -> Vec<u8> {
    let mut p = cmd_packet(0, 0, 0);
    p.resize(ip_bytes + 14 - REPORT_LEN, 0x5a);
    p
}

fn trace(text: &str) -> Arc<Trace> {
    Arc::new(Trace::parse(text, "test.mahi").unwrap())
}

/// Polls at each `next_event_time`: every frame with the time it was polled.
fn drain(sw: &mut Switch) -> Vec<(u64, Frame)> {
    let mut got = Vec::new();
    while let Some(t) = sw.next_event_time() {
        for f in sw.poll(t) {
            got.push((t, f));
        }
    }
    got
}

#[test]
fn whole_frames_leave_one_per_opportunity_and_the_trace_loops() {
    for delay in [0, 500] {
        let mut sw = switch("features.json");
        // Opportunities at 2, 2 and 7 ms, then 9, 9, 14, 16, ...
        sw.set_port_trace(1, Some(trace("2\n2\n7\n")), 0).unwrap();
        sw.set_port_rate(1, Rate::Bps(1_000)).unwrap(); // ignored while a trace is set
        sw.set_link_delay(1, delay).unwrap();
        for _ in 0..5 {
            sw.inject(1, &frame_of(1500), 0);
        }
        assert!(sw.poll(0).is_empty(), "nothing is delivered before 2 ms");
        let got = drain(&mut sw);
        let seen: Vec<(u64, u64, u64)> = got
            .iter()
            .map(|(polled, f)| (f.time_us, f.emit_us, *polled))
            .collect();
        let expect: Vec<(u64, u64, u64)> = [
            (0, 2000),
            (2000, 2000),
            (2000, 7000),
            (7000, 9000),
            (9000, 9000),
        ]
        .iter()
        .map(|&(deq, out)| (deq, out + delay, out + delay))
        .collect();
        assert_eq!(seen, expect, "delay {delay}");
        // The program sees the dequeue time.
        for (_, f) in &got {
            assert_eq!(report(&f.data).eg_ts as u64, f.time_us);
        }
        assert_eq!(sw.port_stats(1).tx_packets, 5);
    }
}

#[test]
fn small_frames_share_an_opportunity_and_large_ones_span_several() {
    let mut sw = switch("features.json");
    sw.set_port_trace(1, Some(trace("1\n2\n3\n4\n")), 0)
        .unwrap();
    for bytes in [500, 500, 500, 100, 1000] {
        sw.inject(1, &frame_of(bytes), 0);
    }
    let out: Vec<u64> = drain(&mut sw).iter().map(|(_, f)| f.emit_us).collect();
    // Three 500-byte frames fill the 1 ms opportunity; 100 + 1000 go at 2 ms.
    assert_eq!(out, vec![1000, 1000, 1000, 2000, 2000]);
    // An idle link loses its opportunities: ready at 2.5 ms, 9000 bytes
    // take 3, 4, 5, 6, 7 and 8 ms.
    sw.inject(1, &frame_of(9000), 2500);
    let out: Vec<(u64, u64)> = drain(&mut sw)
        .iter()
        .map(|(_, f)| (f.time_us, f.emit_us))
        .collect();
    assert_eq!(out, vec![(2500, 8000)]);
}

#[test]
fn the_trace_starts_at_the_given_time_and_can_be_removed() {
    let mut sw = switch("features.json");
    sw.set_port_trace(1, Some(trace("10\n")), 1_000_000)
        .unwrap();
    assert_eq!(sw.port_trace(1).map(|t| t.period_ms()), Some(10));
    sw.inject(1, &frame_of(1500), 1_000_000);
    sw.inject(1, &frame_of(1500), 1_003_000);
    let out: Vec<u64> = drain(&mut sw).iter().map(|(_, f)| f.emit_us).collect();
    assert_eq!(out, vec![1_010_000, 1_020_000]);
    // Back to the port's rate: 1514 bytes at 12.112 Mbit/s = 1 ms, sent at dequeue.
    sw.set_port_trace(1, None, 0).unwrap();
    assert!(sw.port_trace(1).is_none());
    sw.set_port_rate(1, Rate::Bps(12_112_000)).unwrap();
    sw.inject(1, &frame_of(1500), 2_000_000);
    sw.inject(1, &frame_of(1500), 2_000_000);
    let out: Vec<(u64, u64)> = drain(&mut sw)
        .iter()
        .map(|(_, f)| (f.time_us, f.emit_us))
        .collect();
    assert_eq!(out, vec![(2_000_000, 2_000_000), (2_001_000, 2_001_000)]);
    assert!(sw.set_port_trace(512, Some(trace("1\n")), 0).is_err());
}

#[test]
fn the_queue_fills_behind_a_slow_trace() {
    // One opportunity every 100 ms: 12 kbit/s; the queue of 4 overflows.
    let mut sw = switch("features.json");
    sw.set_port_trace(1, Some(trace("100\n")), 0).unwrap();
    sw.set_queue_depth(1, 4).unwrap();
    for i in 0..10 {
        sw.inject(1, &frame_of(1500), i * 1000);
    }
    // The first is dequeued at once and waits for 100 ms; 4 wait in the queue.
    assert_eq!(sw.queue_len(1), 4);
    assert_eq!(sw.port_stats(1).queue_drops, 5);
    let out: Vec<u64> = drain(&mut sw).iter().map(|(_, f)| f.emit_us).collect();
    assert_eq!(out, vec![100_000, 200_000, 300_000, 400_000, 500_000]);
}
