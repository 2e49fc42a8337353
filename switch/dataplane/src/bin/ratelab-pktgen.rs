//! Traffic for the daemon benchmark (switch/tests/bench_daemon.py): a sender
//! and a receiver of IPv4/UDP frames on AF_PACKET sockets, batched with
//! sendmmsg / recvmmsg, fast enough to offer the switch more than it forwards.
//!
//!     ratelab-pktgen send IFACE DST_IP SIZE COUNT [PPS]   (PPS 0 or absent: as fast as possible)
//!     ratelab-pktgen recv IFACE SECONDS [IDLE_SECONDS]
//!
//! Each prints one JSON object. The receiver counts frames carrying the
//! sender's marker until SECONDS pass, or IDLE_SECONDS (default 1) pass
//! without one once the first has arrived.

use std::io;
use std::mem::{size_of, zeroed};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ratelab_dataplane::port::if_index;

const MARKER: &[u8] = b"ratelab-pktgen";
const BATCH: usize = 64;
const ETH_P_ALL: u16 = 0x0003;

/// `rcvbuf`: a receiving socket (big buffer); otherwise protocol 0, so the
/// sender is not handed a copy of every frame it sends.
fn socket(iface: &str, rcvbuf: bool) -> io::Result<libc::c_int> {
    let proto = if rcvbuf { ETH_P_ALL.to_be() } else { 0 };
    // SAFETY: plain system calls; the descriptor lives until the process exits.
    unsafe {
        let fd = libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::c_int::from(proto),
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        if rcvbuf {
            let size: libc::c_int = 32 << 20;
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&size as *const libc::c_int).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        let mut sll: libc::sockaddr_ll = zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = if_index(iface)?;
        if libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        ) < 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(fd)
    }
}

fn checksum(b: &[u8]) -> u16 {
    let mut s: u32 = b
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// An Ethernet + IPv4 + UDP frame of `size` bytes to `dst` carrying MARKER.
fn frame(dst: [u8; 4], size: usize) -> Vec<u8> {
    let size = size.max(14 + 20 + 8 + MARKER.len());
    let mut f = vec![0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x08, 0x00];
    let ip_len = (size - 14) as u16;
    let mut ip = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 1, 1];
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip.extend_from_slice(&dst);
    let c = checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[0x30, 0x39, 0x00, 0x09]); // UDP 12345 -> 9
    f.extend_from_slice(&(ip_len - 20).to_be_bytes());
    f.extend_from_slice(&[0, 0]); // no UDP checksum
    f.extend_from_slice(MARKER);
    f.resize(size, 0x5a);
    f
}

fn send(iface: &str, dst: [u8; 4], size: usize, count: u64, pps: f64) -> io::Result<String> {
    let fd = socket(iface, false)?;
    let f = frame(dst, size);
    let mut iov = libc::iovec {
        iov_base: f.as_ptr() as *mut libc::c_void,
        iov_len: f.len(),
    };
    // SAFETY: mmsghdr is plain data; all-zero is valid.
    let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { zeroed() }; BATCH];
    for m in &mut msgs {
        m.msg_hdr.msg_iov = &mut iov;
        m.msg_hdr.msg_iovlen = 1;
    }
    let start = Instant::now();
    let (mut sent, mut errors) = (0u64, 0u64);
    while sent + errors < count {
        if pps > 0.0 {
            let due = start + Duration::from_secs_f64((sent + errors) as f64 / pps);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        let n = (count - sent - errors).min(BATCH as u64) as usize;
        // SAFETY: the headers point at `iov`, which points at `f`; both live.
        let r = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), n as libc::c_uint, 0) };
        if r > 0 {
            sent += r as u64;
        } else if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            errors += 1; // a blocking socket only fails for good reasons: skip that frame
        }
    }
    let secs = start.elapsed().as_secs_f64();
    Ok(format!(
        "{{\"sent\": {sent}, \"errors\": {errors}, \"seconds\": {secs:.6}, \"pps\": {:.0}}}",
        sent as f64 / secs
    ))
}

fn recv(iface: &str, seconds: f64, idle: f64) -> io::Result<String> {
    let fd = socket(iface, true)?;
    const SLOT: usize = 2048;
    let mut bufs = vec![0u8; BATCH * SLOT];
    let mut iovs: Vec<libc::iovec> = (0..BATCH)
        .map(|i| libc::iovec {
            iov_base: bufs[i * SLOT..].as_mut_ptr().cast(),
            iov_len: SLOT,
        })
        .collect();
    // SAFETY: mmsghdr is plain data; all-zero is valid.
    let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { zeroed() }; BATCH];
    for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
        m.msg_hdr.msg_iov = iov;
        m.msg_hdr.msg_iovlen = 1;
    }
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let (mut received, mut first, mut last) = (0u64, None::<Instant>, start);
    loop {
        let now = Instant::now();
        let stop = match first {
            Some(_) => deadline.min(last + Duration::from_secs_f64(idle)),
            None => deadline,
        };
        if now >= stop {
            break;
        }
        // SAFETY: the headers point at `iovs` over `bufs`, sized as declared.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                msgs.as_mut_ptr(),
                BATCH as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n <= 0 {
            // Nothing waiting: nap instead of sleeping on the socket. A reader
            // blocked in poll() is woken for nearly every frame, and the
            // wake-ups are charged to the switch that sends them (the
            // socket buffer holds what arrives meanwhile).
            std::thread::sleep(Duration::from_micros(200).min(stop - now));
            continue;
        }
        let at = Instant::now();
        for (i, m) in msgs.iter().take(n as usize).enumerate() {
            let data = &bufs[i * SLOT..i * SLOT + (m.msg_len as usize).min(SLOT)];
            if data.len() >= 42 + MARKER.len() && &data[42..42 + MARKER.len()] == MARKER {
                received += 1;
                first.get_or_insert(at);
                last = at;
            }
        }
    }
    let span = first.map_or(0.0, |f| (last - f).as_secs_f64());
    Ok(format!(
        "{{\"received\": {received}, \"span_seconds\": {span:.6}, \"pps\": {:.0}}}",
        if span > 0.0 {
            received as f64 / span
        } else {
            0.0
        }
    ))
}

fn run(args: &[String]) -> Result<String, String> {
    let num = |i: usize, what: &str| -> Result<f64, String> {
        args.get(i)
            .ok_or(format!("missing {what}"))?
            .parse()
            .map_err(|_| format!("bad {what}"))
    };
    let iface = args.get(1).ok_or("missing IFACE")?;
    match args.first().map(String::as_str) {
        Some("send") => {
            let dst: std::net::Ipv4Addr = args
                .get(2)
                .ok_or("missing DST_IP")?
                .parse()
                .map_err(|_| "bad DST_IP")?;
            let pps = if args.len() > 5 { num(5, "PPS")? } else { 0.0 };
            send(
                iface,
                dst.octets(),
                num(3, "SIZE")? as usize,
                num(4, "COUNT")? as u64,
                pps,
            )
        }
        Some("recv") => {
            let idle = if args.len() > 3 {
                num(3, "IDLE_SECONDS")?
            } else {
                1.0
            };
            recv(iface, num(2, "SECONDS")?, idle)
        }
        _ => return Err("usage: ratelab-pktgen send|recv ...".into()),
    }
    .map_err(|e| format!("{iface}: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ratelab-pktgen: {e}");
            ExitCode::from(2)
        }
    }
}
