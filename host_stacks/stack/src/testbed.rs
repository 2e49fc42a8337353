//! A tiny deterministic simulator for tests and the benchmark: two TCP
//! endpoints joined by two one-way links (delay, rate, drop-tail queue,
//! seeded loss, reordering, duplication, corruption), events in a binary
//! heap. Packet buffers are pooled, so a long run does not allocate per
//! packet once warm.

use crate::rng::Pcg32;
use crate::tcp::{Config, ConfigError, Connection, Endpoint};
use crate::{Nanos, SECONDS};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Client address (endpoint A).
pub const A: Endpoint = Endpoint {
    addr: [10, 0, 0, 1],
    port: 40_000,
};
/// Server address (endpoint B).
pub const B: Endpoint = Endpoint {
    addr: [10, 0, 0, 2],
    port: 5_001,
};

/// One direction of the path.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// Propagation delay.
    pub delay: Nanos,
    /// Bits per second; 0 = no serialization delay.
    pub rate_bps: u64,
    /// Packets queued or in service at most (drop-tail); 0 = unlimited.
    pub queue: usize,
    /// Probabilities per packet.
    pub loss: f64,
    pub duplicate: f64,
    pub reorder: f64,
    /// Extra delay of a reordered packet.
    pub reorder_delay: Nanos,
    pub corrupt: f64,
    /// Everything sent in [start, end) is dropped.
    pub blackout: Option<(Nanos, Nanos)>,
    /// Packets sent in [start, end) take `extra` longer.
    pub delay_spike: Option<(Nanos, Nanos, Nanos)>,
    pub seed: u64,
}

impl Default for LinkConfig {
    fn default() -> LinkConfig {
        LinkConfig {
            delay: 10_000_000,
            rate_bps: 0,
            queue: 0,
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            reorder_delay: 5_000_000,
            corrupt: 0.0,
            blackout: None,
            delay_spike: None,
            seed: 1,
        }
    }
}

/// What a link did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub offered: u64,
    pub delivered: u64,
    pub queue_drops: u64,
    pub random_drops: u64,
    pub max_queue: usize,
    /// Sum over offered packets of the queue length they found (for the mean).
    pub queue_sum: u64,
}

struct Link {
    cfg: LinkConfig,
    rng: Pcg32,
    busy_until: Nanos,
    departures: VecDeque<Nanos>,
    stats: LinkStats,
}

impl Link {
    fn new(cfg: LinkConfig, stream: u64) -> Link {
        Link {
            rng: Pcg32::new(cfg.seed, stream),
            cfg,
            busy_until: 0,
            departures: VecDeque::new(),
            stats: LinkStats::default(),
        }
    }

    /// Arrival times for a packet of `len` bytes sent at `now` (none, one or two).
    fn offer(&mut self, now: Nanos, len: usize) -> [Option<Nanos>; 2] {
        self.stats.offered += 1;
        while self.departures.front().is_some_and(|&d| d <= now) {
            self.departures.pop_front();
        }
        self.stats.queue_sum += self.departures.len() as u64;
        if self.cfg.blackout.is_some_and(|(s, e)| now >= s && now < e)
            || self.rng.chance(self.cfg.loss)
        {
            self.stats.random_drops += 1;
            return [None, None];
        }
        if self.cfg.queue > 0 && self.departures.len() >= self.cfg.queue {
            self.stats.queue_drops += 1;
            return [None, None];
        }
        let tx = if self.cfg.rate_bps > 0 {
            (len as u128 * 8 * SECONDS as u128 / self.cfg.rate_bps as u128) as Nanos
        } else {
            0
        };
        let depart = self.busy_until.max(now) + tx;
        self.busy_until = depart;
        self.departures.push_back(depart);
        self.stats.max_queue = self.stats.max_queue.max(self.departures.len());
        let mut arrive = depart + self.cfg.delay;
        if let Some((s, e, extra)) = self.cfg.delay_spike {
            if now >= s && now < e {
                arrive += extra;
            }
        }
        if self.rng.chance(self.cfg.reorder) {
            arrive += self.cfg.reorder_delay;
        }
        let dup = self.rng.chance(self.cfg.duplicate).then_some(arrive + 1);
        self.stats.delivered += 1 + dup.is_some() as u64;
        [Some(arrive), dup]
    }
}

/// Which endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// Two endpoints, two links, an event heap.
pub struct Testbed {
    pub a: Connection,
    pub b: Connection,
    links: [Link; 2],
    /// (arrival time, tie-break, slot, destination is B).
    heap: BinaryHeap<Reverse<(Nanos, u64, usize, bool)>>,
    slots: Vec<(Vec<u8>, usize)>,
    free: Vec<usize>,
    tick: u64,
    now: Nanos,
    scratch: Vec<u8>,
}

/// The application side of a run: called after every event with both
/// endpoints; returns when it next wants to be called (None: only on events).
pub trait Driver {
    fn step(&mut self, now: Nanos, a: &mut Connection, b: &mut Connection) -> Option<Nanos>;
}

impl<F: FnMut(Nanos, &mut Connection, &mut Connection) -> Option<Nanos>> Driver for F {
    fn step(&mut self, now: Nanos, a: &mut Connection, b: &mut Connection) -> Option<Nanos> {
        self(now, a, b)
    }
}

impl Testbed {
    /// A connecting to B (listening), both with settings `cfg`, and links
    /// (A->B, B->A).
    pub fn with_config(
        cfg: Config,
        ab: LinkConfig,
        ba: LinkConfig,
    ) -> Result<Testbed, ConfigError> {
        Testbed::new(cfg.clone(), cfg, ab, ba)
    }

    /// A connecting to B (listening) with the given settings and links (A->B, B->A).
    pub fn new(
        a_cfg: Config,
        b_cfg: Config,
        ab: LinkConfig,
        ba: LinkConfig,
    ) -> Result<Testbed, ConfigError> {
        Testbed::with_iss(a_cfg, b_cfg, ab, ba, 0x1000_0000)
    }

    /// As [`Testbed::new`], with A's initial send sequence number `iss`.
    pub fn with_iss(
        a_cfg: Config,
        b_cfg: Config,
        ab: LinkConfig,
        ba: LinkConfig,
        iss: u32,
    ) -> Result<Testbed, ConfigError> {
        Ok(Testbed {
            a: Connection::connect(a_cfg, A, B, iss, 0)?,
            b: Connection::listen(b_cfg, B, 0x7000_0000, 0)?,
            links: [Link::new(ab, 1), Link::new(ba, 2)],
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            tick: 0,
            now: 0,
            scratch: vec![0; 65_536 + 60],
        })
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Statistics of the A->B and B->A links.
    pub fn link_stats(&self) -> (LinkStats, LinkStats) {
        (self.links[0].stats, self.links[1].stats)
    }

    /// Queue length (packets) the A->B link has now.
    pub fn queue_ab(&self) -> usize {
        self.links[0]
            .departures
            .iter()
            .filter(|&&d| d > self.now)
            .count()
    }

    fn flush(&mut self, side: Side) -> bool {
        let mut any = false;
        loop {
            let (conn, link, to_b) = match side {
                Side::A => (&mut self.a, &mut self.links[0], true),
                Side::B => (&mut self.b, &mut self.links[1], false),
            };
            let Some(t) = conn.poll_transmit(self.now, &mut self.scratch) else {
                break;
            };
            any = true;
            let arrivals = link.offer(self.now, t.len + 20);
            let corrupt = link.rng.chance(link.cfg.corrupt);
            let (byte, bit) = (
                link.rng.next_u32() as usize % t.len,
                link.rng.next_u32() % 8,
            );
            for at in arrivals.into_iter().flatten() {
                let slot = self.free.pop().unwrap_or_else(|| {
                    self.slots.push((Vec::new(), 0));
                    self.slots.len() - 1
                });
                let (buf, len) = &mut self.slots[slot];
                if buf.len() < t.len {
                    buf.resize(t.len.max(2048), 0);
                }
                buf[..t.len].copy_from_slice(&self.scratch[..t.len]);
                if corrupt {
                    buf[byte] ^= 1 << bit;
                }
                *len = t.len;
                self.tick += 1;
                self.heap.push(Reverse((at, self.tick, slot, to_b)));
            }
        }
        any
    }

    /// Run until `until` (or until nothing at all is pending), calling
    /// `driver` after every event.
    pub fn run_until(&mut self, until: Nanos, driver: &mut dyn Driver) {
        let mut wake = driver.step(self.now, &mut self.a, &mut self.b);
        let mut idle_spins = 0u32;
        loop {
            let sent = self.flush(Side::A) | self.flush(Side::B);
            let next = [
                self.heap.peek().map(|r| r.0 .0),
                self.a.poll_at(),
                self.b.poll_at(),
                wake,
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(t) = next else {
                self.now = until;
                return;
            };
            if t > until {
                self.now = until;
                return;
            }
            let t = t.max(self.now);
            if t == self.now
                && !sent
                && self.heap.peek().is_none_or(|r| r.0 .0 > t)
                && wake.is_none_or(|w| w > t)
            {
                idle_spins += 1;
                assert!(
                    idle_spins < 1000,
                    "poll_at says now but nothing is sent (A {:?}, B {:?})",
                    self.a.state(),
                    self.b.state()
                );
            } else {
                idle_spins = 0;
            }
            self.now = t;
            while let Some(&Reverse((at, _, slot, to_b))) = self.heap.peek() {
                if at > self.now {
                    break;
                }
                self.heap.pop();
                let (buf, len) = &self.slots[slot];
                if to_b {
                    self.b.handle_segment(self.now, A.addr, &buf[..*len]);
                } else {
                    self.a.handle_segment(self.now, B.addr, &buf[..*len]);
                }
                self.free.push(slot);
            }
            wake = driver.step(self.now, &mut self.a, &mut self.b);
        }
    }
}
