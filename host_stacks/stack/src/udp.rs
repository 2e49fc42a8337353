//! UDP traffic, sans-IO: sources (constant bit rate or Poisson with a seeded
//! generator, either one optionally on-off) and a sink that counts loss,
//! duplicates, reordering and one-way delay. Datagrams are real UDP (header
//! and checksum over the IPv4 pseudo-header); the payload starts with a
//! 20-byte probe header ([`Probe`]: u32 flow id, u64 sequence number, u64
//! send time in nanoseconds, big-endian), then zeros. A live driver whose
//! kernel makes the UDP header uses the payload-only calls
//! ([`UdpSource::poll_payload`], [`UdpSink::handle_payload`]).
//!
//! Rates count whole IPv4 packets: payload + 8 bytes UDP + 20 bytes IPv4.
//!
//! Schedules run in "active time" (time spent in on-periods), mapped to real
//! time as `start + (v / on) * (on + off) + v % on` (without on-off, active
//! time is real time). Packet k of a CBR source is at active time
//! `ceil(k * bits * 10^9 / rate)` ns, exactly; a Poisson source adds
//! exponential gaps of the mean interval, the first one before packet 0.

use crate::rng::Pcg32;
use crate::tcp::{Endpoint, Transmit};
use crate::wire::{self, UdpHeader, UDP_HEADER_LEN};
use crate::{Nanos, SECONDS};
use std::fmt;

/// The probe header at the start of every payload.
pub const PROBE_HEADER: usize = 20;
/// UDP and IPv4 header bytes counted in the rate.
pub const OVERHEAD: usize = UDP_HEADER_LEN + 20;
/// The largest payload (an IPv4 total length of 65535).
pub const MAX_PAYLOAD: usize = 65_535 - OVERHEAD;

/// The probe header: which flow, which packet, when it was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub flow_id: u32,
    pub seq: u64,
    pub sent_at: Nanos,
}

impl Probe {
    /// Write the header into the first [`PROBE_HEADER`] bytes of `out`
    /// (which must be at least that long).
    pub fn write(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.flow_id.to_be_bytes());
        out[4..12].copy_from_slice(&self.seq.to_be_bytes());
        out[12..20].copy_from_slice(&self.sent_at.to_be_bytes());
    }

    /// The header at the start of `payload` (None: too short).
    pub fn parse(payload: &[u8]) -> Option<Probe> {
        let h = payload.get(..PROBE_HEADER)?;
        let be64 = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
        Some(Probe {
            flow_id: u32::from_be_bytes(h[0..4].try_into().expect("4 bytes")),
            seq: be64(&h[4..12]),
            sent_at: be64(&h[12..20]),
        })
    }
}

/// How the gaps between packets are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    /// Evenly spaced packets.
    Cbr { rate_bps: u64 },
    /// Exponential gaps with the mean of the rate (seeded).
    Poisson { rate_bps: u64, seed: u64 },
}

/// Send for `on`, stay silent for `off`, repeating (active time only runs while on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOff {
    pub on: Nanos,
    pub off: Nanos,
}

/// A UDP source's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SourceConfig {
    pub local: Endpoint,
    pub remote: Endpoint,
    /// Carried in every probe header, so one sink tells flows apart.
    pub flow_id: u32,
    /// Payload bytes per datagram (at least the probe header).
    pub size: usize,
    pub pattern: Pattern,
    pub on_off: Option<OnOff>,
    /// Stop after this many packets.
    pub count: Option<u64>,
    /// Stop this long after the start.
    pub duration: Option<Nanos>,
}

/// A bad source setting, naming the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UdpConfigError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for UdpConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for UdpConfigError {}

/// A UDP source.
#[derive(Clone, Debug)]
pub struct UdpSource {
    cfg: SourceConfig,
    rng: Pcg32,
    start: Nanos,
    /// Bits of one packet on the IPv4 link.
    bits: u64,
    /// Active time of the next packet (Poisson: the running sum of gaps).
    active: Nanos,
    next_at: Option<Nanos>,
    sent: u64,
    bytes: u64,
}

impl UdpSource {
    /// A source starting at `now`.
    pub fn new(cfg: SourceConfig, now: Nanos) -> Result<UdpSource, UdpConfigError> {
        let bad = |field, message: String| Err(UdpConfigError { field, message });
        if cfg.size < PROBE_HEADER || cfg.size > MAX_PAYLOAD {
            return bad(
                "size",
                format!(
                    "must be {PROBE_HEADER} to {MAX_PAYLOAD} bytes, got {}",
                    cfg.size
                ),
            );
        }
        let (rate, seed) = match cfg.pattern {
            Pattern::Cbr { rate_bps } => (rate_bps, 0),
            Pattern::Poisson { rate_bps, seed } => (rate_bps, seed),
        };
        if rate == 0 || rate > 1_000_000_000_000 {
            return bad("rate", format!("must be 1 b/s to 1 Tb/s, got {rate}"));
        }
        if cfg.on_off.is_some_and(|o| o.on == 0) {
            return bad("on", "must be above 0".to_string());
        }
        let mut s = UdpSource {
            cfg,
            rng: Pcg32::new(seed, 0x75_6470),
            start: now,
            bits: ((cfg.size + OVERHEAD) * 8) as u64,
            active: 0,
            next_at: None,
            sent: 0,
            bytes: 0,
        };
        s.schedule();
        Ok(s)
    }

    fn rate(&self) -> u64 {
        match self.cfg.pattern {
            Pattern::Cbr { rate_bps } | Pattern::Poisson { rate_bps, .. } => rate_bps,
        }
    }

    /// Set `next_at` for packet number `sent` (None: the source is done).
    fn schedule(&mut self) {
        if self.cfg.count.is_some_and(|c| self.sent >= c) {
            self.next_at = None;
            return;
        }
        self.active = match self.cfg.pattern {
            Pattern::Cbr { rate_bps } => {
                let exact = self.sent as u128 * self.bits as u128 * SECONDS as u128;
                exact.div_ceil(rate_bps as u128).min(Nanos::MAX as u128) as Nanos
            }
            Pattern::Poisson { rate_bps, .. } => {
                let mean = self.bits as f64 * SECONDS as f64 / rate_bps as f64;
                let gap = self.rng.exponential(mean).round() as Nanos;
                self.active.saturating_add(gap)
            }
        };
        let offset = match self.cfg.on_off {
            Some(OnOff { on, off }) => {
                let cycles = self.active / on;
                cycles
                    .saturating_mul(on.saturating_add(off))
                    .saturating_add(self.active % on)
            }
            None => self.active,
        };
        let at = self.start.saturating_add(offset);
        self.next_at = match self.cfg.duration {
            Some(d) if offset >= d => None,
            _ => Some(at),
        };
    }

    /// Packets and payload bytes sent.
    pub fn sent(&self) -> (u64, u64) {
        (self.sent, self.bytes)
    }

    /// The settings.
    pub fn config(&self) -> &SourceConfig {
        &self.cfg
    }

    /// The configured rate in bits per second of IPv4 packets.
    pub fn rate_bps(&self) -> u64 {
        self.rate()
    }

    /// When the next datagram is due (None: finished).
    pub fn poll_at(&self) -> Option<Nanos> {
        self.next_at
    }

    /// Write the next payload (probe header, then zeros) into `buf` if one
    /// is due at `now`; returns its length. For drivers whose kernel adds
    /// the UDP header. Nothing is written when `buf` is too small.
    pub fn poll_payload(&mut self, now: Nanos, buf: &mut [u8]) -> Option<usize> {
        let due = self.next_at?;
        let size = self.cfg.size;
        if now < due || buf.len() < size {
            return None;
        }
        let body = &mut buf[..size];
        Probe {
            flow_id: self.cfg.flow_id,
            seq: self.sent,
            sent_at: now,
        }
        .write(body);
        body[PROBE_HEADER..].fill(0);
        self.sent += 1;
        self.bytes += size as u64;
        // Next time from the schedule, not from `now`, so a late caller
        // does not lower the rate.
        self.schedule();
        Some(size)
    }

    /// Write the next datagram (UDP header and payload) into `buf` if one is due at `now`.
    pub fn poll_transmit(&mut self, now: Nanos, buf: &mut [u8]) -> Option<Transmit> {
        let size = self.cfg.size;
        if buf.len() < UDP_HEADER_LEN + size {
            return None;
        }
        self.poll_payload(now, &mut buf[UDP_HEADER_LEN..])?;
        let h = UdpHeader {
            src_port: self.cfg.local.port,
            dst_port: self.cfg.remote.port,
        };
        // Cannot fail: the buffer holds the datagram and size <= MAX_PAYLOAD.
        let len = wire::finish_udp(&h, self.cfg.local.addr, self.cfg.remote.addr, buf, size)
            .expect("room checked above");
        Some(Transmit {
            len,
            src: self.cfg.local.addr,
            dst: self.cfg.remote.addr,
        })
    }
}

/// Duplicates are told apart within this many sequence numbers below the highest.
const DUP_WINDOW: u64 = 4096;

/// Receives probe datagrams and counts.
#[derive(Clone, Debug)]
pub struct UdpSink {
    local: Endpoint,
    /// Bit per sequence number in the window below `highest`.
    seen: [u64; (DUP_WINDOW / 64) as usize],
    highest: Option<u64>,
    pub received: u64,
    pub bytes: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub malformed: u64,
    pub first_at: Option<Nanos>,
    pub last_at: Option<Nanos>,
    pub delay: crate::app::DelayStats,
}

impl UdpSink {
    pub fn new(local: Endpoint) -> UdpSink {
        UdpSink {
            local,
            seen: [0; (DUP_WINDOW / 64) as usize],
            highest: None,
            received: 0,
            bytes: 0,
            duplicates: 0,
            reordered: 0,
            malformed: 0,
            first_at: None,
            last_at: None,
            delay: Default::default(),
        }
    }

    fn bit(&mut self, s: u64) -> (usize, u64) {
        let i = (s % DUP_WINDOW) as usize;
        (i / 64, 1u64 << (i % 64))
    }

    /// A datagram (IPv4 payload) from `src` arrived at `now`.
    pub fn handle_datagram(&mut self, now: Nanos, src: [u8; 4], bytes: &[u8]) {
        match wire::parse_udp(bytes, src, self.local.addr) {
            Ok((h, payload)) if h.dst_port == self.local.port => self.handle_payload(now, payload),
            _ => self.malformed += 1,
        }
    }

    /// A UDP payload arrived at `now` (for drivers whose kernel took the
    /// UDP header off); one shorter than the probe header is malformed.
    pub fn handle_payload(&mut self, now: Nanos, payload: &[u8]) {
        match Probe::parse(payload) {
            Some(probe) => self.record(now, probe, payload.len()),
            None => self.malformed += 1,
        }
    }

    /// Count a probe of `len` payload bytes that arrived at `now` (its flow
    /// id is not checked: a sink that serves many flows keeps one
    /// `UdpSink` per flow and routes by [`Probe::flow_id`]).
    pub fn record(&mut self, now: Nanos, probe: Probe, len: usize) {
        let (s, sent_at) = (probe.seq, probe.sent_at);
        match self.highest {
            Some(hi) if s <= hi => {
                if hi - s >= DUP_WINDOW {
                    self.reordered += 1; // too old to tell; counted as late
                } else {
                    let (w, m) = self.bit(s);
                    if self.seen[w] & m != 0 {
                        self.duplicates += 1;
                        return;
                    }
                    self.seen[w] |= m;
                    self.reordered += 1;
                }
            }
            _ => {
                // Clear the bits of the numbers skipped over (and reused slots).
                let from = self.highest.map_or(0, |h| h + 1);
                if s - from >= DUP_WINDOW {
                    self.seen = [0; (DUP_WINDOW / 64) as usize];
                } else {
                    for k in from..s {
                        let (w, m) = self.bit(k);
                        self.seen[w] &= !m;
                    }
                }
                let (w, m) = self.bit(s);
                self.seen[w] |= m;
                self.highest = Some(s);
            }
        }
        self.received += 1;
        self.bytes += len as u64;
        self.first_at.get_or_insert(now);
        self.last_at = Some(now);
        self.delay.add(now.saturating_sub(sent_at));
    }

    /// The highest sequence number received (None: nothing yet).
    pub fn highest(&self) -> Option<u64> {
        self.highest
    }

    /// Packets missing: numbers up to the highest seen that never arrived.
    pub fn lost(&self) -> u64 {
        self.highest
            .map_or(0, |h| (h + 1).saturating_sub(self.received))
    }

    /// Goodput in bits per second of payload between the first and last arrival.
    pub fn goodput_bps(&self) -> Option<f64> {
        let (a, b) = (self.first_at?, self.last_at?);
        (b > a).then(|| self.bytes as f64 * 8e9 / (b - a) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MILLIS;

    const SRC: Endpoint = Endpoint {
        addr: [10, 0, 0, 1],
        port: 9000,
    };
    const DST: Endpoint = Endpoint {
        addr: [10, 0, 0, 2],
        port: 9001,
    };
    /// 1000-byte payload = 1028 bytes on IPv4 = 8224 bits; at 8.224 Mb/s one per ms.
    const ONE_PER_MS: u64 = 8_224_000;

    fn config(pattern: Pattern, size: usize) -> SourceConfig {
        SourceConfig {
            local: SRC,
            remote: DST,
            flow_id: 5,
            size,
            pattern,
            on_off: None,
            count: None,
            duration: None,
        }
    }

    fn source(pattern: Pattern, size: usize) -> UdpSource {
        UdpSource::new(config(pattern, size), 0).unwrap()
    }

    /// Run a source until `until`, returning send times; every datagram goes to `sink`.
    fn drive(src: &mut UdpSource, sink: &mut UdpSink, until: Nanos) -> Vec<Nanos> {
        let mut buf = [0u8; 2048];
        let mut times = vec![];
        while let Some(t) = src.poll_at() {
            if t >= until {
                break;
            }
            if let Some(x) = src.poll_transmit(t, &mut buf) {
                sink.handle_datagram(t + 5 * MILLIS, x.src, &buf[..x.len]);
                times.push(t);
            }
        }
        times
    }

    #[test]
    fn cbr_spacing_is_exact() {
        let mut s = source(
            Pattern::Cbr {
                rate_bps: ONE_PER_MS,
            },
            1000,
        );
        let mut sink = UdpSink::new(DST);
        let times = drive(&mut s, &mut sink, SECONDS);
        assert_eq!(times.len(), 1000);
        assert!(times
            .iter()
            .enumerate()
            .all(|(k, &t)| t == k as u64 * MILLIS));
        assert_eq!(
            (sink.received, sink.lost(), sink.duplicates, sink.reordered),
            (1000, 0, 0, 0)
        );
        assert_eq!((sink.delay.min, sink.delay.max), (5 * MILLIS, 5 * MILLIS));
    }

    #[test]
    fn cbr_departures_round_up_without_drift() {
        // 100-byte payload = 1024 bits on IPv4; at 3 Mb/s a packet every
        // 341,333.33 ns: departures are ceil(k * 1024e9 / 3e6), no drift.
        let mut s = UdpSource::new(
            config(
                Pattern::Cbr {
                    rate_bps: 3_000_000,
                },
                100,
            ),
            7,
        )
        .unwrap();
        let times = drive(&mut s, &mut UdpSink::new(DST), 7 + SECONDS);
        assert_eq!(times.len(), 2930);
        for (k, &t) in times.iter().enumerate() {
            assert_eq!(t, 7 + (k as u64 * 1024 * SECONDS).div_ceil(3_000_000));
        }
    }

    #[test]
    fn poisson_rate_and_seed() {
        let p = Pattern::Poisson {
            rate_bps: ONE_PER_MS,
            seed: 7,
        };
        let mut s = source(p, 1000);
        let mut sink = UdpSink::new(DST);
        let times = drive(&mut s, &mut sink, 20 * SECONDS);
        // Mean 1000 per second; 20,000 expected, sd about 141.
        assert!((times.len() as i64 - 20_000).abs() < 600, "{}", times.len());
        // Exponential gaps: coefficient of variation about 1.
        let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        assert!((var.sqrt() / mean - 1.0).abs() < 0.03);
        let mut again = source(p, 1000);
        let same = drive(&mut again, &mut UdpSink::new(DST), 20 * SECONDS);
        assert_eq!(times, same, "same seed, same schedule");
        let other = Pattern::Poisson {
            rate_bps: ONE_PER_MS,
            seed: 8,
        };
        let differs = drive(&mut source(other, 1000), &mut UdpSink::new(DST), SECONDS);
        assert_ne!(
            times[..differs.len().min(100)],
            differs[..differs.len().min(100)]
        );
    }

    #[test]
    fn on_off_is_silent_while_off() {
        let mut cfg = config(
            Pattern::Cbr {
                rate_bps: ONE_PER_MS,
            },
            1000,
        );
        cfg.on_off = Some(OnOff {
            on: SECONDS,
            off: 5 * SECONDS,
        });
        let mut s = UdpSource::new(cfg, 0).unwrap();
        let times = drive(&mut s, &mut UdpSink::new(DST), 13 * SECONDS);
        assert_eq!(times.len(), 3000);
        assert!(
            times.iter().all(|&t| t % (6 * SECONDS) < SECONDS),
            "only in on periods"
        );
    }

    #[test]
    fn poisson_on_off_stays_inside_on_periods() {
        let mut cfg = config(
            Pattern::Poisson {
                rate_bps: ONE_PER_MS,
                seed: 3,
            },
            1000,
        );
        cfg.on_off = Some(OnOff {
            on: SECONDS,
            off: 5 * SECONDS,
        });
        cfg.duration = Some(12 * SECONDS);
        let mut s = UdpSource::new(cfg, 0).unwrap();
        let times = drive(&mut s, &mut UdpSink::new(DST), 100 * SECONDS);
        assert_eq!(s.poll_at(), None, "the duration ended it");
        // Two on-periods of about 1000 packets each.
        assert!((times.len() as i64 - 2000).abs() < 200, "{}", times.len());
        assert!(times.iter().all(|&t| t % (6 * SECONDS) < SECONDS));
        assert!(times.iter().any(|&t| t >= 6 * SECONDS));
    }

    #[test]
    fn count_and_duration_stop_the_source() {
        let mut cfg = config(
            Pattern::Cbr {
                rate_bps: 1_000_000,
            },
            100,
        );
        cfg.count = Some(10);
        let mut s = UdpSource::new(cfg, 0).unwrap();
        let times = drive(&mut s, &mut UdpSink::new(DST), 100 * SECONDS);
        assert_eq!(times.len(), 10);
        assert_eq!(s.poll_at(), None);
        // 1 ms apart for 10.5 ms: packets at 0..=10 ms, and done right after the last.
        let mut cfg = config(
            Pattern::Cbr {
                rate_bps: ONE_PER_MS,
            },
            1000,
        );
        cfg.duration = Some(10 * MILLIS + MILLIS / 2);
        let mut s = UdpSource::new(cfg, SECONDS).unwrap();
        let times = drive(&mut s, &mut UdpSink::new(DST), 100 * SECONDS);
        assert_eq!(times.len(), 11);
        assert_eq!(s.poll_at(), None);
    }

    #[test]
    fn payloads_carry_flow_sequence_and_send_time() {
        let mut s = source(
            Pattern::Cbr {
                rate_bps: ONE_PER_MS,
            },
            1000,
        );
        let mut buf = [0xffu8; 1000];
        assert_eq!(s.poll_payload(0, &mut buf[..999]), None, "too small");
        assert_eq!(s.sent(), (0, 0));
        assert_eq!(s.poll_payload(3, &mut buf), Some(1000));
        assert_eq!(s.poll_payload(4, &mut buf), None, "next one is at 1 ms");
        assert_eq!(
            Probe::parse(&buf),
            Some(Probe {
                flow_id: 5,
                seq: 0,
                sent_at: 3
            })
        );
        assert!(buf[PROBE_HEADER..].iter().all(|&b| b == 0));
        assert_eq!(s.poll_payload(MILLIS + 9, &mut buf), Some(1000));
        assert_eq!(
            Probe::parse(&buf).map(|p| (p.seq, p.sent_at)),
            Some((1, MILLIS + 9))
        );
        assert_eq!(Probe::parse(&buf[..PROBE_HEADER - 1]), None);
        let mut sink = UdpSink::new(DST);
        sink.handle_payload(2 * MILLIS, &buf);
        sink.handle_payload(2 * MILLIS, &buf[..PROBE_HEADER - 1]);
        assert_eq!((sink.received, sink.bytes, sink.malformed), (1, 1000, 1));
        assert_eq!(sink.highest(), Some(1));
        assert_eq!(sink.delay.min, MILLIS - 9);
    }

    #[test]
    fn sink_counts_loss_duplicates_reordering_and_garbage() {
        let mut s = source(
            Pattern::Cbr {
                rate_bps: ONE_PER_MS,
            },
            1000,
        );
        let mut sink = UdpSink::new(DST);
        let mut pkts = vec![];
        let mut buf = [0u8; 2048];
        for k in 0..10 {
            let t = s.poll_transmit(k * MILLIS, &mut buf).unwrap();
            pkts.push(buf[..t.len].to_vec());
        }
        // Deliver 0, 2, 1, 1 (duplicate), 5, 9; lose 3, 4, 6, 7, 8.
        for k in [0, 2, 1, 1, 5, 9] {
            sink.handle_datagram(20 * MILLIS, SRC.addr, &pkts[k]);
        }
        assert_eq!(
            (sink.received, sink.duplicates, sink.reordered, sink.lost()),
            (5, 1, 1, 5)
        );
        let mut bad = pkts[0].clone();
        bad[20] ^= 1;
        sink.handle_datagram(0, SRC.addr, &bad);
        sink.handle_datagram(0, SRC.addr, &pkts[0][..7]);
        assert_eq!(sink.malformed, 2);
    }

    #[test]
    fn bad_settings_name_the_field() {
        let mut c = config(Pattern::Cbr { rate_bps: 1 }, PROBE_HEADER - 1);
        assert!(UdpSource::new(c, 0)
            .unwrap_err()
            .to_string()
            .starts_with("size: "));
        c.size = MAX_PAYLOAD + 1;
        assert!(UdpSource::new(c, 0)
            .unwrap_err()
            .to_string()
            .starts_with("size: "));
        c.size = 100;
        c.pattern = Pattern::Cbr { rate_bps: 0 };
        assert!(UdpSource::new(c, 0)
            .unwrap_err()
            .to_string()
            .starts_with("rate: "));
        c.pattern = Pattern::Cbr { rate_bps: 1 };
        c.on_off = Some(OnOff { on: 0, off: 1 });
        assert!(UdpSource::new(c, 0)
            .unwrap_err()
            .to_string()
            .starts_with("on: "));
    }
}
