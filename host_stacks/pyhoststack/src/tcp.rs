//! `TcpConfig` and `TcpConnection`: the binding of one sans-IO TCP
//! connection of crate ratelab-stack (host_stacks/stack). Time is integer
//! nanoseconds (it must not go backwards; an earlier time counts as the
//! latest one). Segments are TCP bytes (the IPv4 payload) with
//! `handle_segment` / `poll_transmit`, or whole IPv4 packets behind an
//! optional link-layer header with `handle_packet` / `poll_packet` (the
//! raw-I/O driver's path: the IPv4 header is parsed, checked and built here,
//! so a packet costs one call).

mod raw_io;

use std::net::Ipv4Addr;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use ratelab_stack::cc::CcKind;
use ratelab_stack::tcp::{Config, Connection, Endpoint, RtoFormula, SendBufferPolicy, State};
use ratelab_stack::wire::PROTO_TCP;
use ratelab_stack::{Nanos, MILLIS};

const IPV4_HEADER_LEN: usize = 20;
const TTL: u8 = 64;
/// Don't Fragment: segments fit the MSS, which fits the interface MTU.
const IPV4_DF: u16 = 0x4000;

/// An int field in 0..=max, or ValueError("FIELD: must be ...").
fn field_int(value: &Bound<'_, PyAny>, field: &str, max: u64, what: &str) -> PyResult<u64> {
    match value.extract::<i128>() {
        Ok(v) if (0..=i128::from(max)).contains(&v) => Ok(v as u64),
        Ok(v) => Err(PyValueError::new_err(format!(
            "{field}: must be {what}, got {v}"
        ))),
        Err(_) => Err(PyValueError::new_err(format!(
            "{field}: must be a whole number ({what}), got {}",
            value.repr().map_or("?".to_string(), |r| r.to_string())
        ))),
    }
}

fn endpoint(field: &str, value: (String, i64)) -> PyResult<Endpoint> {
    let addr: Ipv4Addr = value.0.parse().map_err(|_| {
        PyValueError::new_err(format!("{field}: not an IPv4 address: {:?}", value.0))
    })?;
    if !(1..=65_535).contains(&value.1) {
        return Err(PyValueError::new_err(format!(
            "{field}: port must be 1 to 65535, got {}",
            value.1
        )));
    }
    Ok(Endpoint {
        addr: addr.octets(),
        port: value.1 as u16,
    })
}

fn addr(field: &str, text: &str) -> PyResult<[u8; 4]> {
    text.parse::<Ipv4Addr>()
        .map(|a| a.octets())
        .map_err(|_| PyValueError::new_err(format!("{field}: not an IPv4 address: {text:?}")))
}

/// The names Linux gives the states (include/net/tcp_states.h, as TCP_INFO
/// readers print them), so kernel and ratelab flows read alike.
fn state_name(s: State) -> &'static str {
    match s {
        State::Closed => "CLOSE",
        State::Listen => "LISTEN",
        State::SynSent => "SYN_SENT",
        State::SynReceived => "SYN_RECV",
        State::Established => "ESTABLISHED",
        State::FinWait1 => "FIN_WAIT1",
        State::FinWait2 => "FIN_WAIT2",
        State::CloseWait => "CLOSE_WAIT",
        State::Closing => "CLOSING",
        State::LastAck => "LAST_ACK",
        State::TimeWait => "TIME_WAIT",
    }
}

/// RFC 1071 Internet checksum of an IPv4 header (even length).
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks_exact(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Settings of one connection (crate `tcp::Config`), checked at construction.
#[pyclass(module = "ratelab_hoststack", frozen)]
pub struct TcpConfig {
    core: Config,
}

#[pymethods]
impl TcpConfig {
    #[new]
    #[pyo3(signature = (cc = "newreno", iw = None, initial_rto_ns = None, min_rto_ns = None,
        max_rto_ns = None, mss = None, sack = true, timestamps = true, window_scale = true,
        delayed_ack = true, delayed_ack_ns = None, prr = false, send_buffer = None,
        recv_buffer = None, rto_formula = "rfc6298", hystart = false,
        send_buffer_policy = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        cc: &str,
        iw: Option<&Bound<'_, PyAny>>,
        initial_rto_ns: Option<&Bound<'_, PyAny>>,
        min_rto_ns: Option<&Bound<'_, PyAny>>,
        max_rto_ns: Option<&Bound<'_, PyAny>>,
        mss: Option<&Bound<'_, PyAny>>,
        sack: bool,
        timestamps: bool,
        window_scale: bool,
        delayed_ack: bool,
        delayed_ack_ns: Option<&Bound<'_, PyAny>>,
        prr: bool,
        send_buffer: Option<&Bound<'_, PyAny>>,
        recv_buffer: Option<&Bound<'_, PyAny>>,
        rto_formula: &str,
        hystart: bool,
        send_buffer_policy: &str,
    ) -> PyResult<Self> {
        let mut core = Config {
            cc: cc
                .parse::<CcKind>()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
            sack,
            timestamps,
            window_scale,
            prr,
            hystart,
            rto_formula: rto_formula
                .parse::<RtoFormula>()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
            send_buffer_policy: send_buffer_policy
                .parse::<SendBufferPolicy>()
                .map_err(|e| PyValueError::new_err(format!("send_buffer_policy: {e}")))?,
            ..Config::default()
        };
        let time = "a time in ns >= 0";
        if let Some(v) = iw {
            core.initial_window = field_int(v, "iw", u32::MAX.into(), "1 to 1000 segments")? as u32;
        }
        if let Some(v) = initial_rto_ns {
            core.initial_rto = field_int(v, "initial_rto", u64::MAX >> 1, time)?;
        }
        if let Some(v) = min_rto_ns {
            core.min_rto = field_int(v, "min_rto", u64::MAX >> 1, time)?;
        }
        if let Some(v) = max_rto_ns {
            core.max_rto = field_int(v, "max_rto", u64::MAX >> 1, time)?;
        } else {
            // The default maximum (60 s) follows a larger initial or minimum RTO.
            core.max_rto = core.max_rto.max(core.initial_rto).max(core.min_rto);
        }
        if let Some(v) = mss {
            core.mss = field_int(v, "mss", u16::MAX.into(), "88 to 65495 bytes")? as u16;
        }
        core.delayed_ack = match (delayed_ack, delayed_ack_ns) {
            (false, _) => None,
            (true, Some(v)) => Some(field_int(v, "delayed_ack", u64::MAX >> 1, time)?),
            (true, None) => Some(40 * MILLIS),
        };
        let buf = "2*mss to 1 GiB";
        if let Some(v) = send_buffer {
            core.send_buffer = field_int(v, "send_buffer", 1 << 40, buf)? as usize;
        }
        if let Some(v) = recv_buffer {
            core.recv_buffer = field_int(v, "recv_buffer", 1 << 40, buf)? as usize;
        }
        core.validate()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(TcpConfig { core })
    }

    #[getter]
    fn cc(&self) -> &'static str {
        match self.core.cc {
            CcKind::Reno => "reno",
            CcKind::NewReno => "newreno",
            CcKind::Cubic(_) => "cubic",
            CcKind::Vegas(_) => "vegas",
        }
    }
    #[getter]
    fn iw(&self) -> u32 {
        self.core.initial_window
    }
    #[getter]
    fn initial_rto_ns(&self) -> u64 {
        self.core.initial_rto
    }
    #[getter]
    fn min_rto_ns(&self) -> u64 {
        self.core.min_rto
    }
    #[getter]
    fn max_rto_ns(&self) -> u64 {
        self.core.max_rto
    }
    #[getter]
    fn rto_formula(&self) -> &'static str {
        self.core.rto_formula.name()
    }
    #[getter]
    fn mss(&self) -> u16 {
        self.core.mss
    }
    #[getter]
    fn sack(&self) -> bool {
        self.core.sack
    }
    #[getter]
    fn timestamps(&self) -> bool {
        self.core.timestamps
    }
    #[getter]
    fn delayed_ack_ns(&self) -> Option<u64> {
        self.core.delayed_ack
    }
    #[getter]
    fn prr(&self) -> bool {
        self.core.prr
    }
    #[getter]
    fn hystart(&self) -> bool {
        self.core.hystart
    }
    #[getter]
    fn send_buffer(&self) -> usize {
        self.core.send_buffer
    }
    #[getter]
    fn send_buffer_policy(&self) -> String {
        self.core.send_buffer_policy.to_string()
    }
    #[getter]
    fn recv_buffer(&self) -> usize {
        self.core.recv_buffer
    }
}

/// One TCP connection. `unsendable`: the congestion controller is a plain
/// trait object; a connection stays on the thread that made it.
#[pyclass(module = "ratelab_hoststack", unsendable)]
pub struct TcpConnection {
    core: Connection,
    /// Output scratch: link header, IPv4 header, the largest segment.
    buf: Vec<u8>,
    link_header: Vec<u8>,
    ip_id: u16,
    /// The configured MSS (sizes `buf`).
    mss: usize,
    /// Packets for this connection refused at the IPv4 layer (bad header,
    /// checksum or length, fragments); TCP-level ones are the crate's `malformed`.
    ipv4_malformed: u64,
    /// `run_raw`'s receive buffer (allocated on its first call).
    rx: Vec<u8>,
    /// Frames `run_raw` could not send: the device queue was full.
    local_drops: u64,
    /// How the last `run_raw` call's thread was scheduled (sys.rs `LowLatency`).
    scheduling: Option<&'static str>,
}

/// A `&mut` handed to `Python::detach`'s closure, which runs on this same
/// thread (the GIL released meanwhile): the connection never changes thread.
struct SameThread<T>(T);
// SAFETY: see above; the value is only used by the thread that made it.
unsafe impl<T> Send for SameThread<T> {}
impl<T> SameThread<T> {
    fn into_inner(self) -> T {
        self.0
    }
}

impl TcpConnection {
    fn wrap(core: Connection, mss: u16) -> TcpConnection {
        TcpConnection {
            core,
            buf: vec![0; IPV4_HEADER_LEN + 60 + usize::from(mss)],
            link_header: Vec::new(),
            ip_id: 0,
            mss: usize::from(mss),
            ipv4_malformed: 0,
            rx: Vec::new(),
            local_drops: 0,
            scheduling: None,
        }
    }

    /// Whether the IPv4 packet is addressed to this connection (dst address,
    /// TCP, dst port); counted as malformed when it is but the IPv4 layer is
    /// broken. Hands the segment to the connection.
    fn handle_ipv4(&mut self, now: Nanos, p: &[u8]) -> bool {
        let local = self.core.local();
        if p.len() < IPV4_HEADER_LEN || p[0] >> 4 != 4 || p[16..20] != local.addr {
            return false;
        }
        if p[9] != PROTO_TCP {
            return false;
        }
        let ihl = usize::from(p[0] & 0x0F) * 4;
        // Ports first: a segment for another port is not ours, even if broken.
        if p.len() >= ihl + 4 && ihl >= IPV4_HEADER_LEN {
            if u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]) != local.port {
                return false;
            }
        } else {
            self.ipv4_malformed += 1;
            return true;
        }
        let total = usize::from(u16::from_be_bytes([p[2], p[3]]));
        let frag = u16::from_be_bytes([p[6], p[7]]);
        // Ethernet pads short frames, so the buffer may be longer than the packet.
        if total < ihl || total > p.len() || frag & 0x3FFF != 0 || ipv4_checksum(&p[..ihl]) != 0 {
            self.ipv4_malformed += 1;
            return true;
        }
        let src = [p[12], p[13], p[14], p[15]];
        self.core.handle_segment(now, src, &p[ihl..total]);
        true
    }

    /// `handle_packet` without Python: a frame (link header + IPv4 packet).
    pub(crate) fn handle_frame(&mut self, now: Nanos, frame: &[u8]) -> bool {
        match frame.get(self.link_header.len()..) {
            Some(p) => self.handle_ipv4(now, p),
            None => false,
        }
    }

    /// `poll_packet` without Python: the next frame is built in `buf`; its
    /// length, or None if nothing is due. Runs timers.
    pub(crate) fn build_packet(&mut self, now: Nanos) -> Option<usize> {
        let at = self.link_header.len() + IPV4_HEADER_LEN;
        let t = self.core.poll_transmit(now, &mut self.buf[at..])?;
        let ip = &mut self.buf[self.link_header.len()..at];
        let total = (IPV4_HEADER_LEN + t.len) as u16;
        ip[0] = 0x45;
        ip[1] = 0;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
        ip[6..8].copy_from_slice(&IPV4_DF.to_be_bytes());
        ip[8] = TTL;
        ip[9] = PROTO_TCP;
        ip[10..12].copy_from_slice(&[0, 0]);
        ip[12..16].copy_from_slice(&t.src);
        ip[16..20].copy_from_slice(&t.dst);
        let sum = ipv4_checksum(ip);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        self.ip_id = self.ip_id.wrapping_add(1);
        let n = self.link_header.len();
        self.buf[..n].copy_from_slice(&self.link_header);
        Some(at + t.len)
    }
}

#[pymethods]
impl TcpConnection {
    /// Active open from `local` (ADDR, PORT) to `remote`: the SYN goes out on
    /// the next poll. `iss` is the initial sequence number.
    #[staticmethod]
    fn connect(
        config: &TcpConfig,
        local: (String, i64),
        remote: (String, i64),
        iss: u32,
        now_ns: u64,
    ) -> PyResult<TcpConnection> {
        let (l, r) = (endpoint("local", local)?, endpoint("remote", remote)?);
        let core = Connection::connect(config.core.clone(), l, r, iss, now_ns)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(TcpConnection::wrap(core, config.core.mss))
    }

    /// Passive open: wait for one SYN to `local` (ADDR, PORT).
    #[staticmethod]
    fn listen(
        config: &TcpConfig,
        local: (String, i64),
        iss: u32,
        now_ns: u64,
    ) -> PyResult<TcpConnection> {
        let l = endpoint("local", local)?;
        let core = Connection::listen(config.core.clone(), l, iss, now_ns)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(TcpConnection::wrap(core, config.core.mss))
    }

    /// A TCP segment (IPv4 payload) from `src` (dotted quad). Malformed
    /// segments are counted (`stats()["malformed"]`) and dropped.
    fn handle_segment(&mut self, now_ns: u64, src: &str, segment: &[u8]) -> PyResult<()> {
        let src = addr("src", src)?;
        self.core.handle_segment(now_ns, src, segment);
        Ok(())
    }

    /// The next TCP segment to send (IPv4 payload), None if nothing is due.
    /// Also runs expired timers.
    fn poll_transmit<'py>(&mut self, py: Python<'py>, now_ns: u64) -> Option<Bound<'py, PyBytes>> {
        let t = self.core.poll_transmit(now_ns, &mut self.buf)?;
        Some(PyBytes::new(py, &self.buf[..t.len]))
    }

    /// Bytes put in front of every `poll_packet` result and skipped by
    /// `handle_packet` (an Ethernet header: dst MAC, src MAC, type 0x0800).
    fn set_link_header(&mut self, header: &[u8]) {
        self.link_header = header.to_vec();
        self.buf
            .resize(header.len() + IPV4_HEADER_LEN + 60 + self.mss, 0);
    }

    /// A frame (link header + IPv4 packet) from the wire. True if it was
    /// for this connection (its address, TCP, its port): then it was handled
    /// or, if malformed, counted and dropped. False: not ours, ignored.
    fn handle_packet(&mut self, now_ns: u64, frame: &[u8]) -> bool {
        self.handle_frame(now_ns, frame)
    }

    /// The next frame to send: link header, IPv4 header (DF, TTL 64,
    /// checksum) and TCP segment; None if nothing is due. Runs timers.
    fn poll_packet<'py>(&mut self, py: Python<'py>, now_ns: u64) -> Option<Bound<'py, PyBytes>> {
        let len = self.build_packet(now_ns)?;
        Some(PyBytes::new(py, &self.buf[..len]))
    }

    /// Run the connection on the AF_PACKET socket `fd` (bound, filtered to
    /// this connection, non-blocking; frames carry the link header) with the
    /// GIL released: each frame read is handled at its own clock reading
    /// (CLOCK_MONOTONIC, as `time.monotonic_ns()`) and whatever it lets out
    /// is sent at once; timers run when due. The application's part: up to
    /// `write_budget` bytes of zeros are written while fewer than
    /// `write_lowat` wait unsent. Returns (why, bytes written, time of the
    /// last write or None) when the clock reaches `until_ns` ("deadline":
    /// nothing at or after it was handled), the state or `peer_closed`
    /// changes ("state"), the budget is spent ("written"), a signal came
    /// ("signal": its Python handler has run when this returns), or
    /// `stop_fd` is readable ("stopped"). OSError if the socket fails.
    #[pyo3(signature = (fd, until_ns, *, stop_fd = None, write_budget = 0, write_lowat = 0))]
    fn run_raw(
        &mut self,
        py: Python<'_>,
        fd: i32,
        until_ns: u64,
        stop_fd: Option<i32>,
        write_budget: u64,
        write_lowat: usize,
    ) -> PyResult<(&'static str, u64, Option<u64>)> {
        if fd < 0 || stop_fd.is_some_and(|f| f < 0) {
            return Err(PyValueError::new_err(
                "fd and stop_fd must be open file descriptors (>= 0)",
            ));
        }
        let run = raw_io::Run {
            fd,
            stop_fd,
            until: until_ns,
            write_budget,
            write_lowat,
        };
        let mut rx = std::mem::take(&mut self.rx);
        rx.resize(raw_io::RX_BUFFER, 0);
        let this = SameThread((&mut *self, &mut rx[..]));
        let result = py.detach(move || {
            let (conn, rx) = this.into_inner();
            raw_io::run(conn, rx, &run)
        });
        self.rx = rx;
        let out = result.map_err(|f| PyOSError::new_err(f.errno_and_text()))?;
        self.scheduling = Some(out.scheduling.name());
        if out.why == raw_io::Return::Signal {
            py.check_signals()?;
        }
        Ok((out.why.name(), out.written, out.last_write))
    }

    /// How the last `run_raw` that returned ran: "fifo" (SCHED_FIFO 1, where
    /// the process may), "short-slice" (the scheduler's shortest slice) or
    /// "unchanged" (already another policy, or both refused); None before the
    /// first. Each call sets it and gives the thread's policy back on return.
    #[getter]
    fn scheduling(&self) -> Option<&'static str> {
        self.scheduling
    }

    /// Frames `run_raw` dropped because the device queue was full (ENOBUFS).
    #[getter]
    fn local_drops(&self) -> u64 {
        self.local_drops
    }

    /// Queue data; returns how many bytes were taken (0 when the buffer is
    /// full or the connection no longer sends).
    fn send(&mut self, data: &[u8]) -> usize {
        self.core.send(data)
    }

    /// Read in-order received data (at most `max_bytes`).
    fn recv<'py>(&mut self, py: Python<'py>, max_bytes: usize) -> Bound<'py, PyBytes> {
        let n = max_bytes.min(self.core.recv_ready());
        let core = &mut self.core;
        // recv_ready() bytes are there: the closure fills all n.
        PyBytes::new_with(py, n, |b| {
            core.recv(b);
            Ok(())
        })
        .expect("allocation of the received bytes")
    }

    /// Close the sending direction: a FIN follows the queued data.
    fn close(&mut self) {
        self.core.close();
    }

    /// Send a RST and forget the connection.
    fn abort(&mut self) {
        self.core.abort();
    }

    /// When to poll next (ns): now if something is due, else the earliest
    /// timer; None if nothing is pending.
    fn poll_at(&self) -> Option<u64> {
        self.core.poll_at()
    }

    /// The state as Linux names it ("SYN_SENT", "ESTABLISHED", "FIN_WAIT2", "CLOSE", ...).
    #[getter]
    fn state(&self) -> &'static str {
        state_name(self.core.state())
    }
    #[getter]
    fn is_established(&self) -> bool {
        self.core.is_established()
    }
    #[getter]
    fn is_closed(&self) -> bool {
        self.core.is_closed()
    }
    /// The peer closed its direction and all its data was read.
    #[getter]
    fn peer_closed(&self) -> bool {
        self.core.peer_closed()
    }
    #[getter]
    fn send_capacity(&self) -> usize {
        self.core.send_capacity()
    }
    /// Bytes written but not yet acknowledged.
    #[getter]
    fn send_queue(&self) -> usize {
        self.core.send_queue()
    }
    #[getter]
    fn recv_ready(&self) -> usize {
        self.core.recv_ready()
    }
    /// Congestion window, bytes.
    #[getter]
    fn cwnd(&self) -> u64 {
        self.core.cwnd()
    }
    /// Slow-start threshold, bytes; None before the first reduction.
    #[getter]
    fn ssthresh(&self) -> Option<u64> {
        let s = self.core.ssthresh();
        (s != u64::MAX).then_some(s)
    }
    /// Largest data payload per segment (MSS less the options always sent).
    #[getter]
    fn smss(&self) -> u64 {
        self.core.smss()
    }
    #[getter]
    fn bytes_in_flight(&self) -> u64 {
        self.core.bytes_in_flight()
    }
    #[getter]
    fn local(&self) -> (String, u16) {
        let e = self.core.local();
        (Ipv4Addr::from(e.addr).to_string(), e.port)
    }
    #[getter]
    fn remote(&self) -> (String, u16) {
        let e = self.core.remote();
        (Ipv4Addr::from(e.addr).to_string(), e.port)
    }

    /// Everything measured now: the crate's counters (`TcpStats`), with
    /// `malformed` including IPv4-level rejects, and the live state: state,
    /// cc, cwnd and ssthresh (bytes, ssthresh None before the first
    /// reduction), srtt/rttvar/min_rtt/latest_rtt/rto (ns, None before a
    /// sample), bytes_in_flight (RFC 6675 pipe), flight_size, segments_out,
    /// notsent_bytes, send_queue, delivery_rate and pacing_rate (B/s),
    /// in_recovery, backoff, sack and timestamps (negotiated).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.core;
        let s = c.stats();
        let d = PyDict::new(py);
        d.set_item("segments_sent", s.segments_sent)?;
        d.set_item("segments_received", s.segments_received)?;
        d.set_item("bytes_sent", s.bytes_sent)?;
        d.set_item("bytes_written", s.bytes_written)?;
        d.set_item("bytes_acked", s.bytes_acked)?;
        d.set_item("bytes_received", s.bytes_received)?;
        d.set_item("retransmissions", s.retransmissions)?;
        d.set_item("bytes_retransmitted", s.bytes_retransmitted)?;
        d.set_item("fast_retransmits", s.fast_retransmits)?;
        d.set_item("recoveries", s.recoveries)?;
        d.set_item("rtos", s.rtos)?;
        d.set_item("spurious_rtos", s.spurious_rtos)?;
        d.set_item("ssthresh_changes", s.ssthresh_changes)?;
        d.set_item("dup_acks", s.dup_acks)?;
        d.set_item("rtt_samples", s.rtt_samples)?;
        d.set_item("malformed", s.malformed + self.ipv4_malformed)?;
        d.set_item("dropped", s.dropped)?;
        d.set_item("resets_sent", s.resets_sent)?;
        d.set_item("resets_received", s.resets_received)?;
        d.set_item("challenge_acks", s.challenge_acks)?;
        d.set_item("syn_retransmits", s.syn_retransmits)?;
        d.set_item("zero_window_probes", s.zero_window_probes)?;
        d.set_item("state", state_name(c.state()))?;
        d.set_item("cc", c.cc().name())?;
        d.set_item("cwnd", c.cwnd())?;
        d.set_item("ssthresh", self.ssthresh())?;
        d.set_item("smss", c.smss())?;
        let rtt = c.rtt();
        d.set_item("srtt_ns", rtt.srtt())?;
        d.set_item("rttvar_ns", rtt.srtt().map(|_| rtt.rttvar()))?;
        d.set_item("min_rtt_ns", rtt.min_rtt())?;
        d.set_item("latest_rtt_ns", rtt.latest())?;
        d.set_item("rto_ns", rtt.rto())?;
        d.set_item("backoff", rtt.backoff())?;
        d.set_item("bytes_in_flight", c.bytes_in_flight())?;
        d.set_item("flight_size", c.flight_size())?;
        d.set_item("segments_out", c.scoreboard().len())?;
        d.set_item("notsent_bytes", self.notsent_bytes())?;
        d.set_item("send_queue", c.send_queue())?;
        d.set_item("delivery_rate", c.delivery_rate())?;
        d.set_item("pacing_rate", c.cc().pacing_rate())?;
        d.set_item("in_recovery", c.in_recovery())?;
        d.set_item("sack", c.sack_enabled())?;
        d.set_item("timestamps", c.timestamps_enabled())?;
        Ok(d)
    }

    /// Written bytes not yet sent once.
    #[getter]
    fn notsent_bytes(&self) -> usize {
        let c = &self.core;
        if matches!(c.state(), State::SynSent | State::SynReceived) {
            return c.send_queue(); // the flight is the SYN
        }
        // The flight may hold a FIN (one sequence number, no data).
        c.send_queue().saturating_sub(c.flight_size() as usize)
    }

    /// Check the crate's bookkeeping against a recount (tests).
    fn check_invariants(&self) -> PyResult<()> {
        self.core.check_invariants().map_err(PyValueError::new_err)
    }
}
