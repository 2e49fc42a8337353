//! The TRUMP-style RBCC sender (RBCC.md "Hosts"; host_stacks/README.md
//! "Protocol decisions").
//!
//! Rate control: data packets are paced at `r = min(desired_rate, last
//! return_rate)` (at least 1 B/s; `initial_rate` before the first ACK) and
//! carry `rate = desired_rate`, `bottle_node = 0`, `current_rate = r` and the
//! last `return_rate` / `return_bottle_node` received (0xFFFFFFFF / 0 before
//! the first ACK). Losses never change `r`.
//!
//! Setup: a SYN every `syn_interval_us`, failing after `give_up_us` without
//! a SYN-ACK. By default the SYN-ACK only opens the connection (data starts
//! at the initial rate, the first data ACK sets the rate); with
//! `adopt_synack_rate` the SYN-ACK is the first ACK.
//!
//! Loss recovery, kept apart from rate control: an ACK lists the segments
//! missing below `high`; a missing segment is resent when the ACK was caused
//! by a later transmission than its last one (`pn` larger). Tail losses and
//! lost ACKs: a retransmission timeout (RFC 6298 estimator from the echoed
//! `ts`, 200 ms minimum, doubling) re-sends every unacknowledged segment
//! last sent at least one RTO ago. Retransmissions take pacing slots before
//! new data. No ACK for `give_up_us` while data is outstanding fails the
//! connection. FIN once the data is done and acknowledged, repeated every
//! `syn_interval_us` until FIN-ACK, for at most `give_up_us`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::pacer::{Pacer, US_PER_S};
use crate::wire::{
    encode_headers, Packet, RbccHeader, TrumpHeader, FLAG_ACK, FLAG_FIN, FLAG_SYN, RATE_UNLIMITED,
    RBCC_OVERHEAD,
};
use crate::{format_seconds, TimeWentBackwards};

pub const MIN_RTO_US: u64 = 200_000;
pub const MAX_RTO_US: u64 = 60 * US_PER_S;
/// RFC 6298 2.1.
pub const INITIAL_RTO_US: u64 = US_PER_S;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderConfig {
    /// B/s; 0xFFFFFFFF = no limit of its own.
    pub desired_rate: u32,
    /// B/s, paces data before the first ACK.
    pub initial_rate: u32,
    /// IPv4 total length of each data packet, bytes.
    pub size: u16,
    /// Data packets to send (None: no count limit).
    pub segments: Option<u64>,
    /// Send new data this long after setup (None: no limit).
    pub duration_us: Option<u64>,
    pub flow_id: u16,
    pub adopt_synack_rate: bool,
    pub syn_interval_us: u64,
    pub give_up_us: u64,
    /// See `Pacer::on_send`.
    pub max_lateness_us: u64,
}

impl SenderConfig {
    /// The defaults of everything but the rates and the amount of data.
    pub fn new(
        desired_rate: u32,
        initial_rate: u32,
        segments: Option<u64>,
        duration_us: Option<u64>,
    ) -> Self {
        SenderConfig {
            desired_rate,
            initial_rate,
            size: 1000,
            segments,
            duration_us,
            flow_id: 1,
            adopt_synack_rate: false,
            syn_interval_us: US_PER_S,
            give_up_us: 30 * US_PER_S,
            max_lateness_us: 1_000,
        }
    }

    /// The first rule the configuration breaks, as a one-line message.
    pub fn validate(&self) -> Result<(), String> {
        if self.desired_rate < 1 {
            return Err("desired_rate must be 1..0xFFFFFFFF B/s".into());
        }
        if self.initial_rate < 1 || self.initial_rate == RATE_UNLIMITED {
            return Err("initial_rate must be 1..0xFFFFFFFE B/s".into());
        }
        if usize::from(self.size) < RBCC_OVERHEAD {
            return Err(format!(
                "size must be {RBCC_OVERHEAD}..65535 bytes (IPv4 total length)"
            ));
        }
        if self.segments.is_none() && self.duration_us.is_none() {
            return Err("give segments or duration_us (or both)".into());
        }
        if self.segments.is_some_and(|s| s > u64::from(u32::MAX)) {
            return Err(
                "segments must be at most 4294967295 (sequence numbers do not wrap)".into(),
            );
        }
        if self.syn_interval_us == 0 {
            return Err("syn_interval_us must be >= 1".into());
        }
        Ok(())
    }

    pub fn payload_len(&self) -> usize {
        usize::from(self.size) - RBCC_OVERHEAD
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderState {
    SynSent,
    Established,
    FinSent,
    Closed,
    Failed,
}

impl SenderState {
    pub fn name(self) -> &'static str {
        match self {
            SenderState::SynSent => "syn_sent",
            SenderState::Established => "established",
            SenderState::FinSent => "fin_sent",
            SenderState::Closed => "closed",
            SenderState::Failed => "failed",
        }
    }
}

/// A change of the rate paced at or of what the network echoed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateSample {
    /// Since the sender started.
    pub t_us: u64,
    /// r, the rate paced at from now on.
    pub rate: u32,
    pub return_rate: u32,
    pub return_bottle_node: u32,
}

#[derive(Debug, Clone, Default)]
pub struct SenderMetrics {
    pub syn_sent: u64,
    pub fin_sent: u64,
    /// Every data transmission, retransmissions included.
    pub data_packets_sent: u64,
    /// IPv4 bytes of those.
    pub data_bytes_sent: u64,
    pub retransmissions: u64,
    pub rto_expiries: u64,
    pub acks_received: u64,
    pub segments_acked: u64,
    /// Segments acknowledged while queued for retransmission (not resent).
    pub acked_while_queued: u64,
    /// Datagrams that are not RBCC v1 carrying a whole TRUMP header (ignored).
    pub malformed: u64,
    pub srtt_us: Option<u64>,
    /// Times below are since the sender started.
    pub established_us: Option<u64>,
    pub last_ack_us: Option<u64>,
    pub fin_acked: bool,
    pub first_data_us: Option<u64>,
    pub last_data_us: Option<u64>,
    pub rates: Vec<RateSample>,
}

/// An unacknowledged segment, by segment number in the window.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    live: bool,
    /// Waiting in the retransmission queue.
    queued: bool,
    /// Transmission number of its last transmission.
    pn: u64,
    sent_us: u64,
}

/// The results of a sender, as `summary()` reports them.
#[derive(Debug, Clone)]
pub struct SenderSummary {
    pub flow_id: u16,
    pub state: SenderState,
    pub error: Option<String>,
    pub desired_rate: u32,
    pub initial_rate: u32,
    pub size: u16,
    pub syn_sent: u64,
    pub fin_sent: u64,
    pub fin_acked: bool,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub segments: u64,
    pub segments_acked: u64,
    pub retransmissions: u64,
    pub rto_expiries: u64,
    pub acks_received: u64,
    pub srtt_us: Option<u64>,
    pub established_s: Option<f64>,
    pub goodput_bps: Option<u64>,
    pub send_span_s: Option<f64>,
    pub pacing_restarts: u64,
    pub pacing_lost_s: f64,
    pub rate: u32,
}

pub struct Sender {
    config: SenderConfig,
    state: SenderState,
    error: Option<String>,
    metrics: SenderMetrics,
    start_us: u64,
    now_us: u64,
    syn_next_us: u64,
    fin_first_us: u64,
    fin_next_us: u64,
    data_end_us: Option<u64>,
    /// Last ACK of any kind.
    last_heard_us: u64,
    // rate control
    return_rate: u32,
    return_bottle_node: u32,
    acked: bool,
    pacer: Pacer,
    // loss recovery
    next_seq: u64,
    next_pn: u64,
    cum_ack: u64,
    /// Segments `window_base..next_seq`; dead slots were acknowledged.
    window: VecDeque<Slot>,
    window_base: u64,
    unacked: usize,
    /// Queued segment numbers (may hold stale ones), smallest first.
    retx: BinaryHeap<Reverse<u64>>,
    /// Unacknowledged segments marked queued.
    retx_pending: usize,
    srtt: Option<u64>,
    rttvar: u64,
    rto: u64,
    rto_deadline: Option<u64>,
    /// The datagram being built (reused: no allocation per packet).
    buf: Vec<u8>,
}

fn next_tick(tick_us: u64, now_us: u64, interval_us: u64) -> u64 {
    // The next time on a periodic grid after now (a late caller skips ticks).
    let mut tick = tick_us + interval_us;
    if tick <= now_us {
        tick += ((now_us - tick) / interval_us + 1) * interval_us;
    }
    tick
}

impl Sender {
    pub fn new(config: SenderConfig, now_us: u64) -> Result<Self, String> {
        config.validate()?;
        let pacer = Pacer::new(u64::from(config.initial_rate), config.max_lateness_us)
            .map_err(|e| e.to_string())?;
        let mut sender = Sender {
            state: SenderState::SynSent,
            error: None,
            metrics: SenderMetrics::default(),
            start_us: now_us,
            now_us,
            syn_next_us: now_us,
            fin_first_us: 0,
            fin_next_us: 0,
            data_end_us: None,
            last_heard_us: now_us,
            return_rate: RATE_UNLIMITED,
            return_bottle_node: 0,
            acked: false,
            pacer,
            next_seq: 0,
            next_pn: 0,
            cum_ack: 0,
            window: VecDeque::new(),
            window_base: 0,
            unacked: 0,
            retx: BinaryHeap::new(),
            retx_pending: 0,
            srtt: None,
            rttvar: 0,
            rto: INITIAL_RTO_US,
            rto_deadline: None,
            buf: Vec::with_capacity(usize::from(config.size)),
            config,
        };
        sender.record_rate(now_us);
        Ok(sender)
    }

    pub fn config(&self) -> &SenderConfig {
        &self.config
    }

    pub fn state(&self) -> SenderState {
        self.state
    }

    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn metrics(&self) -> &SenderMetrics {
        &self.metrics
    }

    pub fn pacer(&self) -> &Pacer {
        &self.pacer
    }

    pub fn return_rate(&self) -> u32 {
        self.return_rate
    }

    pub fn return_bottle_node(&self) -> u32 {
        self.return_bottle_node
    }

    /// Segments offered so far (new data, not retransmissions).
    pub fn segments(&self) -> u64 {
        self.next_seq
    }

    /// Segments sent and not yet acknowledged.
    pub fn unacked(&self) -> usize {
        self.unacked
    }

    /// Every segment below it is acknowledged (the receiver's `cum_ack`).
    pub fn cum_ack(&self) -> u64 {
        self.cum_ack
    }

    /// r: what the sender paces at now.
    pub fn rate(&self) -> u32 {
        if !self.acked {
            return self.config.initial_rate;
        }
        self.config.desired_rate.min(self.return_rate).max(1)
    }

    pub fn done(&self) -> bool {
        matches!(self.state, SenderState::Closed | SenderState::Failed)
    }

    fn record_rate(&mut self, now_us: u64) {
        let sample = RateSample {
            t_us: now_us - self.start_us,
            rate: self.rate(),
            return_rate: self.return_rate,
            return_bottle_node: self.return_bottle_node,
        };
        let same = self.metrics.rates.last().is_some_and(|last| {
            (last.rate, last.return_rate, last.return_bottle_node)
                == (sample.rate, sample.return_rate, sample.return_bottle_node)
        });
        if !same {
            self.metrics.rates.push(sample);
        }
    }

    fn header(&self, flags: u8) -> RbccHeader {
        RbccHeader {
            rate: self.config.desired_rate,
            bottle_node: 0,
            return_rate: self.return_rate,
            return_bottle_node: self.return_bottle_node,
            current_rate: self.rate(),
            ..RbccHeader::trump(flags)
        }
    }

    // ------------------------------------------------------------ the sans-IO interface

    /// When `on_timer` must next be called (None: never, the sender is done).
    pub fn poll_at(&self) -> Option<u64> {
        match self.state {
            SenderState::SynSent => Some(self.syn_next_us),
            SenderState::FinSent => Some(self.fin_next_us),
            SenderState::Closed | SenderState::Failed => None,
            SenderState::Established => {
                let mut at = u64::MAX;
                if self.has_data(self.now_us) {
                    at = self.pacer.next_at().unwrap_or(self.now_us);
                } else if self.unacked == 0 {
                    return Some(self.now_us); // all data acknowledged: FIN is due
                }
                if self.unacked > 0 {
                    let rto = self
                        .rto_deadline
                        .expect("a timer runs while data is unacknowledged");
                    at = at.min(rto).min(self.last_heard_us + self.config.give_up_us);
                }
                Some(at)
            }
        }
    }

    /// Timers and pacing: hands each datagram to send now (an IPv4 payload) to `out`.
    pub fn on_timer(
        &mut self,
        now_us: u64,
        mut out: impl FnMut(&[u8]),
    ) -> Result<(), TimeWentBackwards> {
        self.advance(now_us)?;
        match self.state {
            SenderState::SynSent => self.syn_timer(now_us, &mut out),
            SenderState::FinSent => self.fin_timer(now_us, &mut out),
            SenderState::Established => self.established_timer(now_us, &mut out),
            SenderState::Closed | SenderState::Failed => {}
        }
        Ok(())
    }

    /// An RBCC datagram from the receiver (an IPv4 payload). Anything that is
    /// not an ACK of this flow is ignored. Sending happens in `on_timer`
    /// (at once if `poll_at` says so).
    pub fn on_datagram(&mut self, now_us: u64, data: &[u8]) -> Result<(), TimeWentBackwards> {
        self.advance(now_us)?;
        let Ok(packet) = Packet::decode(data) else {
            self.metrics.malformed += 1;
            return Ok(());
        };
        let (rbcc, trump) = (packet.rbcc, packet.trump);
        if rbcc.flags & FLAG_ACK == 0 || trump.flow_id != self.config.flow_id {
            return Ok(());
        }
        self.metrics.acks_received += 1;
        self.last_heard_us = now_us;
        self.metrics.last_ack_us = Some(now_us - self.start_us);
        if rbcc.flags & FLAG_SYN != 0 {
            if self.state == SenderState::SynSent {
                self.rtt_sample(now_us, trump.ts);
                if self.config.adopt_synack_rate {
                    self.adopt_rate(now_us, &rbcc);
                }
                self.established(now_us);
            }
            return Ok(());
        }
        if !matches!(self.state, SenderState::Established | SenderState::FinSent) {
            return Ok(());
        }
        self.rtt_sample(now_us, trump.ts);
        if rbcc.flags & FLAG_FIN != 0 {
            if self.state == SenderState::FinSent {
                self.metrics.fin_acked = true;
                self.state = SenderState::Closed;
            }
            return Ok(());
        }
        self.adopt_rate(now_us, &rbcc);
        self.process_ack(now_us, &packet);
        Ok(())
    }

    // ------------------------------------------------------------ setup and teardown

    fn advance(&mut self, now_us: u64) -> Result<(), TimeWentBackwards> {
        if now_us < self.now_us {
            return Err(TimeWentBackwards {
                now_us,
                last_us: self.now_us,
            });
        }
        self.now_us = now_us;
        Ok(())
    }

    fn emit(
        &mut self,
        flags: u8,
        trump: TrumpHeader,
        payload: Option<u64>,
        out: &mut impl FnMut(&[u8]),
    ) {
        let header = self.header(flags);
        let mut buf = std::mem::take(&mut self.buf);
        encode_headers(&mut buf, &header, &trump, &[]);
        if let Some(seq) = payload {
            // Deterministic content (the segment number's low byte), so a
            // receiver or a test can check it.
            buf.resize(buf.len() + self.config.payload_len(), seq as u8);
        }
        out(&buf);
        self.buf = buf;
    }

    fn syn_timer(&mut self, now_us: u64, out: &mut impl FnMut(&[u8])) {
        if now_us < self.syn_next_us {
            return;
        }
        if now_us - self.start_us >= self.config.give_up_us {
            self.fail(format!(
                "no SYN-ACK after {} s, giving up",
                format_seconds(self.config.give_up_us)
            ));
            return;
        }
        self.syn_next_us = next_tick(self.syn_next_us, now_us, self.config.syn_interval_us);
        self.metrics.syn_sent += 1;
        let trump = TrumpHeader {
            flow_id: self.config.flow_id,
            ts: now_us as u32,
            ..Default::default()
        };
        self.emit(FLAG_SYN, trump, None, out);
    }

    fn established(&mut self, now_us: u64) {
        self.state = SenderState::Established;
        self.metrics.established_us = Some(now_us - self.start_us);
        self.data_end_us = self.config.duration_us.map(|d| now_us + d);
    }

    fn fin_packet(&mut self, now_us: u64, out: &mut impl FnMut(&[u8])) {
        self.metrics.fin_sent += 1;
        let trump = TrumpHeader {
            flow_id: self.config.flow_id,
            seq: self.next_seq as u32,
            pn: self.next_pn as u32,
            ts: now_us as u32,
            ..Default::default()
        };
        self.emit(FLAG_FIN, trump, None, out);
    }

    fn fin_timer(&mut self, now_us: u64, out: &mut impl FnMut(&[u8])) {
        if now_us < self.fin_next_us {
            return;
        }
        if now_us - self.fin_first_us >= self.config.give_up_us {
            // All data was acknowledged; only the FIN-ACK is missing.
            self.state = SenderState::Closed;
            return;
        }
        self.fin_next_us = next_tick(self.fin_next_us, now_us, self.config.syn_interval_us);
        self.fin_packet(now_us, out);
    }

    fn fail(&mut self, message: String) {
        self.state = SenderState::Failed;
        self.error = Some(message);
    }

    // ------------------------------------------------------------ data

    /// No new segment will ever be offered.
    fn app_done(&self, now_us: u64) -> bool {
        if self
            .config
            .segments
            .is_some_and(|limit| self.next_seq >= limit)
        {
            return true;
        }
        self.data_end_us.is_some_and(|end| now_us >= end)
    }

    fn has_data(&self, now_us: u64) -> bool {
        self.retx_pending > 0 || !self.app_done(now_us)
    }

    fn established_timer(&mut self, now_us: u64, out: &mut impl FnMut(&[u8])) {
        if self.unacked > 0 {
            if now_us - self.last_heard_us >= self.config.give_up_us {
                self.fail(format!(
                    "no ACK for {} s, giving up",
                    format_seconds(self.config.give_up_us)
                ));
                return;
            }
            if self.rto_deadline.is_some_and(|deadline| now_us >= deadline) {
                self.on_rto(now_us);
            }
        }
        while self.has_data(now_us) && self.pacer.ready(now_us) {
            self.send_segment(now_us, out);
        }
        if !self.has_data(now_us) && self.unacked == 0 {
            self.state = SenderState::FinSent;
            self.fin_first_us = now_us;
            self.fin_next_us = now_us + self.config.syn_interval_us;
            self.fin_packet(now_us, out);
        }
    }

    fn slot(&mut self, seq: u64) -> Option<&mut Slot> {
        let index = usize::try_from(seq.checked_sub(self.window_base)?).ok()?;
        self.window.get_mut(index).filter(|slot| slot.live)
    }

    fn send_segment(&mut self, now_us: u64, out: &mut impl FnMut(&[u8])) {
        let mut resend = None;
        while self.retx_pending > 0 {
            let Some(Reverse(candidate)) = self.retx.pop() else {
                break;
            };
            if let Some(slot) = self.slot(candidate).filter(|slot| slot.queued) {
                slot.queued = false;
                self.retx_pending -= 1;
                self.metrics.retransmissions += 1;
                resend = Some(candidate);
                break;
            }
        }
        let pn = self.next_pn;
        self.next_pn += 1;
        let seq = match resend {
            Some(seq) => {
                let slot = self.slot(seq).expect("a queued segment is unacknowledged");
                slot.pn = pn;
                slot.sent_us = now_us;
                seq
            }
            None => {
                debug_assert!(!self.app_done(now_us));
                let seq = self.next_seq;
                self.next_seq += 1;
                if self.unacked == 0 {
                    // an empty window restarts at the new segment
                    self.window.clear();
                    self.window_base = seq;
                }
                self.window.push_back(Slot {
                    live: true,
                    queued: false,
                    pn,
                    sent_us: now_us,
                });
                self.unacked += 1;
                seq
            }
        };
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now_us + self.rto);
        }
        let size = u64::from(self.config.size);
        self.pacer.on_send(now_us, size);
        let m = &mut self.metrics;
        m.data_packets_sent += 1;
        m.first_data_us.get_or_insert(now_us - self.start_us);
        m.last_data_us = Some(now_us - self.start_us);
        m.data_bytes_sent += size;
        let trump = TrumpHeader {
            flow_id: self.config.flow_id,
            seq: seq as u32,
            pn: pn as u32,
            ts: now_us as u32,
            ..Default::default()
        };
        self.emit(0, trump, Some(seq), out);
    }

    fn queue_retx(&mut self, seq: u64) {
        let Some(slot) = self.slot(seq) else { return };
        if !slot.queued {
            slot.queued = true;
            self.retx_pending += 1;
            self.retx.push(Reverse(seq));
        }
    }

    fn on_rto(&mut self, now_us: u64) {
        self.metrics.rto_expiries += 1;
        for i in 0..self.window.len() {
            let slot = self.window[i];
            if slot.live && now_us - slot.sent_us >= self.rto {
                self.queue_retx(self.window_base + i as u64);
            }
        }
        self.rto = (self.rto * 2).min(MAX_RTO_US);
        self.rto_deadline = Some(now_us + self.rto);
    }

    // ------------------------------------------------------------ ACK processing

    fn adopt_rate(&mut self, now_us: u64, ack: &RbccHeader) {
        self.return_rate = ack.return_rate;
        self.return_bottle_node = ack.return_bottle_node;
        self.acked = true;
        self.pacer.set_rate(u64::from(self.rate()));
        self.record_rate(now_us);
    }

    /// RFC 6298 section 2 from the echoed send time (no Karn problem: the
    /// echo names the transmission).
    fn rtt_sample(&mut self, now_us: u64, ts: u32) {
        let rtt = u64::from((now_us as u32).wrapping_sub(ts));
        let srtt = match self.srtt {
            None => {
                self.rttvar = rtt / 2;
                rtt
            }
            Some(srtt) => {
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(rtt)) / 4;
                (7 * srtt + rtt) / 8
            }
        };
        self.srtt = Some(srtt);
        self.rto = (srtt + 4 * self.rttvar).clamp(MIN_RTO_US, MAX_RTO_US);
        self.metrics.srtt_us = Some(srtt);
    }

    fn process_ack(&mut self, now_us: u64, ack: &Packet<'_>) {
        let before = self.unacked;
        let cum_ack = u64::from(ack.trump.cum_ack);
        let limit = cum_ack.max(u64::from(ack.trump.high));
        let ack_pn = u64::from(ack.trump.pn);
        let mut index = 0;
        while index < self.window.len() {
            let seq = self.window_base + index as u64;
            if seq >= limit {
                break; // not covered by this ACK (in flight, or lost at the tail)
            }
            let slot = &mut self.window[index];
            index += 1;
            if !slot.live {
                continue;
            }
            if seq >= cum_ack && ack.ranges.contains(seq) {
                if slot.pn < ack_pn && !slot.queued {
                    slot.queued = true;
                    self.retx_pending += 1;
                    self.retx.push(Reverse(seq));
                }
            } else {
                slot.live = false;
                self.unacked -= 1;
                if slot.queued {
                    slot.queued = false;
                    self.retx_pending -= 1; // acknowledged after all: no resend
                    self.metrics.acked_while_queued += 1;
                }
            }
        }
        while self.window.front().is_some_and(|slot| !slot.live) {
            self.window.pop_front();
            self.window_base += 1;
        }
        if self.retx_pending == 0 {
            self.retx.clear();
        }
        self.cum_ack = self.cum_ack.max(cum_ack);
        let acked = before - self.unacked;
        self.metrics.segments_acked += acked as u64;
        if acked > 0 {
            // progress: restart the retransmission timer (RFC 6298 5.3)
            self.rto_deadline = (self.unacked > 0).then(|| now_us + self.rto);
        } else if self.unacked == 0 {
            self.rto_deadline = None;
        }
    }

    // ------------------------------------------------------------ results

    pub fn summary(&self) -> SenderSummary {
        let m = &self.metrics;
        let payload = self.config.payload_len() as u128;
        let goodput_bps = match (m.established_us, m.last_ack_us) {
            (Some(est), Some(last)) if last > est => {
                let bits = u128::from(m.segments_acked) * payload * 8 * u128::from(US_PER_S);
                Some((bits / u128::from(last - est)) as u64)
            }
            _ => None,
        };
        let seconds = |us: u64| us as f64 / US_PER_S as f64;
        SenderSummary {
            flow_id: self.config.flow_id,
            state: self.state,
            error: self.error.clone(),
            desired_rate: self.config.desired_rate,
            initial_rate: self.config.initial_rate,
            size: self.config.size,
            syn_sent: m.syn_sent,
            fin_sent: m.fin_sent,
            fin_acked: m.fin_acked,
            packets_sent: m.data_packets_sent,
            bytes_sent: m.data_bytes_sent,
            segments: self.next_seq,
            segments_acked: m.segments_acked,
            retransmissions: m.retransmissions,
            rto_expiries: m.rto_expiries,
            acks_received: m.acks_received,
            srtt_us: m.srtt_us,
            established_s: m.established_us.map(seconds),
            goodput_bps,
            send_span_s: match (m.first_data_us, m.last_data_us) {
                (Some(first), Some(last)) => Some(seconds(last - first)),
                _ => None,
            },
            pacing_restarts: self.pacer.restarts(),
            pacing_lost_s: seconds(self.pacer.lost_us()),
            rate: self.rate(),
        }
    }
}
