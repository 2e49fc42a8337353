//! A host: one address, one link, an egress FIFO, and the endpoints of the
//! flows it sends or receives (ratelab-stack state machines).

use crate::events::Nanos;
use ratelab_engine::TraceCursor;
use ratelab_stack::app::{Application, Sink};
use ratelab_stack::metrics::FlowMeter;
use ratelab_stack::tcp::Connection;
use ratelab_stack::udp::{UdpSink, UdpSource};
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hash for the endpoint map's small integer keys (a
/// lookup per packet a host receives; SipHash was a visible part of it).
/// The map is only looked up, never iterated, so the order cannot show.
#[derive(Default)]
pub struct PortHasher(u64);

impl Hasher for PortHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u8(b);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    fn write_u16(&mut self, i: u16) {
        self.write_u64(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// What one end of a flow runs.
pub enum EndpointKind {
    /// A sender whose flow has not started yet.
    Waiting,
    TcpSender {
        conn: Box<Connection>,
        app: Box<dyn Application>,
        meter: FlowMeter,
    },
    TcpReceiver {
        conn: Box<Connection>,
        sink: Sink,
    },
    UdpSender(UdpSource),
    UdpReceiver(Box<UdpSink>),
    /// `peer`: the receiver's address (the machine writes IPv4 payloads only).
    RbccSender {
        sender: Box<rbcc_host::Sender>,
        peer: [u8; 4],
    },
    RbccReceiver(Box<rbcc_host::Receiver>),
    /// A ping's sender; `peer`: the address it pings.
    Ping {
        pinger: Box<crate::ping::Pinger>,
        peer: [u8; 4],
    },
}

/// One end of a flow on a host.
pub struct Endpoint {
    pub kind: EndpointKind,
    /// The sender's application stopped (stop_ns passed).
    pub stopped: bool,
    /// The timer event scheduled for it, if any (a later event for another
    /// time is stale and ignored).
    pub armed: Option<Nanos>,
}

/// The host's egress: a FIFO drained at the link's rate, or by its trace.
/// Departure times are fixed when a packet is queued, so only they are kept.
#[derive(Default)]
pub struct Egress {
    /// When each queued packet's last bit leaves (the one in transmission first).
    departures: VecDeque<Nanos>,
    busy_until: Nanos,
    /// The link's trace (ns), when it has one instead of a rate.
    pub trace: Option<TraceCursor>,
    /// The link's jitter (none unless the direction has one).
    pub jitter: crate::jitter::Jitter,
}

impl Egress {
    /// Whether a packet finds room (fewer than `limit` queued or in
    /// transmission) at `now`.
    fn room(&mut self, now: Nanos, limit: usize) -> bool {
        while self.departures.front().is_some_and(|&d| d <= now) {
            self.departures.pop_front();
        }
        self.departures.len() < limit
    }

    fn push(&mut self, depart: Nanos) -> Nanos {
        self.busy_until = depart;
        self.departures.push_back(depart);
        depart
    }

    /// Queues a packet taking `tx` ns on the wire if fewer than `limit`
    /// packets are queued or in transmission: its departure time.
    pub fn offer(&mut self, now: Nanos, tx: Nanos, limit: usize) -> Option<Nanos> {
        if !self.room(now, limit) {
            return None;
        }
        Some(self.push(self.busy_until.max(now) + tx))
    }

    /// Like [`Egress::offer`] on a link with a trace: a frame of `bytes`
    /// leaves at the opportunity that carries its last IP byte (the 14-byte
    /// Ethernet header does not count), from when it is first in line.
    pub fn offer_trace(&mut self, now: Nanos, bytes: usize, limit: usize) -> Option<Nanos> {
        if !self.room(now, limit) {
            return None;
        }
        let ready = self.busy_until.max(now);
        let cursor = self.trace.as_mut().expect("a link with a trace");
        let depart = cursor.deliver_frame(ready, bytes);
        Some(self.push(depart))
    }
}

/// A host.
pub struct Host {
    pub addr: [u8; 4],
    pub mac: [u8; 6],
    pub egress: Egress,
    pub endpoints: Vec<Endpoint>,
    /// (IP protocol, local port) -> endpoint.
    pub by_port: HashMap<(u8, u16), usize, BuildHasherDefault<PortHasher>>,
    /// IPv4 identification of the next packet.
    pub next_id: u16,
    /// When a flow from this host records packet delays: the time each IPv4
    /// id last left it (65,536 entries); else empty.
    pub sent_at: Vec<Nanos>,
}

impl Host {
    pub fn new(index: usize, addr: [u8; 4]) -> Host {
        Host {
            addr,
            // ratelab-net's host MACs: 02:00:00:01:00:<host number>.
            mac: [2, 0, 0, 1, ((index + 1) >> 8) as u8, (index + 1) as u8],
            egress: Egress::default(),
            endpoints: Vec::new(),
            by_port: HashMap::default(),
            next_id: 0,
            sent_at: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn egress_is_a_fifo_with_a_limit() {
        let mut e = Egress::default();
        assert_eq!(e.offer(0, 10, 2), Some(10));
        assert_eq!(e.offer(0, 10, 2), Some(20));
        assert_eq!(e.offer(5, 10, 2), None); // two queued or sending
        assert_eq!(e.offer(10, 10, 2), Some(30)); // the first has left
        assert_eq!(e.offer(100, 10, 2), Some(110)); // idle: starts now
    }

    #[test]
    fn a_trace_egress_departs_at_opportunities() {
        let trace = ratelab_engine::Trace::parse("1\n2\n3\n", "t").unwrap();
        let mut e = Egress {
            trace: Some(TraceCursor::new(std::sync::Arc::new(trace), 1_000_000)),
            ..Egress::default()
        };
        let ms = 1_000_000;
        // Frames of 1,514, 514 and 614 bytes: IP packets of 1,500, 500, 600.
        assert_eq!(e.offer_trace(0, 1514, 2), Some(ms));
        assert_eq!(e.offer_trace(0, 514, 2), Some(2 * ms));
        assert_eq!(e.offer_trace(0, 514, 2), None); // two queued
        assert_eq!(e.offer_trace(ms, 514, 2), Some(2 * ms)); // shares 2 ms
        assert_eq!(e.offer_trace(2 * ms + 1, 614, 2), Some(3 * ms)); // 2 ms had 500 left: lost
        assert_eq!(e.offer_trace(10 * ms, 1514, 2), Some(10 * ms)); // the fourth loop's 1 ms
    }
}
