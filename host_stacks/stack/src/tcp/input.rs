//! Segment arrival (RFC 9293 §3.10.7).

use super::{Connection, Endpoint, PendingRst, Recovery, State};
use crate::cc::{initial_window, AckSample, Prr, RecoveryStyle};
use crate::tcp::scoreboard::{Delivery, EVER_RETRANS};
use crate::wire::{self, Flags, TcpHeader, TcpOptions};
use crate::{seq, Nanos, SECONDS};

impl Connection {
    /// A segment (IPv4 payload) from `src` to this end arrived at `now`.
    /// Malformed segments are counted in `stats().malformed` and dropped.
    pub fn handle_segment(&mut self, now: Nanos, src: [u8; 4], bytes: &[u8]) {
        self.now = self.now.max(now);
        let now = self.now;
        let (h, payload) = match wire::parse_tcp(bytes, src, self.local.addr) {
            Ok(x) => x,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        self.stats.segments_received += 1;
        let from = Endpoint {
            addr: src,
            port: h.src_port,
        };
        if h.dst_port != self.local.port {
            self.stats.dropped += 1;
            self.reset_for(from, &h, payload.len());
            return;
        }
        match self.state {
            State::Closed => {
                self.stats.dropped += 1;
                self.reset_for(from, &h, payload.len());
            }
            State::Listen => self.on_listen(now, from, &h),
            State::SynSent => self.on_syn_sent(now, &h),
            _ => {
                if from != self.remote {
                    self.stats.dropped += 1;
                    self.reset_for(from, &h, payload.len());
                    return;
                }
                let acked_before = self.stats.bytes_acked;
                self.on_synchronized(now, &h, payload);
                if self.stats.bytes_acked != acked_before {
                    self.on_send_space_freed();
                }
            }
        }
    }

    /// RFC 9293 §3.10.7.1: the reset for a segment that belongs to no connection.
    fn reset_for(&mut self, to: Endpoint, h: &TcpHeader, payload_len: usize) {
        if h.flags.has(Flags::RST) {
            return;
        }
        let seg_len =
            payload_len as u32 + h.flags.has(Flags::SYN) as u32 + h.flags.has(Flags::FIN) as u32;
        self.pending_rst = Some(if h.flags.has(Flags::ACK) {
            PendingRst {
                dst: to,
                src_port: h.dst_port,
                seq: h.ack,
                ack: 0,
                flags: Flags::RST,
            }
        } else {
            PendingRst {
                dst: to,
                src_port: h.dst_port,
                seq: 0,
                ack: h.seq.wrapping_add(seg_len),
                flags: Flags::RST | Flags::ACK,
            }
        });
    }

    fn negotiate(&mut self, o: &TcpOptions) {
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        match (self.cfg.window_scale, o.window_scale) {
            // RFC 7323 §2.3: a shift above 14 is used as 14.
            (true, Some(ws)) => self.snd_wscale = ws.min(14),
            _ => {
                self.snd_wscale = 0;
                self.rcv_wscale = 0;
            }
        }
        // RFC 9293 §3.7.1: 536 when the peer sends no MSS; the payload is the
        // MSS less the options every segment carries (timestamps: 12 bytes).
        let peer_mss = o.mss.unwrap_or(536).max(64) as u64;
        let opts = if self.ts_ok { 12 } else { 0 };
        self.smss = peer_mss.min(self.cfg.mss as u64) - opts;
        if let Some((val, _)) = o.timestamps {
            self.ts_recent = val;
        }
    }

    fn on_listen(&mut self, now: Nanos, from: Endpoint, h: &TcpHeader) {
        if h.flags.has(Flags::RST) {
            self.stats.dropped += 1;
        } else if h.flags.has(Flags::ACK) {
            self.stats.dropped += 1;
            self.reset_for(from, h, 0);
        } else if h.flags.has(Flags::SYN) {
            self.remote = from;
            self.irs = h.seq;
            self.rcv_nxt = h.seq.wrapping_add(1);
            self.negotiate(&h.options);
            self.state = State::SynReceived;
            self.syn_pending = true;
            self.syn_sent_at = now;
        } else {
            self.stats.dropped += 1;
        }
    }

    fn on_syn_sent(&mut self, now: Nanos, h: &TcpHeader) {
        let f = h.flags;
        let ack_ok = h.ack == self.iss.wrapping_add(1);
        if f.has(Flags::ACK) && !ack_ok {
            self.stats.dropped += 1;
            self.reset_for(self.remote, h, 0);
            return;
        }
        if f.has(Flags::RST) {
            if f.has(Flags::ACK) {
                self.stats.resets_received += 1;
                self.state = State::Closed;
                self.rto_at = None;
            } else {
                self.stats.dropped += 1;
            }
            return;
        }
        if !(f.has(Flags::SYN) && f.has(Flags::ACK)) {
            // Simultaneous open is not supported; anything else is dropped.
            self.stats.dropped += 1;
            return;
        }
        self.irs = h.seq;
        self.rcv_nxt = h.seq.wrapping_add(1);
        self.negotiate(&h.options);
        self.snd_una = h.ack;
        // Window in a SYN is never scaled (RFC 7323 §2.2).
        self.snd_wnd = h.window as u32;
        self.snd_wl1 = h.seq;
        self.snd_wl2 = h.ack;
        self.established(now);
        self.ack_now = true;
    }

    /// The handshake completed: build the congestion controller for the
    /// negotiated MSS, take the SYN's RTT sample.
    fn established(&mut self, now: Nanos) {
        self.state = State::Established;
        let syn_lost = self.syn_transmissions > 1;
        if !syn_lost {
            // Karn: only a SYN sent once gives a sample.
            self.rtt.sample(now.saturating_sub(self.syn_sent_at));
            self.stats.rtt_samples += 1;
        } else if self.cfg.initial_rto < 3 * SECONDS {
            // RFC 6298 §5.7.
            self.rtt.set_base_rto(3 * SECONDS);
        }
        self.rtt.reset_backoff();
        self.rto_at = None;
        // RFC 5681 §3.1 / RFC 6928 §2: one segment after a lost SYN or SYN-ACK.
        let iw = if syn_lost {
            self.smss
        } else {
            initial_window(self.cfg.initial_window, self.smss)
        };
        self.cc = match self.cc_factory {
            Some(f) => f(self.smss, iw),
            None => self.cfg.cc.build_with(self.smss, iw, self.cfg.hystart),
        };
        self.last_send_at = None;
        self.delivered_at = now;
        self.first_sent_at = now;
        // Linux's tcp_init_buffer_space: the buffer for the initial window.
        self.expand_send_buffer();
    }

    fn challenge_ack(&mut self) {
        self.stats.challenge_acks += 1;
        self.ack_now = true;
    }

    fn on_synchronized(&mut self, now: Nanos, h: &TcpHeader, payload: &[u8]) {
        let f = h.flags;
        let seg_len = payload.len() as u32 + f.has(Flags::SYN) as u32 + f.has(Flags::FIN) as u32;
        // PAWS (RFC 7323 §5.3): old timestamps, and segments without one, are dropped.
        if self.ts_ok && !f.has(Flags::RST) {
            match h.options.timestamps {
                None => {
                    self.stats.dropped += 1;
                    return;
                }
                Some((val, _)) if seq::lt(val, self.ts_recent) => {
                    self.stats.dropped += 1;
                    self.ack_now = true;
                    return;
                }
                _ => {}
            }
        }
        // Acceptability (RFC 9293 §3.10.7.4, first check).
        let wnd = self.recv_buf.window() as u32;
        let in_wnd =
            |s: u32| seq::le(self.rcv_nxt, s) && seq::lt(s, self.rcv_nxt.wrapping_add(wnd));
        let acceptable = match (seg_len, wnd) {
            (0, 0) => h.seq == self.rcv_nxt,
            (0, _) => in_wnd(h.seq),
            (_, 0) => false,
            _ => in_wnd(h.seq) || in_wnd(h.seq.wrapping_add(seg_len - 1)),
        };
        if !acceptable {
            self.stats.dropped += 1;
            if !f.has(Flags::RST) {
                self.ack_now = true;
            }
            // A zero window still takes ACKs (RFC 9293 §3.10.7.4).
            if wnd == 0
                && f.has(Flags::ACK)
                && !f.has(Flags::RST)
                && !f.has(Flags::SYN)
                && self.state != State::SynReceived
            {
                self.on_ack(now, h, payload.len());
            }
            return;
        }
        if f.has(Flags::RST) {
            // RFC 5961 §3.2: only an exact match resets; others get a challenge ACK.
            if h.seq == self.rcv_nxt {
                self.stats.resets_received += 1;
                self.state = State::Closed;
                self.rto_at = None;
                self.delack_at = None;
                self.tw_at = None;
            } else {
                self.challenge_ack();
            }
            return;
        }
        if f.has(Flags::SYN) {
            if self.state == State::SynReceived && h.seq == self.irs {
                // Our SYN-ACK was lost: send it again.
                self.syn_pending = true;
                self.snd_nxt = self.iss;
            } else {
                // RFC 5961 §4.
                self.challenge_ack();
            }
            return;
        }
        if !f.has(Flags::ACK) {
            self.stats.dropped += 1;
            return;
        }
        if self.state == State::SynReceived {
            if seq::gt(h.ack, self.snd_una) && seq::le(h.ack, self.snd_nxt) {
                self.snd_una = h.ack;
                self.snd_wnd = (h.window as u32) << self.snd_wscale;
                self.snd_wl1 = h.seq;
                self.snd_wl2 = h.ack;
                self.established(now);
            } else {
                self.stats.dropped += 1;
                self.reset_for(self.remote, h, payload.len());
                return;
            }
        }
        if seq::gt(h.ack, self.snd_nxt) {
            // Acknowledges data not yet sent: answer with an ACK, drop.
            self.stats.dropped += 1;
            self.ack_now = true;
            return;
        }
        // RFC 7323 §4.3: TS.Recent from segments at or left of the last ACK sent.
        if let Some((val, _)) = h.options.timestamps {
            if self.ts_ok && seq::le(h.seq, self.last_ack_sent) && seq::ge(val, self.ts_recent) {
                self.ts_recent = val;
            }
        }
        self.on_ack(now, h, payload.len());
        if !payload.is_empty()
            && matches!(
                self.state,
                State::Established | State::FinWait1 | State::FinWait2
            )
        {
            self.on_data(now, h.seq, payload);
        }
        if f.has(Flags::FIN) && self.peer_fin.is_none() {
            let fin = h.seq.wrapping_add(payload.len() as u32);
            if seq::ge(fin, self.rcv_nxt) && seq::le(fin, self.rcv_nxt.wrapping_add(wnd)) {
                self.peer_fin = Some(fin);
            }
        }
        self.take_fin(now);
    }

    fn take_fin(&mut self, now: Nanos) {
        if self.peer_fin_done || self.peer_fin != Some(self.rcv_nxt) {
            return;
        }
        self.peer_fin_done = true;
        self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
        self.ack_now = true;
        self.state = match self.state {
            State::SynReceived | State::Established => State::CloseWait,
            State::FinWait1 if self.our_fin_acked() => self.enter_time_wait(now),
            State::FinWait1 => State::Closing,
            State::FinWait2 => self.enter_time_wait(now),
            s => s,
        };
    }

    fn our_fin_acked(&self) -> bool {
        self.fin_sent && self.snd_una == self.snd_nxt
    }

    fn enter_time_wait(&mut self, now: Nanos) -> State {
        self.tw_at = Some(now + self.cfg.time_wait);
        self.rto_at = None;
        State::TimeWait
    }

    fn on_data(&mut self, now: Nanos, seg_seq: u32, payload: &[u8]) {
        let mut s = seg_seq;
        let mut data = payload;
        if seq::lt(s, self.rcv_nxt) {
            let cut = seq::diff(self.rcv_nxt, s) as usize;
            if cut >= data.len() {
                self.ack_now = true;
                return;
            }
            data = &data[cut..];
            s = self.rcv_nxt;
        }
        let offset = seq::diff(s, self.rcv_nxt) as usize;
        let wnd = self.recv_buf.window();
        if offset >= wnd {
            self.ack_now = true;
            return;
        }
        let data = &data[..data.len().min(wnd - offset)];
        let len = data.len() as u32;
        if offset == 0 {
            self.recv_buf.write_at(0, data);
            let had_ooo = !self.ooo.is_empty();
            self.rcv_nxt = self.rcv_nxt.wrapping_add(len);
            let mut advanced = len as usize;
            while let Some(end) = self.ooo.pop_reached(self.rcv_nxt) {
                if seq::gt(end, self.rcv_nxt) {
                    advanced += seq::diff(end, self.rcv_nxt) as usize;
                    self.rcv_nxt = end;
                }
            }
            self.recv_buf.advance(advanced);
            self.stats.bytes_received += advanced as u64;
            let window = self.recv_buf.window() as u64;
            let quick = self
                .quickack
                .as_mut()
                .is_some_and(|q| q.on_segment(len as u64, self.last_wnd_sent, window));
            if had_ooo || quick {
                // RFC 5681 §4.2: ACK at once when a segment fills a hole;
                // Linux: also in quick-ACK mode.
                self.ack_now = true;
            } else {
                // RFC 5681 §4.2: at least every second full-sized segment,
                // and within the delayed-ACK timer.
                self.segs_unacked += 1;
                match self.cfg.delayed_ack {
                    Some(d) if self.segs_unacked < 2 => {
                        if self.delack_at.is_none() {
                            self.delack_at = Some(now + d);
                        }
                    }
                    _ => self.ack_now = true,
                }
            }
        } else {
            self.ooo.insert(s, s.wrapping_add(len));
            self.recv_buf.write_at(offset, data);
            // RFC 2018 §4: the first SACK block reports the latest segment.
            self.recent_ooo.rotate_right(1);
            self.recent_ooo[0] = Some(s);
            // RFC 5681 §4.2: an out-of-order segment is acknowledged at once.
            self.ack_now = true;
        }
    }

    fn on_ack(&mut self, now: Nanos, h: &TcpHeader, payload_len: usize) {
        let ack = h.ack;
        let pipe_before = self.scoreboard.pipe();
        // Window update (RFC 9293 §3.10.7.4, SND.WL1/SND.WL2 rule).
        let wnd = (h.window as u32) << self.snd_wscale;
        let window_changed = wnd != self.snd_wnd;
        if seq::lt(self.snd_wl1, h.seq) || (self.snd_wl1 == h.seq && seq::le(self.snd_wl2, ack)) {
            self.snd_wnd = wnd;
            self.snd_wl1 = h.seq;
            self.snd_wl2 = ack;
        }
        if seq::lt(ack, self.snd_una) {
            return; // an old ACK
        }
        let mut sacked = Delivery::default();
        if self.sack_ok {
            for &(l, r) in h.options.sack_blocks() {
                // RFC 2018: blocks outside [SND.UNA, SND.NXT] are ignored.
                if seq::lt(l, r) && seq::ge(l, ack) && seq::le(r, self.snd_nxt) {
                    let d = self.scoreboard.sack(l, r);
                    sacked.bytes += d.bytes;
                    if let Some(n) = d.newest {
                        if sacked.newest.is_none_or(|o| n.sent_at >= o.sent_at) {
                            sacked.newest = Some(n);
                        }
                    }
                }
            }
        }
        let acked = seq::diff(ack, self.snd_una) as u64;
        let mut cum = Delivery::default();
        let mut rtt_sample = None;
        if acked > 0 {
            cum = self.scoreboard.ack(ack);
            let data_acked = (acked as usize).min(self.send_buf.len());
            self.send_buf.consume(data_acked);
            self.buf_seq = self.buf_seq.wrapping_add(data_acked as u32);
            self.stats.bytes_acked += data_acked as u64;
            self.snd_una = ack;
            if self.eifel_armed {
                if let (Some(ts), Some((_, ecr))) = (self.eifel_ts, h.options.timestamps) {
                    // RFC 3522 §3.2: an echo older than the retransmission
                    // means the original was acknowledged: spurious.
                    if seq::lt(ecr, ts) {
                        self.stats.spurious_rtos += 1;
                    }
                    self.eifel_armed = false;
                    self.eifel_ts = None;
                }
            }
            // Karn's rule: no sample from a retransmitted segment (RFC 6298 §3).
            if let Some(s) = cum.newest.filter(|s| s.flags & EVER_RETRANS == 0) {
                let r = now.saturating_sub(s.sent_at);
                self.rtt.sample(r);
                self.stats.rtt_samples += 1;
                rtt_sample = Some(r);
            }
            self.rtt.reset_backoff();
            self.dup_acks = 0;
            // RFC 6298 §5.2 and §5.3; with data waiting behind a zero
            // window the timer stays as the persist timer (RFC 9293 §3.8.6.1).
            if self.scoreboard.is_empty() && !self.zero_window_blocked() {
                self.rto_at = None;
            } else {
                self.arm_rto(now);
            }
            if self.fin_sent && self.snd_una == self.snd_nxt {
                self.state = match self.state {
                    State::FinWait1 => State::FinWait2,
                    State::Closing => self.enter_time_wait(now),
                    State::LastAck => {
                        self.rto_at = None;
                        State::Closed
                    }
                    s => s,
                };
            }
        }
        self.on_delivered(now, &cum, &sacked);
        // Duplicate ACK: RFC 5681 §2 without SACK, RFC 6675 §2 with it.
        let is_dup = acked == 0
            && payload_len == 0
            && !h.flags.has(Flags::FIN)
            && !self.scoreboard.is_empty()
            && if self.sack_ok {
                sacked.bytes > 0
            } else {
                !window_changed
            };
        if is_dup {
            self.dup_acks += 1;
            self.stats.dup_acks += 1;
        }
        if self.sack_ok && sacked.bytes > 0 {
            self.scoreboard.mark_losses(self.cfg.dupthresh, self.smss);
        }
        match self.recovery {
            None => {
                let reno = !self.sack_ok && self.cc.recovery_style() == RecoveryStyle::Reno;
                let loss = if self.sack_ok {
                    self.dup_acks >= self.cfg.dupthresh || self.scoreboard.front_lost()
                } else {
                    is_dup && self.dup_acks == self.cfg.dupthresh
                };
                // RFC 6582 §3.2 step 2: not again for losses of the same window.
                if loss && (reno || seq::gt(ack, self.recover)) {
                    self.enter_recovery(now, acked + sacked.bytes);
                } else if acked > 0 {
                    let sample = AckSample {
                        now,
                        acked,
                        rtt: rtt_sample,
                        srtt: self.rtt.srtt().unwrap_or(0),
                        min_rtt: self.rtt.min_rtt().unwrap_or(0),
                        in_flight: pipe_before,
                        ack,
                        snd_nxt: self.snd_nxt,
                    };
                    let before = self.cc.ssthresh();
                    self.cc.on_ack(&sample);
                    self.note_ssthresh(before);
                }
            }
            Some(rec) => {
                if acked > 0 && seq::ge(ack, rec.point) {
                    self.exit_recovery(now);
                    return;
                }
                let mut delivered = acked + sacked.bytes;
                if acked > 0 && !self.sack_ok {
                    if self.cc.recovery_style() == RecoveryStyle::Reno && !self.cfg.prr {
                        // RFC 5681 §3.2 step 6: the first new ACK ends recovery.
                        self.exit_recovery(now);
                        return;
                    }
                    // RFC 6582 §3.2 step 5: retransmit the next hole, deflate
                    // by the amount acked, add back one SMSS.
                    self.scoreboard.mark_front_lost();
                    self.retransmit_now = true;
                    self.inflation -= acked as i64;
                    if acked >= self.smss {
                        self.inflation += self.smss as i64;
                    }
                } else if is_dup && !self.sack_ok {
                    // RFC 5681 §3.2 step 4 (and RFC 6937: a dupack delivered one SMSS).
                    self.inflation += self.smss as i64;
                    delivered = self.smss;
                }
                if self.cfg.prr {
                    let pipe = self.scoreboard.pipe();
                    let ssthresh = self.cc.ssthresh();
                    if let Some(r) = self.recovery.as_mut() {
                        r.prr.on_ack(delivered, pipe, ssthresh, self.smss);
                    }
                }
            }
        }
    }

    fn enter_recovery(&mut self, now: Nanos, delivered: u64) {
        let flight = self.flight_size();
        let before = self.cc.ssthresh();
        self.cc.on_congestion_event(now, self.reduction_basis());
        self.note_ssthresh(before);
        self.stats.recoveries += 1;
        self.recover = self.snd_nxt.wrapping_sub(1);
        if !self.scoreboard.front_lost() {
            // RFC 5681 §3.2 step 2 / RFC 6675 §5 step 4.3: HighACK + 1 is resent.
            self.scoreboard.mark_front_lost();
        }
        self.inflation = if !self.sack_ok && !self.cfg.prr {
            // RFC 5681 §3.2 step 3: cwnd = ssthresh + 3*SMSS.
            (self.cfg.dupthresh as u64 * self.smss) as i64
        } else {
            0
        };
        let mut prr = Prr::start(flight);
        if self.cfg.prr {
            let delivered = if self.sack_ok { delivered } else { self.smss };
            prr.on_ack(
                delivered,
                self.scoreboard.pipe(),
                self.cc.ssthresh(),
                self.smss,
            );
        }
        self.recovery = Some(Recovery {
            point: self.snd_nxt,
            prr,
            started: now,
        });
        self.retransmit_now = true;
    }

    /// Leaves loss recovery (if in it), counting the episode and its length.
    pub(super) fn end_recovery(&mut self, now: Nanos) {
        if let Some(r) = self.recovery.take() {
            self.stats.recoveries_ended += 1;
            self.stats.recovery_ns += now.saturating_sub(r.started);
        }
    }

    fn exit_recovery(&mut self, now: Nanos) {
        self.end_recovery(now);
        self.inflation = 0;
        self.retransmit_now = false;
        let before = self.cc.ssthresh();
        self.cc.on_recovery_exit(now, self.flight_size());
        self.note_ssthresh(before);
    }

    /// Delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3).
    fn on_delivered(&mut self, now: Nanos, cum: &Delivery, sacked: &Delivery) {
        let bytes = cum.bytes + sacked.bytes;
        if bytes == 0 {
            return;
        }
        self.delivered += bytes;
        self.delivered_at = now;
        let newest = match (cum.newest, sacked.newest) {
            (Some(a), Some(b)) => Some(if a.sent_at >= b.sent_at { a } else { b }),
            (a, b) => a.or(b),
        };
        if let Some(p) = newest {
            self.first_sent_at = p.sent_at;
            let send_elapsed = p.sent_at.saturating_sub(p.first_sent_at);
            let ack_elapsed = now.saturating_sub(p.delivered_at);
            let interval = send_elapsed.max(ack_elapsed);
            if interval > 0 {
                let d = self.delivered - p.delivered;
                self.delivery_rate = (d as u128 * SECONDS as u128 / interval as u128) as u64;
            }
        }
    }
}
