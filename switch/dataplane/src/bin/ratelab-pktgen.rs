//! Traffic for the daemon benchmark (switch/tests/bench_daemon.py): a sender
//! of IPv4/UDP frames on an AF_PACKET socket, batched with sendmmsg, fast
//! enough to offer the switch more than it forwards, and a receiver that
//! counts them (see `recv`).
//!
//!     ratelab-pktgen send IFACE DST_IP SIZE COUNT [PPS]   (PPS 0 or absent: as fast as possible)
//!     ratelab-pktgen recv IFACE SECONDS [IDLE_SECONDS]
//!
//! Each prints one JSON object. The receiver counts frames carrying the
//! sender's marker until SECONDS pass, or IDLE_SECONDS (default 1) pass
//! without one once the first has arrived.

use std::io;
use std::mem::zeroed;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ratelab_dataplane::port::{bind_to, packet_stats, set_opt};

const MARKER: &[u8] = b"ratelab-pktgen";
const BATCH: usize = 64;
const ETH_P_ALL: u16 = 0x0003;

/// An AF_PACKET socket, not yet bound.
fn socket() -> io::Result<libc::c_int> {
    // SAFETY: plain system calls; the descriptor lives until the process exits.
    unsafe {
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
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
    let fd = socket()?;
    let f = frame(dst, size);
    bind_to(fd, iface, 0)?;
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

/// A classic BPF program accepting only frames with MARKER at byte 42 (just
/// after the Ethernet, IPv4 and UDP headers).
fn marker_filter() -> Vec<libc::sock_filter> {
    const LD_W: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const LD_H: u16 = (libc::BPF_LD | libc::BPF_H | libc::BPF_ABS) as u16;
    const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let mut prog = Vec::new();
    let chunks: Vec<&[u8]> = MARKER.chunks(4).collect();
    for (i, c) in chunks.iter().enumerate() {
        let left = (chunks.len() - 1 - i) as u8; // compares after this one
        let (load, value) = match c.len() {
            4 => (LD_W, u32::from_be_bytes([c[0], c[1], c[2], c[3]])),
            2 => (LD_H, u32::from(u16::from_be_bytes([c[0], c[1]]))),
            _ => unreachable!("MARKER is 14 bytes"),
        };
        prog.push(op(load, 0, 0, 42 + 4 * i as u32));
        // Equal: on to the next load; else jump to the final "reject".
        prog.push(op(JEQ, 0, 2 * left + 1, value));
    }
    prog.push(op(RET, 0, 0, 64)); // accept
    prog.push(op(RET, 0, 0, 0)); // reject
    prog
}

/// Frames the filter accepted since the last call (PACKET_STATISTICS counts
/// those queued and those dropped for want of room, and starts again at 0).
fn accepted(fd: libc::c_int) -> io::Result<u64> {
    Ok(u64::from(packet_stats(fd)?.tp_packets))
}

/// Counts the sender's frames arriving on `iface` without reading them: a
/// socket filter picks them out and the socket's statistics count them; the
/// socket's buffer is as small as can be, so nearly all are dropped right
/// after the filter. A veth runs the delivery to this socket inside the
/// switch's send call, so a receiver that copied every frame would charge
/// that copy to the switch's CPU time.
fn recv(iface: &str, seconds: f64, idle: f64) -> io::Result<String> {
    let fd = socket()?;
    let prog = marker_filter();
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // The kernel copies the program; `fprog` points at `prog`, alive for the call.
    set_opt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &fprog)?;
    // As small as the kernel allows (it rounds up): frames are counted, not kept.
    set_opt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &0 as &libc::c_int)?;
    bind_to(fd, iface, ETH_P_ALL)?;
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
        // Sampled every 200 µs: arrival times are known to that much.
        std::thread::sleep(Duration::from_micros(200).min(stop - now));
        let n = accepted(fd)?;
        if n > 0 {
            let at = Instant::now();
            received += n;
            first.get_or_insert(at);
            last = at;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `prog` on `pkt` as the kernel would, for the instructions it uses.
    fn run(prog: &[libc::sock_filter], pkt: &[u8]) -> u32 {
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let op = prog[pc];
            let k = op.k as usize;
            match u32::from(op.code) {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => match pkt.get(k..k + 4) {
                    Some(b) => a = u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                    None => return 0,
                },
                c if c == libc::BPF_LD | libc::BPF_H | libc::BPF_ABS => match pkt.get(k..k + 2) {
                    Some(b) => a = u32::from(u16::from_be_bytes([b[0], b[1]])),
                    None => return 0,
                },
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => {
                    pc += usize::from(if a == op.k { op.jt } else { op.jf });
                }
                c if c == libc::BPF_RET | libc::BPF_K => return op.k,
                c => panic!("unexpected opcode {c:#x}"),
            }
            pc += 1;
        }
    }

    #[test]
    fn the_filter_accepts_only_the_senders_frames() {
        let prog = marker_filter();
        let f = frame([10, 0, 2, 9], 64);
        assert_ne!(run(&prog, &f), 0);
        for at in 42..42 + MARKER.len() {
            let mut other = f.clone();
            other[at] ^= 1;
            assert_eq!(run(&prog, &other), 0, "byte {at} changed");
        }
        assert_eq!(run(&prog, &f[..50]), 0);
    }
}
