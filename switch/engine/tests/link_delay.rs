//! Link emulation: a port's propagation delay after its drain rate
//! (tests/fixtures/features.json; op 0 forwards to port 1, op 2 -> fwd(2)).
mod common;
use common::*;
use ratelab_engine::{Frame, MatchValue, Rate, Switch};

/// A frame of `extra` payload bytes more than cmd_packet's, forwarded to port 1.
fn packet(extra: usize) -> Vec<u8> {
    let mut p = cmd_packet(0, 0, 0);
    p.resize(p.len() + extra, 0x5a);
    p
}

/// Runs the switch as a discrete-event simulator would (poll at each
/// `next_event_time`) and returns every frame with the time it was polled.
fn drain(sw: &mut Switch) -> Vec<(u64, Frame)> {
    let mut got = Vec::new();
    while let Some(t) = sw.next_event_time() {
        for f in sw.poll(t) {
            got.push((t, f));
        }
    }
    got
}

fn tx_us(rate: Rate, bytes: usize) -> u64 {
    rate.tx_time_us(bytes)
}

#[test]
fn frames_leave_at_dequeue_plus_transmission_plus_delay() {
    let wire = packet(0).len() + REPORT_LEN;
    for (rate, delay) in [
        (Rate::Bps(32_000), 100_000),
        (Rate::Bps(2_000_000), 70_000),
        (Rate::Bps(50_000_000), 15_000),
        (Rate::Bps(10_000_000), 100),
        (Rate::Bps(10_000_000), 5_000_000),
        (Rate::Bps(32_000), 5_000_000),
        (Rate::Unlimited, 1),
        (Rate::Pps(1000), 20_000),
    ] {
        let mut sw = switch("features.json");
        sw.set_port_rate(1, rate).unwrap();
        sw.set_link_delay(1, delay).unwrap();
        assert_eq!(sw.link_delay(1), delay);
        for _ in 0..3 {
            sw.inject(1, &packet(0), 0);
        }
        assert!(
            sw.poll(0).is_empty(),
            "{rate:?}/{delay}: nothing leaves at 0"
        );
        let tx = tx_us(rate, wire);
        let got = drain(&mut sw);
        assert_eq!(got.len(), 3, "{rate:?}/{delay}");
        for (i, (polled, f)) in got.iter().enumerate() {
            let t_deq = i as u64 * tx;
            let expect = t_deq + tx + delay;
            assert_eq!(
                f.time_us, t_deq,
                "{rate:?}/{delay}: time_us is the dequeue time"
            );
            assert_eq!(f.emit_us, expect, "{rate:?}/{delay}: frame {i}");
            // Polled at the first event time that has it: neither early nor late.
            assert_eq!(*polled, expect, "{rate:?}/{delay}: frame {i}");
            // Queueing metadata keeps meaning the dequeue.
            assert_eq!(report(&f.data).eg_ts as u64, t_deq);
        }
        assert_eq!(sw.in_flight(1), 0);
    }
}

#[test]
fn next_event_time_is_the_head_of_the_delay_line() {
    let mut sw = switch("features.json");
    sw.set_port_rate(1, Rate::Bps(8000)).unwrap(); // one byte per ms
    sw.set_link_delay(1, 250_000).unwrap();
    let wire = (packet(0).len() + REPORT_LEN) as u64;
    sw.inject(1, &packet(0), 1000);
    // Dequeued at once (at 1000); its last bit is at the far end after tx + delay.
    assert!(sw.poll(1000).is_empty());
    let due = 1000 + wire * 1000 + 250_000;
    assert_eq!(sw.in_flight(1), 1);
    assert_eq!(sw.next_event_time(), Some(due));
    assert!(sw.poll(due - 1).is_empty());
    let out = sw.poll(due);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].time_us, out[0].emit_us), (1000, due));
    assert_eq!(sw.next_event_time(), None);
}

#[test]
fn fifty_mbit_for_five_seconds_is_all_in_flight_and_keeps_the_rate() {
    // 5 s x 50 Mbit/s of 1500-byte frames offered at the line rate: about
    // 31 MB on the link at once; the delay adds latency, never a gap.
    let mut sw = switch("features.json");
    let rate = Rate::Bps(50_000_000);
    let delay = 5_000_000;
    sw.set_port_rate(1, rate).unwrap();
    sw.set_link_delay(1, delay).unwrap();
    let p = packet(1500 - cmd_packet(0, 0, 0).len() - REPORT_LEN);
    let tx = tx_us(rate, 1500);
    let n = (delay / tx) as usize;
    let mut out = Vec::new();
    for i in 0..n as u64 {
        sw.inject(1, &p, i * tx);
        sw.poll_into(i * tx, &mut out);
    }
    assert!(out.is_empty());
    assert!(sw.in_flight(1) * 1500 > 31_000_000, "{}", sw.in_flight(1));
    assert_eq!(sw.port_stats(1).queue_drops, 0);
    let got = drain(&mut sw);
    assert_eq!(got.len(), n);
    for (i, (polled, f)) in got.iter().enumerate() {
        let t_deq = i as u64 * tx;
        assert_eq!(f.data.len(), 1500);
        assert_eq!(
            (f.time_us, f.emit_us, *polled),
            (t_deq, t_deq + tx + delay, t_deq + tx + delay)
        );
    }
}

#[test]
fn a_change_applies_to_packets_dequeued_after_it_and_never_reorders() {
    let mut sw = switch("features.json");
    sw.set_port_rate(1, Rate::Pps(10)).unwrap(); // 100 ms per packet
    sw.set_link_delay(1, 300_000).unwrap();
    sw.inject(1, &packet(0), 0); // dequeued at 0: leaves at 0 + 100 ms + 300 ms
    sw.inject(1, &packet(0), 0); // waits until 100 ms
    sw.set_link_delay(1, 20_000).unwrap();
    // Third packet, after the delay is removed.
    sw.inject(1, &packet(0), 0);
    sw.set_link_delay(1, 0).unwrap();
    let got: Vec<(u64, u64)> = drain(&mut sw)
        .iter()
        .map(|(_, f)| (f.time_us, f.emit_us))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 400_000),
            // 100 + 100 + 20 ms would overtake the first: it waits behind it.
            (100_000, 400_000),
            // No delay any more, but still behind the frames on the link.
            (200_000, 400_000),
        ]
    );
    // Once the line is empty, frames leave at their dequeue time again.
    sw.inject(1, &packet(0), 1_000_000);
    let out = sw.poll(1_000_000);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].time_us, out[0].emit_us), (1_000_000, 1_000_000));
}

#[test]
fn later_dequeues_see_the_new_delay() {
    let mut sw = switch("features.json");
    sw.set_port_rate(1, Rate::Pps(10)).unwrap();
    sw.set_link_delay(1, 1000).unwrap();
    sw.inject(1, &packet(0), 0);
    sw.inject(1, &packet(0), 0);
    sw.set_link_delay(1, 5000).unwrap();
    let got: Vec<u64> = drain(&mut sw).iter().map(|(_, f)| f.emit_us).collect();
    assert_eq!(got, vec![101_000, 205_000]);
}

#[test]
fn ports_without_a_delay_are_unchanged_and_output_is_in_time_order() {
    let mut sw = switch("features.json");
    sw.table_add(
        "MyIngress.ctl",
        vec![MatchValue::Exact(2)],
        "MyIngress.fwd",
        &[2],
        0,
    )
    .unwrap();
    sw.set_link_delay(1, 50).unwrap();
    sw.set_link_delay(1, 0).unwrap(); // removed again
    sw.set_link_delay(2, 30).unwrap();
    sw.inject(1, &packet(0), 10);
    sw.inject(1, &cmd_packet(2, 0, 0), 10); // to port 2: leaves at 40
    sw.inject(1, &packet(0), 20);
    let direct = sw.poll(20);
    assert_eq!(
        direct
            .iter()
            .map(|f| (f.port, f.time_us, f.emit_us))
            .collect::<Vec<_>>(),
        vec![(1, 10, 10), (1, 20, 20)]
    );
    assert_eq!(sw.next_event_time(), Some(40));
    sw.inject(1, &packet(0), 45);
    let later = sw.poll(45);
    assert_eq!(
        later
            .iter()
            .map(|f| (f.port, f.emit_us))
            .collect::<Vec<_>>(),
        vec![(2, 40), (1, 45)]
    );
    assert!(sw.set_link_delay(512, 1).is_err());
    assert_eq!(sw.link_delay(1), 0);
}

#[test]
fn reload_keeps_frames_already_on_the_link() {
    let mut sw = switch("features.json");
    sw.set_link_delay(1, 1000).unwrap();
    sw.inject(1, &packet(0), 0);
    assert!(sw.poll(0).is_empty()); // dequeued: on the link now
    assert_eq!(sw.in_flight(1), 1);
    sw.reload(&fixture("features.json")).unwrap();
    assert_eq!(sw.link_delay(1), 1000);
    let out = sw.poll(1000);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].emit_us, 1000);
}

/// Frames of 1,000-byte payload through a 10 Mbit/s port with `delay` and
/// `jitter` (µs), all queued at time 0; the times they leave the engine
/// at, minus what the rate and delay alone give.
fn jitter_extras(sw: &mut Switch, delay: u64, jitter: u64, frames: usize) -> Vec<i64> {
    let rate = Rate::Bps(10_000_000);
    sw.set_port_rate(1, rate).unwrap();
    sw.set_link_delay(1, delay).unwrap();
    sw.set_link_jitter(1, jitter).unwrap();
    assert_eq!(sw.link_jitter(1), jitter);
    sw.set_queue_depth(1, frames).unwrap();
    let p = packet(1000);
    let tx = tx_us(rate, p.len() + REPORT_LEN);
    for _ in 0..frames {
        sw.inject(1, &p, 0);
    }
    let got = drain(sw);
    assert_eq!(got.len(), frames);
    got.iter()
        .enumerate()
        .map(|(i, (polled, f))| {
            assert_eq!(*polled, f.emit_us, "frame {i} is handed out when due");
            f.emit_us as i64 - (i as u64 * tx + tx + delay) as i64
        })
        .collect()
}

#[test]
fn jitter_adds_a_bounded_random_delay_and_never_reorders() {
    // Frames leave every 898 us; a jitter of 600 us stays below that gap,
    // so no frame waits behind the one ahead: each extra is its own draw.
    let mut sw = switch("features.json");
    let extras = jitter_extras(&mut sw, 20_000, 600, 400);
    assert!(extras.iter().all(|&e| (0..=600).contains(&e)), "{extras:?}");
    let mean = extras.iter().sum::<i64>() as f64 / extras.len() as f64;
    assert!(
        (250.0..350.0).contains(&mean),
        "uniform 0..=600: mean {mean}"
    );
    let low = extras.iter().filter(|&&e| e < 300).count();
    assert!(
        (150..250).contains(&low),
        "half below the middle: {low} of 400"
    );
    // A jitter larger than the gap between frames: frames bunch up behind
    // a late one but keep their order.
    let mut sw = switch("features.json");
    let wide = jitter_extras(&mut sw, 20_000, 5_000, 400);
    let rate = Rate::Bps(10_000_000);
    let tx = tx_us(rate, packet(1000).len() + REPORT_LEN) as i64;
    let times: Vec<i64> = wide
        .iter()
        .enumerate()
        .map(|(i, e)| i as i64 * tx + e)
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "in order");
    assert!(wide.iter().all(|&e| (0..=5_000).contains(&e)));
}

#[test]
fn jitter_repeats_with_the_seed_and_differs_by_seed_and_port() {
    let run = |seed: u64| {
        let mut sw = Switch::new(&fixture("features.json"), seed).unwrap();
        jitter_extras(&mut sw, 1_000, 500, 50)
    };
    assert_eq!(run(7), run(7), "the same seed, the same draws");
    assert_ne!(run(7), run(8), "another seed, other draws");
    // Setting it again restarts the draws.
    let mut sw = switch("features.json");
    let first = jitter_extras(&mut sw, 1_000, 500, 50);
    let mut again = switch("features.json");
    again.set_link_jitter(1, 500).unwrap();
    assert_eq!(first, jitter_extras(&mut again, 1_000, 500, 50));
}

#[test]
fn zero_jitter_is_exactly_the_delay() {
    let mut sw = switch("features.json");
    sw.set_link_jitter(1, 300).unwrap();
    let extras = jitter_extras(&mut sw, 2_000, 0, 20);
    assert!(extras.iter().all(|&e| e == 0), "{extras:?}");
    // Jitter alone, without a delay, still holds frames on the link.
    let mut sw = switch("features.json");
    let extras = jitter_extras(&mut sw, 0, 400, 100);
    assert!(extras.iter().all(|&e| (0..=400).contains(&e)));
    assert!(extras.iter().any(|&e| e > 0));
    assert!(sw.set_link_jitter(4096, 1).is_err(), "a port out of range");
}
