//! What goes out next (RFC 9293 §3.8, RFC 6675 §5 NextSeg()).

use super::{push, Connection, State, Transmit};
use crate::tcp::scoreboard::{SentSeg, FIN};
use crate::wire::{self, Flags, TcpHeader, TcpOptions, MAX_SACK_BLOCKS};
use crate::{seq, Nanos, MILLIS, SECONDS};

/// The next data segment to send.
#[derive(Clone, Copy, Debug)]
enum Next {
    /// Resend scoreboard entry `i`.
    Retransmit(usize),
    /// New data: `len` bytes, with FIN when `fin`.
    New { len: usize, fin: bool },
}

impl Connection {
    /// Bytes written by the application and not sent yet.
    pub(super) fn unsent(&self) -> usize {
        let sent = seq::diff(self.snd_nxt, self.buf_seq) as usize;
        self.send_buf.len().saturating_sub(sent)
    }

    pub(super) fn effective_cwnd(&self) -> u64 {
        (self.cc.window() as i64 + self.inflation).max(self.smss as i64) as u64
    }

    /// Whether `len` more bytes fit the congestion window now.
    fn window_allows(&self, len: u64) -> bool {
        if let Some(r) = &self.recovery {
            if self.cfg.prr {
                // RFC 6937 §3.1: send at most sndcnt.
                return r.prr.sndcnt() >= len;
            }
            if !self.sack_ok {
                // RFC 5681 §3.2 step 5: FlightSize against the inflated window.
                return self.flight_size() + len <= self.effective_cwnd();
            }
        }
        // RFC 6675 §5 (C): cwnd - pipe >= the segment.
        self.scoreboard.pipe() + len <= self.effective_cwnd()
    }

    fn next_data(&self) -> Option<Next> {
        if !matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::Closing
                | State::LastAck
        ) {
            return None;
        }
        if let Some(i) = self.scoreboard.first_lost() {
            let len = self.scoreboard.get(i).len();
            return (self.retransmit_now || self.window_allows(len)).then_some(Next::Retransmit(i));
        }
        let unsent = self.unsent();
        let want_fin = self.close_requested && !self.fin_sent;
        if unsent == 0 && !want_fin {
            return None;
        }
        let right = self.snd_una.wrapping_add(self.snd_wnd);
        let usable = if seq::gt(right, self.snd_nxt) {
            seq::diff(right, self.snd_nxt) as usize
        } else {
            0
        };
        let len = unsent.min(self.smss as usize).min(usable);
        if len == 0 && unsent > 0 {
            return None; // zero window: the persist timer probes
        }
        // Sender-side silly window avoidance (RFC 9293 §3.8.6.2.1).
        if len < self.smss as usize && len < unsent && !self.scoreboard.is_empty() {
            return None;
        }
        let fin = want_fin && len == unsent;
        let seg_len = len as u64 + fin as u64;
        if seg_len == 0 || !self.window_allows(seg_len) {
            return None;
        }
        Some(Next::New { len, fin })
    }

    /// Data waits, nothing is in flight and the peer's window is closed.
    pub(super) fn zero_window_blocked(&self) -> bool {
        let right = self.snd_una.wrapping_add(self.snd_wnd);
        self.scoreboard.is_empty() && self.unsent() > 0 && !seq::gt(right, self.snd_nxt)
    }

    pub(super) fn can_send_data(&self) -> bool {
        self.syn_pending || self.probe_pending || self.next_data().is_some()
    }

    /// TSval: a 1 ms clock (RFC 7323 §5.4 allows 1 ms to 1 s per tick).
    fn ts_val(&self, now: Nanos) -> u32 {
        ((now / MILLIS) as u32).wrapping_add(self.iss)
    }

    /// Receive window to announce, in bytes (before scaling).
    pub(super) fn advertised_window(&self) -> u64 {
        let max = 65_535u64 << self.rcv_wscale;
        (self.recv_buf.window() as u64).min(max)
    }

    /// Write the next segment into `buf` (it must hold the MSS plus 60
    /// bytes of header). Runs expired timers first.
    pub fn poll_transmit(&mut self, now: Nanos, buf: &mut [u8]) -> Option<Transmit> {
        self.now = self.now.max(now);
        let now = self.now;
        self.run_timers(now);
        if let Some(r) = self.pending_rst.take() {
            let h = TcpHeader {
                src_port: r.src_port,
                dst_port: r.dst.port,
                seq: r.seq,
                ack: r.ack,
                flags: Flags(r.flags),
                window: 0,
                options: TcpOptions::default(),
            };
            let len = wire::emit_tcp(&h, &[], self.local.addr, r.dst.addr, buf).ok()?;
            self.stats.resets_sent += 1;
            self.stats.segments_sent += 1;
            return Some(Transmit {
                len,
                src: self.local.addr,
                dst: r.dst.addr,
            });
        }
        match self.state {
            State::Closed | State::Listen | State::TimeWait if !self.ack_now => return None,
            State::Closed | State::Listen => return None,
            State::SynSent | State::SynReceived => {
                if self.syn_pending {
                    return self.send_syn(now, buf);
                }
                if self.state == State::SynSent {
                    return None;
                }
            }
            _ => {}
        }
        if now >= self.next_send_at {
            if let Some(next) = self.next_data() {
                return self.send_data(now, next, buf);
            }
        }
        if self.probe_pending {
            self.probe_pending = false;
            return self.emit(now, self.snd_una.wrapping_sub(1), Flags::ACK, None, buf);
        }
        if self.ack_now {
            return self.emit(now, self.snd_nxt, Flags::ACK, None, buf);
        }
        None
    }

    fn send_syn(&mut self, now: Nanos, buf: &mut [u8]) -> Option<Transmit> {
        let flags = if self.state == State::SynReceived {
            Flags::SYN | Flags::ACK
        } else {
            Flags::SYN
        };
        let t = self.emit(now, self.iss, flags, None, buf)?;
        self.syn_pending = false;
        self.snd_nxt = self.iss.wrapping_add(1);
        self.syn_transmissions += 1;
        if self.syn_transmissions > 1 {
            self.stats.syn_retransmits += 1;
        }
        self.syn_sent_at = now;
        self.arm_rto(now);
        Some(t)
    }

    fn send_data(&mut self, now: Nanos, next: Next, buf: &mut [u8]) -> Option<Transmit> {
        let (start, data_len, fin, idx) = match next {
            Next::Retransmit(i) => {
                let s = *self.scoreboard.get(i);
                let fin = s.flags & FIN != 0;
                (s.start, s.len() as usize - fin as usize, fin, Some(i))
            }
            Next::New { len, fin } => (self.snd_nxt, len, fin, None),
        };
        if idx.is_none() && self.scoreboard.is_empty() {
            // RFC 5681 §4.1: restart window after an idle period longer than the RTO.
            if self.cfg.slow_start_after_idle
                && self
                    .last_send_at
                    .is_some_and(|t| now.saturating_sub(t) > self.rtt.rto())
            {
                let rw = crate::cc::initial_window(self.cfg.initial_window, self.smss);
                self.cc.on_idle_restart(now, rw);
                if !self.window_allows(data_len as u64 + fin as u64) {
                    return None;
                }
            }
            // Delivery-rate estimation: a new flight starts now.
            self.first_sent_at = now;
            self.delivered_at = now;
        }
        let mut flags = Flags::ACK;
        if fin {
            flags |= Flags::FIN;
        }
        // PSH on new data as Linux sends it (push.rs): the segments built at
        // one instant go out as skbs of `run` segments, the last of each
        // full one pushed; so is the one that carries the last byte written
        // so far (tcp_push; RFC 9293 §3.9.1).
        if idx.is_none() && data_len > 0 {
            if now != self.push_burst_at {
                let cwnd = self.cc.window();
                let slow_start = cwnd < self.cc.ssthresh();
                self.push_burst_at = now;
                self.segs_since_push = 0;
                self.push_run =
                    push::segments_per_push(cwnd, self.rtt.srtt(), slow_start, self.smss);
            }
            self.segs_since_push += 1;
            let written_end = self.buf_seq.wrapping_add(self.send_buf.len() as u32);
            if self.segs_since_push >= self.push_run
                || start.wrapping_add(data_len as u32) == written_end
            {
                flags |= Flags::PSH;
                self.segs_since_push = 0;
            }
        }
        let offset = seq::diff(start, self.buf_seq) as usize;
        let t = self.emit(now, start, flags, Some((offset, data_len)), buf)?;
        let seg_len = data_len as u32 + fin as u32;
        match idx {
            Some(i) => {
                self.scoreboard.retransmitted(
                    i,
                    now,
                    self.delivered,
                    self.delivered_at,
                    self.first_sent_at,
                );
                self.stats.retransmissions += 1;
                self.stats.bytes_retransmitted += data_len as u64;
                if self.retransmit_now && self.recovery.is_some() {
                    self.stats.fast_retransmits += 1;
                }
                self.retransmit_now = false;
                if self.eifel_armed && self.eifel_ts.is_none() {
                    self.eifel_ts = Some(self.ts_val(now));
                }
            }
            None => {
                self.scoreboard.push(SentSeg {
                    start,
                    end: start.wrapping_add(seg_len),
                    sent_at: now,
                    delivered: self.delivered,
                    delivered_at: self.delivered_at,
                    first_sent_at: self.first_sent_at,
                    flags: if fin { FIN } else { 0 },
                });
                self.snd_nxt = start.wrapping_add(seg_len);
                self.stats.bytes_sent += data_len as u64;
                if fin {
                    self.fin_sent = true;
                    self.state = match self.state {
                        State::Established => State::FinWait1,
                        State::CloseWait => State::LastAck,
                        s => s,
                    };
                }
            }
        }
        if let Some(r) = self.recovery.as_mut() {
            r.prr.on_send(seg_len as u64);
        }
        if self.rto_at.is_none() || (idx.is_none() && self.scoreboard.len() == 1) {
            // RFC 6298 §5.1 (a persist timer gives way to the RTO).
            self.arm_rto(now);
        }
        self.last_send_at = Some(now);
        if let Some(rate) = self.cc.pacing_rate().filter(|&r| r > 0) {
            let gap = (t.len as u128 * SECONDS as u128 / rate as u128) as Nanos;
            self.next_send_at = now + gap;
        }
        Some(t)
    }

    fn sack_blocks(&self, opts: &mut TcpOptions) {
        if !self.sack_ok || self.ooo.is_empty() {
            return;
        }
        let max = if self.ts_ok { 3 } else { MAX_SACK_BLOCKS };
        let mut n = 0;
        let mut add = |opts: &mut TcpOptions, b: (u32, u32)| {
            if n < max && !opts.sack[..n].contains(&b) {
                opts.sack[n] = b;
                n += 1;
            }
        };
        for s in self.recent_ooo.iter().flatten() {
            if let Some(b) = self.ooo.containing(*s) {
                add(opts, b);
            }
        }
        for &b in self.ooo.as_slice().iter().rev() {
            add(opts, b);
        }
        opts.sack_len = n as u8;
    }

    /// Build and write one segment; `data` is (offset in the send buffer, length).
    fn emit(
        &mut self,
        now: Nanos,
        seq_no: u32,
        flags: u8,
        data: Option<(usize, usize)>,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        let syn = flags & Flags::SYN != 0;
        let mut o = TcpOptions::default();
        if syn {
            o.mss = Some(self.cfg.mss);
            let offering = self.state == State::SynSent;
            if self.cfg.window_scale && (offering || self.rcv_wscale > 0 || self.snd_wscale > 0) {
                o.window_scale = Some(self.rcv_wscale);
            }
            o.sack_permitted = if offering {
                self.cfg.sack
            } else {
                self.sack_ok
            };
            let ts = if offering {
                self.cfg.timestamps
            } else {
                self.ts_ok
            };
            if ts {
                o.timestamps = Some((self.ts_val(now), if offering { 0 } else { self.ts_recent }));
            }
        } else {
            if self.ts_ok {
                o.timestamps = Some((self.ts_val(now), self.ts_recent));
            }
            self.sack_blocks(&mut o);
        }
        let wnd = self.advertised_window();
        let window = if syn {
            wnd.min(65_535)
        } else {
            (wnd >> self.rcv_wscale).min(65_535)
        };
        let has_ack = flags & Flags::ACK != 0;
        let h = TcpHeader {
            src_port: self.local.port,
            dst_port: self.remote.port,
            seq: seq_no,
            ack: if has_ack { self.rcv_nxt } else { 0 },
            flags: Flags(flags),
            window: window as u16,
            options: o,
        };
        let (offset, len) = data.unwrap_or((0, 0));
        let hlen = wire::emit_tcp_header(&h, buf, len).ok()?;
        self.send_buf.read_at(offset, &mut buf[hlen..hlen + len]);
        wire::finish_tcp(self.local.addr, self.remote.addr, &mut buf[..hlen + len]);
        if has_ack {
            self.last_ack_sent = self.rcv_nxt;
            self.last_wnd_sent = if syn {
                window
            } else {
                window << self.rcv_wscale
            };
            self.ack_now = false;
            self.segs_unacked = 0;
            self.delack_at = None;
        }
        self.stats.segments_sent += 1;
        Some(Transmit {
            len: hlen + len,
            src: self.local.addr,
            dst: self.remote.addr,
        })
    }
}
