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
//!
//! ```
//! use ratelab_stack::tcp::{Config, Connection, Endpoint};
//! use ratelab_stack::MILLIS;
//!
//! let a = Endpoint { addr: [10, 0, 0, 1], port: 40000 };
//! let b = Endpoint { addr: [10, 0, 0, 2], port: 5001 };
//! let cfg = Config { cc: "cubic".parse().unwrap(), ..Config::default() };
//! let mut client = Connection::connect(cfg.clone(), a, b, 1, 0).unwrap();
//! let mut server = Connection::listen(cfg, b, 7, 0).unwrap();
//! client.send(b"hello");
//! let (mut buf, mut now) = ([0u8; 1600], 0);
//! // A link with 1 ms each way: deliver what each side sends, then move time on.
//! for _ in 0..10 {
//!     while let Some(t) = client.poll_transmit(now, &mut buf) {
//!         server.handle_segment(now + MILLIS, t.src, &buf[..t.len]);
//!     }
//!     while let Some(t) = server.poll_transmit(now + MILLIS, &mut buf) {
//!         client.handle_segment(now + 2 * MILLIS, t.src, &buf[..t.len]);
//!     }
//!     now += 2 * MILLIS;
//! }
//! let mut out = [0u8; 16];
//! assert_eq!(server.recv(&mut out), 5);
//! assert_eq!(&out[..5], b"hello");
//! ```

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
