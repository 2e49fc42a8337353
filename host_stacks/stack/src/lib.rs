//! Sans-IO transport state machines for ratelab (the smoltcp / quinn-proto
//! shape): no clock, no socket, no allocation per packet on the fast path.
//! Time comes in as integer nanoseconds ([`Nanos`], it must not go
//! backwards), datagrams come in as bytes, datagrams go out into the
//! caller's buffer, and `poll_at()` says when the machine next needs a call.
//!
//! - [`wire`]: TCP and UDP header codecs with the IPv4 pseudo-header checksum.
//! - [`tcp`]: one TCP connection (handshake, data, FIN, RST, SACK, RFC 6675
//!   loss recovery, RFC 6298 RTO, RFC 7323 timestamps and window scaling).
//! - [`cc`]: the congestion-control trait; Reno, NewReno, Cubic, Vegas; PRR.
//! - [`app`]: applications (bulk, on-off, stream, transfer, sink) over a
//!   small transport trait; [`metrics`]: per-flow measurements.
//! - [`udp`]: UDP sources (CBR, Poisson, on-off) and a sink.
//! - [`testbed`]: a tiny deterministic two-endpoint simulator (tests, benchmark).

pub mod app;
pub mod cc;
pub mod metrics;
pub mod rng;
pub mod seq;
pub mod tcp;
pub mod testbed;
pub mod udp;
pub mod wire;

/// Time in integer nanoseconds since an arbitrary origin.
pub type Nanos = u64;

/// Nanoseconds per millisecond.
pub const MILLIS: Nanos = 1_000_000;
/// Nanoseconds per second.
pub const SECONDS: Nanos = 1_000_000_000;
