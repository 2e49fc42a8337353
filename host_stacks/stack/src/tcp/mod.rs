//! One TCP connection as a sans-IO state machine (RFC 9293).
//!
//! Feed it segments ([`Connection::handle_segment`]), pull segments out
//! ([`Connection::poll_transmit`], which also runs expired timers), and call
//! again at [`Connection::poll_at`]. Segments are the IPv4 payload (TCP
//! header with checksum, options, data). Implemented: three-way handshake
//! (active and passive open), data both ways, FIN and the closing states,
//! RST on nonsense and RFC 5961 challenge ACKs, cumulative and delayed ACKs,
//! SACK (RFC 2018) and SACK-based loss recovery (RFC 6675), NewReno/Reno
//! recovery without SACK (RFC 6582 / RFC 5681 §3.2), PRR (RFC 6937),
//! RTO (RFC 6298) with backoff, timestamps and PAWS (RFC 7323) with Eifel
//! detection of spurious timeouts (RFC 3522), window scaling, zero-window
//! probing. The window is always checked against RFC 6675's pipe (as
//! Linux does), so with SACK the first duplicate ACKs let new data out the
//! way limited transmit (RFC 3042) would; a retransmission is lost again
//! once DupThresh segments sent after it are SACKed (as Linux; RFC 8985's
//! idea). Not implemented: simultaneous
//! open, urgent data, D-SACK, the rescue retransmission of RFC 6675,
//! undoing a spurious timeout's window reduction.

mod buffers;
mod config;
mod input;
mod output;
mod push;
mod quickack;
mod rtt;
mod scoreboard;
mod send_buffer;

pub use buffers::{RangeSet, RecvBuffer, SendBuffer};
pub use config::{Config, ConfigError};
pub use quickack::QuickAck;
pub use rtt::{RtoFormula, RttEstimator, UnknownRtoFormula};
pub use scoreboard::{Scoreboard, SentSeg};
pub use send_buffer::{auto_size, segment_memory, SendBufferPolicy, UnknownSendBufferPolicy};

use crate::cc::{initial_window, CongestionControl, Prr};
use crate::wire::Flags;
use crate::{seq, Nanos};

/// RFC 9293 §3.3.2 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

impl State {
    fn synchronized(self) -> bool {
        !matches!(self, State::Closed | State::Listen | State::SynSent)
    }
}

/// An address and port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: [u8; 4],
    pub port: u16,
}

/// Where a segment written by `poll_transmit` goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub len: usize,
    pub src: [u8; 4],
    pub dst: [u8; 4],
}

/// Counters of one connection (names as in the measurements).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpStats {
    pub segments_sent: u64,
    pub segments_received: u64,
    /// Data bytes the application wrote (that the send buffer took).
    pub bytes_written: u64,
    /// Data bytes sent, first transmissions only.
    pub bytes_sent: u64,
    /// Data bytes cumulatively acknowledged by the peer.
    pub bytes_acked: u64,
    /// Data bytes delivered in order to this end's application buffer.
    pub bytes_received: u64,
    pub retransmissions: u64,
    pub bytes_retransmitted: u64,
    pub fast_retransmits: u64,
    pub recoveries: u64,
    /// Loss recoveries that ended (a full ACK, or cut short by an RTO) and
    /// the time they lasted in all: their mean length is the ratio.
    pub recoveries_ended: u64,
    pub recovery_ns: u64,
    pub rtos: u64,
    /// Timeouts the timestamps showed to be spurious (RFC 3522).
    pub spurious_rtos: u64,
    pub ssthresh_changes: u64,
    pub dup_acks: u64,
    pub rtt_samples: u64,
    /// Segments refused by the codec (checksum, header, options): counted and dropped.
    pub malformed: u64,
    /// Well-formed segments dropped (out of window, PAWS, wrong port, no ACK...).
    pub dropped: u64,
    pub resets_sent: u64,
    pub resets_received: u64,
    pub challenge_acks: u64,
    pub syn_retransmits: u64,
    pub zero_window_probes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Recovery {
    /// RecoveryPoint (RFC 6675) / "recover" (RFC 6582): SND.NXT at entry.
    point: u32,
    prr: Prr,
    started: Nanos,
}

#[derive(Clone, Copy, Debug)]
struct PendingRst {
    dst: Endpoint,
    src_port: u16,
    seq: u32,
    ack: u32,
    flags: u8,
}

/// Builds a congestion controller for (sender MSS, initial window) in bytes.
pub type CcFactory = fn(u64, u64) -> Box<dyn CongestionControl>;

/// A TCP connection.
pub struct Connection {
    cfg: Config,
    state: State,
    local: Endpoint,
    remote: Endpoint,
    /// The last time passed in.
    now: Nanos,

    // Send side (RFC 9293 §3.3.1 names).
    iss: u32,
    snd_una: u32,
    snd_nxt: u32,
    snd_wnd: u32,
    snd_wl1: u32,
    snd_wl2: u32,
    snd_wscale: u8,
    /// Largest payload of a data segment (MSS less the options always sent).
    smss: u64,
    send_buf: SendBuffer,
    /// The bytes the application may have queued (the send buffer's policy).
    send_limit: usize,
    /// Sequence number of `send_buf`'s first byte.
    buf_seq: u32,
    /// New segments of the current transmission since the last one with
    /// PSH, when that transmission was built, and its run length (push.rs;
    /// worked out once per transmission, not per segment).
    segs_since_push: u64,
    push_burst_at: Nanos,
    push_run: u64,
    close_requested: bool,
    fin_sent: bool,
    scoreboard: Scoreboard,
    cc: Box<dyn CongestionControl>,
    /// Builds the algorithm at the handshake instead of `cfg.cc` when set.
    cc_factory: Option<CcFactory>,
    rtt: RttEstimator,
    rto_at: Option<Nanos>,
    syn_sent_at: Nanos,
    syn_transmissions: u32,
    recovery: Option<Recovery>,
    /// "recover" of RFC 6582: no new recovery until an ACK passes it.
    recover: u32,
    /// RFC 5681 §3.2 window inflation (bytes) during recovery without SACK.
    inflation: i64,
    dup_acks: u32,
    /// The next retransmission ignores the window (RFC 5681 §3.2 step 2,
    /// RFC 6675 §5 step 4.3, RFC 6582 §3.2 step 5).
    retransmit_now: bool,
    /// RFC 3522: after a first timeout, the TSval of its retransmission.
    eifel_armed: bool,
    eifel_ts: Option<u32>,
    last_send_at: Option<Nanos>,
    delivered: u64,
    delivered_at: Nanos,
    first_sent_at: Nanos,
    delivery_rate: u64,
    next_send_at: Nanos,

    // Receive side.
    irs: u32,
    rcv_nxt: u32,
    rcv_wscale: u8,
    recv_buf: RecvBuffer,
    ooo: RangeSet,
    /// Starts of the most recent out-of-order arrivals (RFC 2018 §4 block order).
    recent_ooo: [Option<u32>; 3],
    /// Sequence number of the peer's FIN once seen.
    peer_fin: Option<u32>,
    ack_now: bool,
    segs_unacked: u32,
    /// Linux's quick ACKs (`Config::quickack`).
    quickack: Option<QuickAck>,
    delack_at: Option<Nanos>,
    last_ack_sent: u32,
    last_wnd_sent: u64,
    sack_ok: bool,
    ts_ok: bool,
    ts_recent: u32,
    tw_at: Option<Nanos>,
    pending_rst: Option<PendingRst>,
    /// A SYN (or SYN-ACK) is due.
    syn_pending: bool,
    /// A zero-window probe is due.
    probe_pending: bool,
    /// The peer's FIN was consumed (RCV.NXT moved past it).
    peer_fin_done: bool,

    stats: TcpStats,
}

impl Connection {
    fn new(
        cfg: Config,
        local: Endpoint,
        remote: Endpoint,
        iss: u32,
        state: State,
        now: Nanos,
    ) -> Result<Connection, ConfigError> {
        cfg.validate()?;
        let rcv_wscale = if cfg.window_scale {
            let mut s = 0u8;
            while (cfg.recv_buffer >> s) > 65_535 && s < 14 {
                s += 1;
            }
            s
        } else {
            0
        };
        let smss = cfg.mss as u64;
        let iw = initial_window(cfg.initial_window, smss);
        let cc = cfg.cc.build_with(smss, iw, cfg.hystart);
        let rtt = RttEstimator::new(
            cfg.initial_rto,
            cfg.min_rto,
            cfg.max_rto,
            cfg.clock_granularity,
        )
        .with_formula(cfg.rto_formula);
        // Records for a full send buffer of half-size segments; smaller
        // segments grow the deque once, then it is reused.
        let segs = 2 * (cfg.send_buffer / cfg.mss as usize) + 16;
        Ok(Connection {
            send_buf: SendBuffer::new(cfg.send_buffer),
            send_limit: send_buffer::initial_limit(cfg.send_buffer_policy, cfg.send_buffer),
            recv_buf: RecvBuffer::new(cfg.recv_buffer),
            scoreboard: Scoreboard::with_capacity(segs.min(1 << 16)),
            cc,
            cc_factory: None,
            rtt,
            state,
            local,
            remote,
            now,
            iss,
            snd_una: iss,
            snd_nxt: iss,
            snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            snd_wscale: 0,
            smss,
            buf_seq: iss.wrapping_add(1),
            segs_since_push: 0,
            push_burst_at: 0,
            push_run: 2,
            close_requested: false,
            fin_sent: false,
            rto_at: None,
            syn_sent_at: now,
            syn_transmissions: 0,
            recovery: None,
            recover: iss,
            inflation: 0,
            dup_acks: 0,
            retransmit_now: false,
            eifel_armed: false,
            eifel_ts: None,
            last_send_at: None,
            delivered: 0,
            delivered_at: now,
            first_sent_at: now,
            delivery_rate: 0,
            next_send_at: 0,
            irs: 0,
            rcv_nxt: 0,
            rcv_wscale,
            ooo: RangeSet::default(),
            recent_ooo: [None; 3],
            peer_fin: None,
            ack_now: false,
            segs_unacked: 0,
            quickack: cfg.quickack.then(QuickAck::new),
            delack_at: None,
            last_ack_sent: 0,
            last_wnd_sent: 0,
            sack_ok: false,
            ts_ok: false,
            ts_recent: 0,
            tw_at: None,
            pending_rst: None,
            syn_pending: false,
            probe_pending: false,
            peer_fin_done: false,
            stats: TcpStats::default(),
            cfg,
        })
    }

    /// Active open: a SYN to `remote` goes out on the next `poll_transmit`.
    pub fn connect(
        cfg: Config,
        local: Endpoint,
        remote: Endpoint,
        iss: u32,
        now: Nanos,
    ) -> Result<Connection, ConfigError> {
        let mut c = Connection::new(cfg, local, remote, iss, State::SynSent, now)?;
        c.syn_pending = true;
        Ok(c)
    }

    /// Passive open: wait for one SYN to `local`.
    pub fn listen(
        cfg: Config,
        local: Endpoint,
        iss: u32,
        now: Nanos,
    ) -> Result<Connection, ConfigError> {
        Connection::new(cfg, local, Endpoint::default(), iss, State::Listen, now)
    }

    /// Use an algorithm of the caller's instead of `Config::cc` (it is built
    /// when the handshake completes, for the negotiated MSS).
    pub fn set_congestion_control(&mut self, factory: CcFactory) {
        self.cc_factory = Some(factory);
    }

    // ---- accessors ----

    pub fn state(&self) -> State {
        self.state
    }
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    pub fn local(&self) -> Endpoint {
        self.local
    }
    pub fn remote(&self) -> Endpoint {
        self.remote
    }
    /// Congestion window in bytes (with RFC 5681 inflation during recovery without SACK).
    pub fn cwnd(&self) -> u64 {
        self.effective_cwnd()
    }
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Bytes in flight (RFC 6675 pipe).
    pub fn bytes_in_flight(&self) -> u64 {
        self.scoreboard.pipe()
    }
    /// SND.NXT - SND.UNA.
    pub fn flight_size(&self) -> u64 {
        seq::diff(self.snd_nxt, self.snd_una) as u64
    }
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.scoreboard
    }
    pub fn snd_una(&self) -> u32 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u32 {
        self.snd_nxt
    }
    pub fn rcv_nxt(&self) -> u32 {
        self.rcv_nxt
    }
    /// Largest data payload per segment.
    pub fn smss(&self) -> u64 {
        self.smss
    }
    /// Latest delivery-rate sample, bytes per second.
    pub fn delivery_rate(&self) -> u64 {
        self.delivery_rate
    }
    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    pub fn timestamps_enabled(&self) -> bool {
        self.ts_ok
    }
    /// Whether data can be sent and received (ESTABLISHED or CLOSE-WAIT for sending).
    pub fn is_established(&self) -> bool {
        matches!(self.state, State::Established | State::CloseWait)
    }
    /// Whether the peer closed its direction and all its data was read.
    pub fn peer_closed(&self) -> bool {
        self.peer_fin_done && self.recv_buf.ready() == 0
    }
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::Closed | State::TimeWait)
    }
    /// Bytes written but not yet acknowledged.
    pub fn send_queue(&self) -> usize {
        self.send_buf.len()
    }
    /// Room in the send buffer.
    pub fn send_capacity(&self) -> usize {
        if self.close_requested
            || !matches!(
                self.state,
                State::SynSent | State::SynReceived | State::Established | State::CloseWait
            )
        {
            0
        } else {
            self.send_limit.saturating_sub(self.send_buf.len())
        }
    }
    /// In-order bytes ready for `recv`.
    pub fn recv_ready(&self) -> usize {
        self.recv_buf.ready()
    }

    // ---- application side ----

    /// Queue `data` for sending; returns how many bytes were taken.
    pub fn send(&mut self, data: &[u8]) -> usize {
        let room = self.send_capacity();
        if room == 0 {
            return 0;
        }
        let n = self.send_buf.write(&data[..data.len().min(room)]);
        self.stats.bytes_written += n as u64;
        n
    }

    /// Read in-order data.
    pub fn recv(&mut self, out: &mut [u8]) -> usize {
        let n = self.recv_buf.read(out);
        // Window update (RFC 9293 §3.8.6.2.2, receiver-side SWS avoidance):
        // announce once the window opened by at least one MSS and at least
        // doubled since last announced (Linux's rule), so a reading
        // application does not cause an ACK per read.
        if n > 0 && self.state.synchronized() {
            let after = self.advertised_window();
            let opened = after.saturating_sub(self.last_wnd_sent);
            if opened >= self.smss.min(self.recv_buf.capacity() as u64 / 2)
                && after >= 2 * self.last_wnd_sent
            {
                self.ack_now = true;
            }
        }
        n
    }

    /// Close the sending direction: a FIN follows the queued data.
    pub fn close(&mut self) {
        match self.state {
            State::Listen => self.state = State::Closed,
            // RFC 9293 §3.10.4: in SYN-SENT with nothing queued, the TCB goes;
            // with queued data the FIN follows it after the handshake.
            State::SynSent if self.send_buf.is_empty() => self.state = State::Closed,
            _ => self.close_requested = true,
        }
    }

    /// Abort: send a RST and forget the connection.
    pub fn abort(&mut self) {
        if self.state.synchronized() && self.state != State::TimeWait {
            self.pending_rst = Some(PendingRst {
                dst: self.remote,
                src_port: self.local.port,
                seq: self.snd_nxt,
                ack: 0,
                flags: Flags::RST,
            });
        }
        self.state = State::Closed;
        self.rto_at = None;
        self.delack_at = None;
    }

    // ---- timers ----

    /// When the connection next needs `poll_transmit`: now if it has
    /// something to send, else its earliest timer, `None` if nothing is pending.
    pub fn poll_at(&self) -> Option<Nanos> {
        if self.pending_rst.is_some() {
            return Some(self.now);
        }
        if matches!(self.state, State::Closed | State::Listen) {
            return None;
        }
        if self.ack_now {
            return Some(self.now);
        }
        if self.can_send_data() {
            return Some(self.now.max(self.next_send_at));
        }
        [self.rto_at, self.delack_at, self.tw_at]
            .into_iter()
            .flatten()
            .min()
    }

    fn run_timers(&mut self, now: Nanos) {
        if self.delack_at.is_some_and(|t| t <= now) {
            self.delack_at = None;
            self.ack_now = true;
        }
        if self.tw_at.is_some_and(|t| t <= now) {
            self.tw_at = None;
            self.state = State::Closed;
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.rto_at = None;
            self.on_rto(now);
        }
    }

    fn arm_rto(&mut self, now: Nanos) {
        self.rto_at = Some(now + self.rtt.rto());
    }

    /// The FlightSize the loss responses halve (RFC 5681 eq. 4), capped by
    /// cwnd: with SACK, SND.NXT - SND.UNA also counts SACKed bytes that have
    /// left the network, and a timeout late in a long recovery would
    /// otherwise raise ssthresh (Linux halves cwnd).
    fn reduction_basis(&self) -> u64 {
        self.flight_size().min(self.cc.window())
    }

    fn note_ssthresh(&mut self, before: u64) {
        if self.cc.ssthresh() != before {
            self.stats.ssthresh_changes += 1;
        }
    }

    fn on_rto(&mut self, now: Nanos) {
        match self.state {
            State::SynSent | State::SynReceived => {
                if self.syn_transmissions >= self.cfg.syn_retries {
                    self.state = State::Closed;
                    return;
                }
                if self.syn_transmissions > 0 {
                    self.rtt.back_off();
                }
                // poll_transmit sends the SYN (or SYN-ACK) and re-arms.
                self.snd_nxt = self.iss;
                self.rto_at = None;
                self.syn_pending = true;
            }
            State::Closed | State::Listen | State::TimeWait => {}
            _ => {
                if self.scoreboard.is_empty() {
                    if self.unsent() > 0 || (self.close_requested && !self.fin_sent) {
                        // Zero-window probe (RFC 9293 §3.8.6.1): an ACK-eliciting
                        // old-sequence segment; backoff as for the RTO.
                        self.stats.zero_window_probes += 1;
                        self.probe_pending = true;
                        self.rtt.back_off();
                        self.arm_rto(now);
                    }
                    return;
                }
                self.stats.rtos += 1;
                if self.rtt.backoff() == 0 {
                    // RFC 3522 §3.2: remember the first retransmission's TSval.
                    self.eifel_armed = self.ts_ok;
                    self.eifel_ts = None;
                }
                let before = self.cc.ssthresh();
                self.cc.on_rto(now, self.reduction_basis());
                self.note_ssthresh(before);
                self.scoreboard.mark_all_lost();
                self.end_recovery(now);
                self.inflation = 0;
                self.dup_acks = 0;
                self.retransmit_now = true;
                // RFC 6582 §3.2 step 1 after a timeout: recover = highest sent.
                self.recover = self.snd_nxt.wrapping_sub(1);
                // RFC 6298 §5.5 and §5.6.
                self.rtt.back_off();
                self.arm_rto(now);
            }
        }
    }

    /// Check the bookkeeping against a recount (for tests): scoreboard
    /// sums, segments contiguous from SND.UNA to SND.NXT, pipe within the
    /// flight, buffers consistent, out-of-order ranges above RCV.NXT.
    pub fn check_invariants(&self) -> Result<(), String> {
        let sb = &self.scoreboard;
        let (pipe, sacked, pending) = sb.recount();
        if (pipe, sacked, pending) != (sb.pipe(), sb.sacked_bytes(), sb.lost_pending()) {
            return Err(format!(
                "scoreboard sums {:?} differ from recount {:?}",
                (sb.pipe(), sb.sacked_bytes(), sb.lost_pending()),
                (pipe, sacked, pending)
            ));
        }
        if seq::gt(self.snd_una, self.snd_nxt) {
            return Err(format!(
                "SND.UNA {} past SND.NXT {}",
                self.snd_una, self.snd_nxt
            ));
        }
        if self.state.synchronized() && !matches!(self.state, State::SynReceived) {
            let mut at = self.snd_una;
            for s in sb.segments() {
                if s.start != at || !seq::lt(s.start, s.end) {
                    return Err(format!(
                        "scoreboard segment {}..{} not contiguous at {}",
                        s.start, s.end, at
                    ));
                }
                at = s.end;
            }
            if !sb.is_empty() && at != self.snd_nxt {
                return Err(format!(
                    "scoreboard ends at {at}, SND.NXT is {}",
                    self.snd_nxt
                ));
            }
            if sb.pipe() > self.flight_size() {
                return Err(format!(
                    "pipe {} above flight size {}",
                    sb.pipe(),
                    self.flight_size()
                ));
            }
            let sent_data = seq::diff(self.snd_nxt, self.buf_seq) as usize - self.fin_sent as usize;
            if sent_data > self.send_buf.len() {
                return Err(format!(
                    "sent {sent_data} bytes beyond the {} buffered",
                    self.send_buf.len()
                ));
            }
        }
        let mut prev = self.rcv_nxt;
        for &(l, r) in self.ooo.as_slice() {
            if !seq::gt(l, prev) || !seq::lt(l, r) {
                return Err(format!("out-of-order range {l}..{r} not above {prev}"));
            }
            if seq::diff(r, self.rcv_nxt) as usize > self.recv_buf.window() {
                return Err(format!("out-of-order range {l}..{r} beyond the window"));
            }
            prev = r;
        }
        Ok(())
    }
}
