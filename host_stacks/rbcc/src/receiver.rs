//! The TRUMP-style RBCC receiver (RBCC.md "Hosts").
//!
//! Every data packet (and SYN, FIN) is answered by one ACK that copies the
//! packet's `rate` into `return_rate` and its `bottle_node` into
//! `return_bottle_node` (`RbccHeader::ack_for`). Data is delivered in order
//! (out-of-order segments wait in a buffer), every ACK reports the missing
//! segments, and losses are counted exactly from the transmission numbers:
//! `lost` = data transmissions the sender made (the highest pn seen + 1, or
//! the count the FIN carries) minus those that arrived. `Listener`
//! demultiplexes flows by (source address, flow id).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use crate::pacer::US_PER_S;
use crate::wire::{
    encode_headers, Packet, RbccHeader, TrumpHeader, FLAG_ACK, FLAG_FIN, FLAG_SYN, IPV4_HEADER_LEN,
    MAX_RANGES,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiverState {
    Listen,
    Established,
    /// FIN received (FIN retransmissions are still answered).
    Closed,
}

impl ReceiverState {
    pub fn name(self) -> &'static str {
        match self {
            ReceiverState::Listen => "listen",
            ReceiverState::Established => "established",
            ReceiverState::Closed => "closed",
        }
    }
}

/// A change of the rate fields the network left in data packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoSample {
    /// Since the SYN arrived.
    pub t_us: u64,
    pub rate: u32,
    pub bottle_node: u32,
}

#[derive(Debug, Clone)]
pub struct ReceiverMetrics {
    /// Data transmissions that arrived, duplicates included.
    pub packets_received: u64,
    /// IPv4 bytes of those.
    pub bytes_received: u64,
    /// Data packets for segments already held.
    pub duplicates: u64,
    pub segments_delivered: u64,
    /// Payload bytes delivered in order.
    pub bytes_delivered: u64,
    pub acks_sent: u64,
    /// Datagrams that are not RBCC v1 carrying a whole TRUMP header (ignored).
    pub malformed: u64,
    /// Highest transmission number seen (-1: none).
    pub max_pn: i64,
    /// Data transmissions the sender made, from its FIN.
    pub fin_pn: Option<u64>,
    pub fin_seq: Option<u64>,
    pub first_data_us: Option<u64>,
    pub last_delivery_us: Option<u64>,
    pub rates: Vec<EchoSample>,
}

impl Default for ReceiverMetrics {
    fn default() -> Self {
        ReceiverMetrics {
            packets_received: 0,
            bytes_received: 0,
            duplicates: 0,
            segments_delivered: 0,
            bytes_delivered: 0,
            acks_sent: 0,
            malformed: 0,
            max_pn: -1,
            fin_pn: None,
            fin_seq: None,
            first_data_us: None,
            last_delivery_us: None,
            rates: Vec::new(),
        }
    }
}

/// The results of a receiver, as `summary()` reports them.
#[derive(Debug, Clone)]
pub struct ReceiverSummary {
    pub flow_id: u16,
    pub state: ReceiverState,
    pub complete: bool,
    pub packets_received: u64,
    pub bytes_received: u64,
    pub duplicates: u64,
    pub lost: u64,
    pub segments_delivered: u64,
    pub bytes_delivered: u64,
    pub acks_sent: u64,
    pub sender_packets: Option<u64>,
    pub goodput_bps: Option<u64>,
}

/// One connection. Feed it the datagrams of one flow (flow_id).
pub struct Receiver {
    flow_id: u16,
    state: ReceiverState,
    metrics: ReceiverMetrics,
    start_us: u64,
    /// Next in-order segment.
    cum: u64,
    /// Out-of-order segments above `cum`.
    buffer: BTreeMap<u64, Vec<u8>>,
    /// Payload buffers to reuse for out-of-order segments.
    spare: Vec<Vec<u8>>,
    /// Delivered in order since the last `take_delivered`: (segment, end in `delivered_bytes`).
    delivered: Vec<(u64, usize)>,
    delivered_bytes: Vec<u8>,
    /// The ACK being built (reused).
    ack: Vec<u8>,
}

impl Receiver {
    pub fn new(flow_id: u16) -> Self {
        Receiver {
            flow_id,
            state: ReceiverState::Listen,
            metrics: ReceiverMetrics::default(),
            start_us: 0,
            cum: 0,
            buffer: BTreeMap::new(),
            spare: Vec::new(),
            delivered: Vec::new(),
            delivered_bytes: Vec::new(),
            ack: Vec::new(),
        }
    }

    pub fn flow_id(&self) -> u16 {
        self.flow_id
    }

    pub fn state(&self) -> ReceiverState {
        self.state
    }

    pub fn metrics(&self) -> &ReceiverMetrics {
        &self.metrics
    }

    /// Data transmissions lost on the way (exact on a path that does not
    /// duplicate packets).
    pub fn lost(&self) -> u64 {
        let m = &self.metrics;
        let made = ((m.max_pn + 1) as u64).max(m.fin_pn.unwrap_or(0));
        made.saturating_sub(m.packets_received)
    }

    /// FIN seen and every segment before it delivered.
    pub fn complete(&self) -> bool {
        self.metrics.fin_seq.is_some_and(|fin| self.cum >= fin)
    }

    /// The receiver only ever answers: no timer.
    pub fn poll_at(&self) -> Option<u64> {
        None
    }

    /// In-order (segment, payload) pairs delivered since the last call.
    pub fn take_delivered(&mut self, mut f: impl FnMut(u64, &[u8])) {
        let mut start = 0;
        for &(seq, end) in &self.delivered {
            f(seq, &self.delivered_bytes[start..end]);
            start = end;
        }
        self.delivered.clear();
        self.delivered_bytes.clear();
    }

    /// An RBCC datagram (IPv4 payload) from the sender; returns the ACK to send.
    pub fn on_datagram(&mut self, now_us: u64, data: &[u8]) -> Option<&[u8]> {
        let Ok(packet) = Packet::decode(data) else {
            self.metrics.malformed += 1;
            return None;
        };
        let (rbcc, trump) = (packet.rbcc, packet.trump);
        if rbcc.flags & FLAG_ACK != 0 || trump.flow_id != self.flow_id {
            return None;
        }
        if rbcc.flags & FLAG_SYN != 0 {
            if self.state == ReceiverState::Listen {
                self.state = ReceiverState::Established;
                self.start_us = now_us;
            }
            return Some(self.build_ack(&rbcc, &trump, FLAG_SYN | FLAG_ACK));
        }
        if self.state == ReceiverState::Listen {
            return None; // no connection: the sender only sends data after our SYN-ACK
        }
        if rbcc.flags & FLAG_FIN != 0 {
            self.metrics.fin_pn = Some(u64::from(trump.pn));
            self.metrics.fin_seq = Some(u64::from(trump.seq));
            self.state = ReceiverState::Closed;
            return Some(self.build_ack(&rbcc, &trump, FLAG_FIN | FLAG_ACK));
        }
        if self.state == ReceiverState::Closed {
            return None;
        }
        self.on_data(now_us, &packet, data.len());
        Some(self.build_ack(&rbcc, &trump, FLAG_ACK))
    }

    fn on_data(&mut self, now_us: u64, packet: &Packet<'_>, length: usize) {
        let m = &mut self.metrics;
        m.packets_received += 1;
        m.bytes_received += (IPV4_HEADER_LEN + length) as u64;
        m.max_pn = m.max_pn.max(i64::from(packet.trump.pn));
        m.first_data_us.get_or_insert(now_us);
        self.record_rate(now_us, packet.rbcc.rate, packet.rbcc.bottle_node);
        let seq = u64::from(packet.trump.seq);
        if seq < self.cum || self.buffer.contains_key(&seq) {
            self.metrics.duplicates += 1;
            return;
        }
        if seq == self.cum {
            self.deliver(now_us, seq, packet.payload);
        } else {
            let mut copy = self.spare.pop().unwrap_or_default();
            copy.clear();
            copy.extend_from_slice(packet.payload);
            self.buffer.insert(seq, copy);
        }
        while let Some(payload) = self.buffer.remove(&self.cum) {
            self.deliver(now_us, self.cum, &payload);
            self.spare.push(payload);
        }
    }

    fn deliver(&mut self, now_us: u64, seq: u64, payload: &[u8]) {
        self.delivered_bytes.extend_from_slice(payload);
        self.delivered.push((seq, self.delivered_bytes.len()));
        let m = &mut self.metrics;
        m.segments_delivered += 1;
        m.bytes_delivered += payload.len() as u64;
        m.last_delivery_us = Some(now_us);
        self.cum = seq + 1;
    }

    fn record_rate(&mut self, now_us: u64, rate: u32, bottle_node: u32) {
        let rates = &mut self.metrics.rates;
        if rates
            .last()
            .is_some_and(|last| (last.rate, last.bottle_node) == (rate, bottle_node))
        {
            return;
        }
        rates.push(EchoSample {
            // the receiver does not police its caller's clock: never underflow
            t_us: now_us.saturating_sub(self.start_us),
            rate,
            bottle_node,
        });
    }

    /// (high, ranges): the gaps below the highest segment held, at most
    /// MAX_RANGES of them, and where that report ends. Writes the ranges into
    /// `ranges` and returns (high, how many).
    pub fn missing_into(&self, ranges: &mut [(u32, u32); MAX_RANGES]) -> (u64, usize) {
        let mut n = 0;
        let mut start = self.cum;
        for &seq in self.buffer.keys() {
            if seq > start {
                if n == MAX_RANGES {
                    return (u64::from(ranges[n - 1].1), n);
                }
                ranges[n] = (start as u32, seq as u32);
                n += 1;
            }
            start = seq + 1;
        }
        (start, n)
    }

    /// `missing_into` as a vector.
    pub fn missing(&self) -> (u64, Vec<(u32, u32)>) {
        let mut ranges = [(0, 0); MAX_RANGES];
        let (high, n) = self.missing_into(&mut ranges);
        (high, ranges[..n].to_vec())
    }

    fn build_ack(&mut self, rbcc_in: &RbccHeader, trump_in: &TrumpHeader, flags: u8) -> &[u8] {
        let mut ranges = [(0, 0); MAX_RANGES];
        let (high, n) = self.missing_into(&mut ranges);
        let trump = TrumpHeader {
            flow_id: self.flow_id,
            n_ranges: 0,
            seq: trump_in.seq,
            pn: trump_in.pn,
            ts: trump_in.ts,
            cum_ack: self.cum as u32,
            high: high as u32,
        };
        encode_headers(
            &mut self.ack,
            &RbccHeader::ack_for(rbcc_in, flags),
            &trump,
            &ranges[..n],
        );
        self.metrics.acks_sent += 1;
        &self.ack
    }

    pub fn summary(&self) -> ReceiverSummary {
        let m = &self.metrics;
        let goodput_bps = match (m.first_data_us, m.last_delivery_us) {
            (Some(first), Some(last)) if last > first => Some(
                (u128::from(m.bytes_delivered) * 8 * u128::from(US_PER_S)
                    / u128::from(last - first)) as u64,
            ),
            _ => None,
        };
        ReceiverSummary {
            flow_id: self.flow_id,
            state: self.state,
            complete: self.complete(),
            packets_received: m.packets_received,
            bytes_received: m.bytes_received,
            duplicates: m.duplicates,
            lost: self.lost(),
            segments_delivered: m.segments_delivered,
            bytes_delivered: m.bytes_delivered,
            acks_sent: m.acks_sent,
            sender_packets: m.fin_pn,
            goodput_bps,
        }
    }
}

/// How a listener treats a datagram: the flow it belongs to and whether it
/// may open a connection (a SYN that is not an ACK). None: not RBCC/TRUMP.
pub fn demux(data: &[u8]) -> Option<(u16, bool)> {
    let packet = Packet::decode(data).ok()?;
    let flags = packet.rbcc.flags;
    Some((
        packet.trump.flow_id,
        flags & FLAG_SYN != 0 && flags & FLAG_ACK == 0,
    ))
}

/// Accepts connections: one `Receiver` per (source address, flow id),
/// created by a SYN. Addresses are opaque to it (`K`: the driver's type).
pub struct Listener<K> {
    index: HashMap<(K, u16), usize>,
    flows: Vec<((K, u16), Receiver)>,
    malformed: u64,
}

impl<K: Eq + Hash + Clone> Default for Listener<K> {
    fn default() -> Self {
        Listener {
            index: HashMap::new(),
            flows: Vec::new(),
            malformed: 0,
        }
    }
}

impl<K: Eq + Hash + Clone> Listener<K> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The connections in the order they were opened.
    pub fn flows(&self) -> impl Iterator<Item = (&(K, u16), &Receiver)> {
        self.flows.iter().map(|(key, receiver)| (key, receiver))
    }

    pub fn flows_mut(&mut self) -> impl Iterator<Item = (&(K, u16), &mut Receiver)> {
        self.flows
            .iter_mut()
            .map(|(key, receiver)| (&*key, receiver))
    }

    /// Datagrams that are not RBCC v1 carrying a whole TRUMP header (ignored).
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    pub fn on_datagram(&mut self, now_us: u64, src: &K, data: &[u8]) -> Option<&[u8]> {
        let Some((flow_id, opens)) = demux(data) else {
            self.malformed += 1;
            return None;
        };
        let key = (src.clone(), flow_id);
        let at = match self.index.get(&key) {
            Some(&at) => at,
            None if opens => {
                self.flows.push((key.clone(), Receiver::new(flow_id)));
                self.index.insert(key, self.flows.len() - 1);
                self.flows.len() - 1
            }
            None => return None,
        };
        self.flows[at].1.on_datagram(now_us, data)
    }
}
