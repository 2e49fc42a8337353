//! Applications that drive a transport through a small trait: bulk
//! (saturating), on-off, stream at a rate, and a fixed-size transfer; and a
//! sink that reads, and measures one-way delay from sender timestamps in the
//! payload.
//!
//! Payload framing: the data is a sequence of messages, each starting with
//! a 12-byte header (u32 message length including the header, u64 send time
//! in nanoseconds, both big-endian) followed by filler. The send time is
//! when the message's first byte was handed to the transport; the sink
//! takes the one-way delay when the message's last byte is read, so it
//! includes queueing, retransmission and head-of-line blocking as the
//! application sees them.

use crate::tcp::Connection;
use crate::Nanos;

/// Message header length.
pub const MESSAGE_HEADER: usize = 12;

/// What an application needs from a transport.
pub trait Transport {
    /// Queue bytes; returns how many were taken.
    fn send(&mut self, data: &[u8]) -> usize;
    /// Room for `send` now.
    fn send_capacity(&self) -> usize;
    /// Read in-order bytes.
    fn recv(&mut self, out: &mut [u8]) -> usize;
    /// No more data from this side.
    fn close(&mut self);
    /// The transport can carry data (the handshake is done).
    fn is_established(&self) -> bool;
    /// The peer closed and everything it sent was read.
    fn peer_closed(&self) -> bool;
    /// Everything queued was acknowledged.
    fn all_acked(&self) -> bool;
}

impl Transport for Connection {
    fn send(&mut self, data: &[u8]) -> usize {
        Connection::send(self, data)
    }
    fn send_capacity(&self) -> usize {
        Connection::send_capacity(self)
    }
    fn recv(&mut self, out: &mut [u8]) -> usize {
        Connection::recv(self, out)
    }
    fn close(&mut self) {
        Connection::close(self)
    }
    fn is_established(&self) -> bool {
        Connection::is_established(self)
    }
    fn peer_closed(&self) -> bool {
        Connection::peer_closed(self)
    }
    fn all_acked(&self) -> bool {
        self.send_queue() == 0 && self.snd_una() == self.snd_nxt()
    }
}

/// An application: called after every event that may concern it, and at its `poll_at`.
pub trait Application {
    fn poll(&mut self, now: Nanos, t: &mut dyn Transport);
    /// When it next wants `poll` regardless of the transport.
    fn poll_at(&self) -> Option<Nanos>;
    /// It has nothing more to do.
    fn is_done(&self) -> bool;
}

/// Writes framed messages, carrying a partly written one over.
#[derive(Clone, Debug)]
struct MessageWriter {
    size: usize,
    /// The message being written and how much of it went out.
    current: [u8; MESSAGE_HEADER],
    current_len: usize,
    written: usize,
    /// Bytes handed to the transport in total.
    total: u64,
    messages: u64,
}

const FILLER: [u8; 4096] = [0x5a; 4096];

impl MessageWriter {
    fn new(size: usize) -> MessageWriter {
        MessageWriter {
            size: size.max(MESSAGE_HEADER),
            current: [0; MESSAGE_HEADER],
            current_len: 0,
            written: 0,
            total: 0,
            messages: 0,
        }
    }

    fn busy(&self) -> bool {
        self.written < self.current_len
    }

    /// Finish the current message; false if the transport is full first.
    fn flush(&mut self, t: &mut dyn Transport) -> bool {
        while self.written < self.current_len {
            let n = if self.written < MESSAGE_HEADER {
                t.send(&self.current[self.written..])
            } else {
                let left = (self.current_len - self.written).min(FILLER.len());
                t.send(&FILLER[..left])
            };
            if n == 0 {
                return false;
            }
            self.written += n;
            self.total += n as u64;
        }
        true
    }

    /// Start a message of `len` bytes sent at `now` and write what fits.
    fn start(&mut self, now: Nanos, len: usize, t: &mut dyn Transport) -> bool {
        let len = len.max(MESSAGE_HEADER);
        self.current[..4].copy_from_slice(&(len as u32).to_be_bytes());
        self.current[4..].copy_from_slice(&now.to_be_bytes());
        self.current_len = len;
        self.written = 0;
        self.messages += 1;
        self.flush(t)
    }
}

/// Keeps the transport's send buffer full.
#[derive(Clone, Debug)]
pub struct Bulk {
    w: MessageWriter,
}

impl Bulk {
    pub fn new(message_size: usize) -> Bulk {
        Bulk {
            w: MessageWriter::new(message_size),
        }
    }
    pub fn bytes_written(&self) -> u64 {
        self.w.total
    }
}

impl Application for Bulk {
    fn poll(&mut self, now: Nanos, t: &mut dyn Transport) {
        if !t.is_established() || !self.w.flush(t) {
            return;
        }
        while t.send_capacity() > 0 {
            let size = self.w.size;
            if !self.w.start(now, size, t) {
                break;
            }
        }
    }
    fn poll_at(&self) -> Option<Nanos> {
        None
    }
    fn is_done(&self) -> bool {
        false
    }
}

/// Bulk sending for `on`, silent for `off`, repeating from the moment the
/// transport is established (e.g. 1 s on, 5 s idle).
#[derive(Clone, Debug)]
pub struct OnOff {
    w: MessageWriter,
    on: Nanos,
    off: Nanos,
    start: Option<Nanos>,
    last_now: Nanos,
}

impl OnOff {
    pub fn new(on: Nanos, off: Nanos, message_size: usize) -> OnOff {
        OnOff {
            w: MessageWriter::new(message_size),
            on: on.max(1),
            off,
            start: None,
            last_now: 0,
        }
    }
    pub fn bytes_written(&self) -> u64 {
        self.w.total
    }
    fn phase(&self, now: Nanos) -> (bool, Nanos) {
        let start = self.start.unwrap_or(now);
        let period = self.on + self.off;
        let into = (now - start) % period;
        let base = now - into;
        if into < self.on {
            (true, base + self.on)
        } else {
            (false, base + period)
        }
    }
}

impl Application for OnOff {
    fn poll(&mut self, now: Nanos, t: &mut dyn Transport) {
        self.last_now = now;
        if !t.is_established() {
            return;
        }
        self.start.get_or_insert(now);
        let (on, _) = self.phase(now);
        // A message started in an on period is finished even if it runs over.
        if !self.w.flush(t) || !on {
            return;
        }
        while t.send_capacity() > 0 {
            let size = self.w.size;
            if !self.w.start(now, size, t) {
                break;
            }
        }
    }
    fn poll_at(&self) -> Option<Nanos> {
        self.start.map(|_| self.phase(self.last_now).1)
    }
    fn is_done(&self) -> bool {
        false
    }
}

/// Application-limited sending at a fixed rate: one message each time the
/// rate has earned its bytes.
#[derive(Clone, Debug)]
pub struct Stream {
    w: MessageWriter,
    rate_bps: u64,
    start: Option<Nanos>,
    /// Messages started so far.
    released: u64,
}

impl Stream {
    pub fn new(rate_bps: u64, message_size: usize) -> Stream {
        Stream {
            w: MessageWriter::new(message_size),
            rate_bps: rate_bps.max(1),
            start: None,
            released: 0,
        }
    }
    pub fn bytes_written(&self) -> u64 {
        self.w.total
    }
    /// When message number `k` (from 0) is due.
    fn due(&self, k: u64) -> Option<Nanos> {
        let bits = k as u128 * self.w.size as u128 * 8;
        self.start
            .map(|s| s + (bits * 1_000_000_000 / self.rate_bps as u128) as Nanos)
    }
}

impl Application for Stream {
    fn poll(&mut self, now: Nanos, t: &mut dyn Transport) {
        if !t.is_established() {
            return;
        }
        self.start.get_or_insert(now);
        if !self.w.flush(t) {
            return;
        }
        while self.due(self.released).is_some_and(|d| d <= now) {
            self.released += 1;
            let size = self.w.size;
            if !self.w.start(now, size, t) {
                break;
            }
        }
    }
    fn poll_at(&self) -> Option<Nanos> {
        if self.w.busy() {
            return None; // waits for the transport, not the clock
        }
        self.due(self.released)
    }
    fn is_done(&self) -> bool {
        false
    }
}

/// Send `total` bytes in messages of `message_size`, then close; the flow
/// completes when everything (and the FIN) is acknowledged.
#[derive(Clone, Debug)]
pub struct Transfer {
    w: MessageWriter,
    total: u64,
    started_at: Option<Nanos>,
    closed: bool,
    completed_at: Option<Nanos>,
}

impl Transfer {
    /// `total` bytes.
    pub fn bytes(total: u64, message_size: usize) -> Transfer {
        Transfer {
            w: MessageWriter::new(message_size),
            total,
            started_at: None,
            closed: false,
            completed_at: None,
        }
    }
    /// `n` messages of `size` bytes each (e.g. 1,500 packets' worth).
    pub fn packets(n: u64, size: usize) -> Transfer {
        Transfer::bytes(n * size.max(MESSAGE_HEADER) as u64, size)
    }
    pub fn bytes_written(&self) -> u64 {
        self.w.total
    }
    /// Flow completion time: from the first byte handed over to the last acknowledged.
    pub fn completion_time(&self) -> Option<Nanos> {
        Some(self.completed_at? - self.started_at?)
    }
}

impl Application for Transfer {
    fn poll(&mut self, now: Nanos, t: &mut dyn Transport) {
        if self.closed {
            if self.completed_at.is_none() && t.all_acked() {
                self.completed_at = Some(now);
            }
            return;
        }
        if !t.is_established() {
            return;
        }
        self.started_at.get_or_insert(now);
        if !self.w.flush(t) {
            return;
        }
        while self.w.total < self.total && t.send_capacity() > 0 {
            let left = (self.total - self.w.total) as usize;
            // The last message takes the rest (a header at least).
            let len = if left < self.w.size + MESSAGE_HEADER {
                left
            } else {
                self.w.size
            };
            if !self.w.start(now, len, t) {
                return;
            }
        }
        if self.w.total >= self.total && !self.w.busy() {
            t.close();
            self.closed = true;
        }
    }
    fn poll_at(&self) -> Option<Nanos> {
        None
    }
    fn is_done(&self) -> bool {
        self.completed_at.is_some()
    }
}

/// One-way delay statistics (nanoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DelayStats {
    pub count: u64,
    pub min: Nanos,
    pub max: Nanos,
    pub sum: u128,
}

impl DelayStats {
    /// Count one delay.
    pub fn add(&mut self, d: Nanos) {
        if self.count == 0 || d < self.min {
            self.min = d;
        }
        self.max = self.max.max(d);
        self.sum += d as u128;
        self.count += 1;
    }
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }
}

/// Reads everything, parses the messages, measures one-way delay and
/// goodput; closes its side when the peer has closed.
#[derive(Clone, Debug, Default)]
pub struct Sink {
    header: [u8; MESSAGE_HEADER],
    header_got: usize,
    /// Bytes of the current message still to skip.
    remaining: usize,
    sent_at: Nanos,
    pub bytes: u64,
    pub messages: u64,
    pub first_byte_at: Option<Nanos>,
    pub last_byte_at: Option<Nanos>,
    pub delay: DelayStats,
    /// (receive time, one-way delay) per message, when recording.
    pub delays: Vec<(Nanos, Nanos)>,
    record: bool,
    /// A header with a length below 12 was seen: the stream is not framed.
    pub framing_errors: u64,
    pub closed: bool,
    /// Where `poll` reads to: allocated at the first poll and reused, so a
    /// poll does not zero 16 KiB of stack each time (it runs per event).
    scratch: Scratch,
}

/// The read buffer of a [`Sink`] (its contents are not state).
#[derive(Clone, Default)]
struct Scratch(Vec<u8>);

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scratch({} bytes)", self.0.len())
    }
}

/// Bytes a [`Sink`] reads per call.
const SINK_READ: usize = 16 * 1024;

impl Sink {
    /// `record`: keep every message's one-way delay (else only the statistics).
    pub fn new(record: bool) -> Sink {
        Sink {
            record,
            ..Sink::default()
        }
    }

    fn consume(&mut self, now: Nanos, mut data: &[u8]) {
        while !data.is_empty() {
            if self.remaining == 0 {
                let take = (MESSAGE_HEADER - self.header_got).min(data.len());
                self.header[self.header_got..self.header_got + take].copy_from_slice(&data[..take]);
                self.header_got += take;
                data = &data[take..];
                if self.header_got < MESSAGE_HEADER {
                    return;
                }
                self.header_got = 0;
                let len = u32::from_be_bytes([
                    self.header[0],
                    self.header[1],
                    self.header[2],
                    self.header[3],
                ]) as usize;
                let mut ts = [0u8; 8];
                ts.copy_from_slice(&self.header[4..]);
                self.sent_at = u64::from_be_bytes(ts);
                if len < MESSAGE_HEADER {
                    self.framing_errors += 1;
                    continue;
                }
                self.remaining = len - MESSAGE_HEADER;
                if self.remaining == 0 {
                    self.message_done(now);
                }
            } else {
                let take = self.remaining.min(data.len());
                self.remaining -= take;
                data = &data[take..];
                if self.remaining == 0 {
                    self.message_done(now);
                }
            }
        }
    }

    fn message_done(&mut self, now: Nanos) {
        self.messages += 1;
        let d = now.saturating_sub(self.sent_at);
        self.delay.add(d);
        if self.record {
            self.delays.push((now, d));
        }
    }

    /// Goodput in bits per second between the first and last byte read.
    pub fn goodput_bps(&self) -> Option<f64> {
        let (a, b) = (self.first_byte_at?, self.last_byte_at?);
        (b > a).then(|| self.bytes as f64 * 8e9 / (b - a) as f64)
    }
}

impl Application for Sink {
    fn poll(&mut self, now: Nanos, t: &mut dyn Transport) {
        let mut buf = std::mem::take(&mut self.scratch.0);
        if buf.is_empty() {
            buf = vec![0; SINK_READ];
        }
        loop {
            let n = t.recv(&mut buf);
            if n == 0 {
                break;
            }
            self.first_byte_at.get_or_insert(now);
            self.last_byte_at = Some(now);
            self.bytes += n as u64;
            self.consume(now, &buf[..n]);
        }
        self.scratch.0 = buf;
        if t.peer_closed() && !self.closed {
            t.close();
            self.closed = true;
        }
    }
    fn poll_at(&self) -> Option<Nanos> {
        None
    }
    fn is_done(&self) -> bool {
        self.closed
    }
}
