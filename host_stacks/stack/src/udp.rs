//! UDP traffic, sans-IO: sources (constant bit rate, Poisson with a seeded
//! generator, on-off) and a sink that counts loss, duplicates, reordering
//! and one-way delay. Datagrams are real UDP (header and checksum over the
//! IPv4 pseudo-header); the payload starts with a 16-byte probe header (u64
//! sequence number, u64 send time in nanoseconds, big-endian).
//!
//! Rates count whole IPv4 packets: payload + 8 bytes UDP + 20 bytes IPv4.

use crate::rng::Pcg32;
use crate::tcp::{Endpoint, Transmit};
use crate::wire::{self, UdpHeader, UDP_HEADER_LEN};
use crate::{Nanos, SECONDS};
use std::fmt;

/// The probe header at the start of every payload.
pub const PROBE_HEADER: usize = 16;
/// UDP and IPv4 header bytes counted in the rate.
pub const OVERHEAD: usize = UDP_HEADER_LEN + 20;

/// When a source sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    /// Evenly spaced packets.
    Cbr { rate_bps: u64 },
    /// Exponential gaps with the mean of the rate (seeded).
    Poisson { rate_bps: u64, seed: u64 },
    /// Constant rate for `on`, silent for `off`, repeating.
    OnOff {
        rate_bps: u64,
        on: Nanos,
        off: Nanos,
    },
}

/// A UDP source's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SourceConfig {
    pub local: Endpoint,
    pub remote: Endpoint,
    /// Payload bytes per datagram (at least the probe header).
    pub size: usize,
    pub pattern: Pattern,
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
    next_at: Option<Nanos>,
    sent: u64,
    bytes: u64,
}

impl UdpSource {
    /// A source starting at `now`.
    pub fn new(cfg: SourceConfig, now: Nanos) -> Result<UdpSource, UdpConfigError> {
        let bad = |field, message: String| Err(UdpConfigError { field, message });
        if cfg.size < PROBE_HEADER || cfg.size > 65_507 {
            return bad(
                "size",
                format!("must be {PROBE_HEADER} to 65507 bytes, got {}", cfg.size),
            );
        }
        let (rate, seed) = match cfg.pattern {
            Pattern::Cbr { rate_bps } => (rate_bps, 0),
            Pattern::Poisson { rate_bps, seed } => (rate_bps, seed),
            Pattern::OnOff { rate_bps, on, .. } => {
                if on == 0 {
                    return bad("on", "must be above 0".to_string());
                }
                (rate_bps, 0)
            }
        };
        if rate == 0 || rate > 1_000_000_000_000 {
            return bad("rate", format!("must be 1 b/s to 1 Tb/s, got {rate}"));
        }
        let mut s = UdpSource {
            cfg,
            rng: Pcg32::new(seed, 0x75_6470),
            start: now,
            next_at: Some(now),
            sent: 0,
            bytes: 0,
        };
        if let Pattern::Poisson { .. } = cfg.pattern {
            s.next_at = Some(now + s.gap());
        }
        Ok(s)
    }

    fn rate(&self) -> u64 {
        match self.cfg.pattern {
            Pattern::Cbr { rate_bps }
            | Pattern::Poisson { rate_bps, .. }
            | Pattern::OnOff { rate_bps, .. } => rate_bps,
        }
    }

    /// Mean gap between packets at the rate.
    fn interval(&self) -> f64 {
        ((self.cfg.size + OVERHEAD) * 8) as f64 * SECONDS as f64 / self.rate() as f64
    }

    fn gap(&mut self) -> Nanos {
        match self.cfg.pattern {
            Pattern::Poisson { .. } => {
                let m = self.interval();
                self.rng.exponential(m).round() as Nanos
            }
            _ => 0,
        }
    }

    /// Packets and payload bytes sent.
    pub fn sent(&self) -> (u64, u64) {
        (self.sent, self.bytes)
    }

    /// When the next datagram is due (None: finished).
    pub fn poll_at(&self) -> Option<Nanos> {
        self.next_at
    }

    /// Write the next datagram into `buf` if one is due at `now`.
    pub fn poll_transmit(&mut self, now: Nanos, buf: &mut [u8]) -> Option<Transmit> {
        let due = self.next_at?;
        if now < due {
            return None;
        }
        if self.cfg.count.is_some_and(|c| self.sent >= c)
            || self.cfg.duration.is_some_and(|d| due >= self.start + d)
        {
            self.next_at = None;
            return None;
        }
        let size = self.cfg.size;
        let body = buf.get_mut(UDP_HEADER_LEN..UDP_HEADER_LEN + size)?;
        body[..8].copy_from_slice(&self.sent.to_be_bytes());
        body[8..16].copy_from_slice(&now.to_be_bytes());
        body[16..].fill(0);
        let h = UdpHeader {
            src_port: self.cfg.local.port,
            dst_port: self.cfg.remote.port,
        };
        let len =
            wire::finish_udp(&h, self.cfg.local.addr, self.cfg.remote.addr, buf, size).ok()?;
        self.sent += 1;
        self.bytes += size as u64;
        // Next time: from the schedule, not from `now`, so a late caller
        // does not lower the rate.
        self.next_at = Some(match self.cfg.pattern {
            Pattern::Cbr { .. } => {
                self.start + (self.sent as f64 * self.interval()).round() as Nanos
            }
            Pattern::Poisson { .. } => due + self.gap(),
            Pattern::OnOff { on, off, .. } => {
                let k = self.sent;
                // Packets per on period, then skip the off time.
                let per_on = ((on as f64 / self.interval()).ceil() as u64).max(1);
                let period = (k / per_on) * (on + off);
                self.start + period + ((k % per_on) as f64 * self.interval()).round() as Nanos
            }
        });
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
        let Ok((h, payload)) = wire::parse_udp(bytes, src, self.local.addr) else {
            self.malformed += 1;
            return;
        };
        if h.dst_port != self.local.port || payload.len() < PROBE_HEADER {
            self.malformed += 1;
            return;
        }
        let mut b = [0u8; 8];
        b.copy_from_slice(&payload[..8]);
        let s = u64::from_be_bytes(b);
        b.copy_from_slice(&payload[8..16]);
        let sent_at = u64::from_be_bytes(b);
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
        self.bytes += payload.len() as u64;
        self.first_at.get_or_insert(now);
        self.last_at = Some(now);
        self.delay.add(now.saturating_sub(sent_at));
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

    fn source(pattern: Pattern, size: usize) -> UdpSource {
        UdpSource::new(
            SourceConfig {
                local: SRC,
                remote: DST,
                size,
                pattern,
                count: None,
                duration: None,
            },
            0,
        )
        .unwrap()
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
        // 1000-byte payload = 1028 bytes on IPv4 = 8224 bits; at 8.224 Mb/s one per ms.
        let mut s = source(
            Pattern::Cbr {
                rate_bps: 8_224_000,
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
    fn poisson_rate_and_seed() {
        let p = Pattern::Poisson {
            rate_bps: 8_224_000,
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
    }

    #[test]
    fn on_off_is_silent_while_off() {
        let p = Pattern::OnOff {
            rate_bps: 8_224_000,
            on: SECONDS,
            off: 5 * SECONDS,
        };
        let mut s = source(p, 1000);
        let times = drive(&mut s, &mut UdpSink::new(DST), 13 * SECONDS);
        assert_eq!(times.len(), 3000);
        assert!(
            times.iter().all(|&t| t % (6 * SECONDS) < SECONDS),
            "only in on periods"
        );
    }

    #[test]
    fn count_and_duration_stop_the_source() {
        let mut s = UdpSource::new(
            SourceConfig {
                local: SRC,
                remote: DST,
                size: 100,
                pattern: Pattern::Cbr {
                    rate_bps: 1_000_000,
                },
                count: Some(10),
                duration: None,
            },
            0,
        )
        .unwrap();
        let times = drive(&mut s, &mut UdpSink::new(DST), 100 * SECONDS);
        assert_eq!(times.len(), 10);
        assert_eq!(s.poll_at(), None);
    }

    #[test]
    fn sink_counts_loss_duplicates_reordering_and_garbage() {
        let mut s = source(
            Pattern::Cbr {
                rate_bps: 8_224_000,
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
        let mut c = SourceConfig {
            local: SRC,
            remote: DST,
            size: 8,
            pattern: Pattern::Cbr { rate_bps: 1 },
            count: None,
            duration: None,
        };
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
    }
}
