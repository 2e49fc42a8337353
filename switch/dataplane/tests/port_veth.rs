//! Ports on a real veth pair, read through the receive ring and through
//! recvmmsg: plain frames, a VLAN tag the kernel strips and we put back, and a
//! frame larger than a ring slot (the MTU raised after the port was opened);
//! written through the transmit ring and with sendmmsg, in order, and what
//! happens to frames sent while the interface is down.
//! Needs root and `ip` (`make test` runs as root); without root each test
//! prints that it was skipped and checks nothing.

use std::mem::{size_of, zeroed};
use std::process::Command;
use std::time::{Duration, Instant};

use ratelab_dataplane::port::{if_index, Port, Rings};

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A veth pair (names unique to this process and test), deleted on drop.
struct Veth(String, String);

impl Veth {
    fn new(tag: &str) -> Option<Veth> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root");
            return None;
        }
        let a = format!("rlp{}{tag}a", std::process::id());
        let b = format!("rlp{}{tag}b", std::process::id());
        // As root (as `make test` runs) the pair must be made: a failure here
        // is a failure of the test, not a reason to skip it.
        assert!(
            ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]),
            "cannot create veth pair {a}/{b}"
        );
        let v = Veth(a, b);
        for i in [&v.0, &v.1] {
            assert!(ip(&["link", "set", i, "up"]));
        }
        Some(v)
    }

    fn mtu(&self, mtu: usize) {
        for i in [&self.0, &self.1] {
            assert!(ip(&["link", "set", i, "mtu", &mtu.to_string()]));
        }
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        ip(&["link", "del", &self.0]);
    }
}

/// Sends `frame` as is out of `iface`, `count` times.
fn inject_n(iface: &str, frame: &[u8], count: usize) {
    // SAFETY: plain socket calls on a descriptor closed at the end; the
    // address and frame outlive the calls that use them. One socket for all
    // (closing a packet socket waits for an RCU grace period).
    unsafe {
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0);
        assert!(fd >= 0);
        let mut sll: libc::sockaddr_ll = zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_ifindex = if_index(iface).unwrap();
        for _ in 0..count {
            let r = libc::sendto(
                fd,
                frame.as_ptr().cast(),
                frame.len(),
                0,
                (&sll as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            );
            assert_eq!(
                r,
                frame.len() as isize,
                "{}",
                std::io::Error::last_os_error()
            );
        }
        libc::close(fd);
    }
}

/// Sends `frame` as is out of `iface`.
fn inject(iface: &str, frame: &[u8]) {
    inject_n(iface, frame, 1);
}

/// A frame with `marker` in it: broadcast, `ethertype`, after `tag` (if any).
fn frame(marker: &[u8], tag: Option<[u8; 4]>, len: usize) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x09]);
    if let Some(t) = tag {
        f.extend_from_slice(&t);
    }
    f.extend_from_slice(&[0x88, 0xb5]); // local experimental ethertype
    f.extend_from_slice(marker);
    f.resize(len.max(f.len()), 0x5a);
    f
}

/// The frames with `marker` that `port` receives within a second, until
/// `count` arrived.
fn receive(port: &mut Port, marker: &[u8], count: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let mut scratch = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(1);
    while got.len() < count && Instant::now() < deadline {
        let mut p = libc::pollfd {
            fd: port.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        unsafe { libc::poll(&mut p, 1, 50) };
        let n = port.recv().unwrap();
        for i in 0..n {
            let f = port.frame(i, &mut scratch).expect("a frame read whole");
            if f.windows(marker.len()).any(|w| w == marker) {
                got.push(f.to_vec());
            }
        }
        port.release();
    }
    got
}

/// Sends `frames` on `port`; the indices of those refused.
fn send(port: &mut Port, frames: &[Vec<u8>]) -> Vec<usize> {
    let mut failed = Vec::new();
    port.send(frames, |f: &Vec<u8>| f.as_slice(), &mut failed);
    failed
}

/// Both rings, or neither.
fn rings(on: bool) -> Rings {
    if on {
        Rings::BOTH
    } else {
        Rings::NONE
    }
}

fn check(rx_ring: bool, tag: &str) {
    let Some(v) = Veth::new(tag) else { return };
    let mut port = Port::open_with(&v.0, rings(rx_ring)).unwrap();
    assert_eq!(port.has_ring(), rx_ring);
    assert_eq!(port.mtu, 1500);

    let plain = frame(b"ratelab-plain", None, 60);
    let tagged = frame(b"ratelab-tagged", Some([0x81, 0x00, 0x20, 0x64]), 60);
    inject(&v.1, &plain);
    inject(&v.1, &tagged);
    let got = receive(&mut port, b"ratelab-", 2);
    assert_eq!(got, [plain, tagged], "the tag is put back");
    assert!(!port.ready());

    // Larger than a ring slot (2048 bytes for MTU 1500): read whole anyway.
    v.mtu(9000);
    let big = frame(b"ratelab-big", None, 5000);
    let after = frame(b"ratelab-after", None, 60);
    inject(&v.1, &big);
    inject(&v.1, &after);
    let got = receive(&mut port, b"ratelab-", 2);
    assert_eq!(got, [big, after], "in order, whole");

    // And the other way: frames sent on the port arrive at the peer.
    let mut peer = Port::open_with(&v.1, rings(rx_ring)).unwrap();
    let out = [
        frame(b"ratelab-out1", None, 60),
        frame(b"ratelab-out2", None, 1514),
    ];
    assert!(send(&mut port, &out).is_empty());
    assert_eq!(port.has_tx_ring(), rx_ring);
    assert_eq!(receive(&mut peer, b"ratelab-out", 2), out);
}

#[test]
fn a_port_reads_through_its_receive_ring() {
    check(true, "r");
}

#[test]
fn a_port_reads_with_recvmmsg_without_a_ring() {
    check(false, "m");
}

#[test]
fn a_deleted_interface_is_an_error_once_the_ring_is_empty() {
    let Some(v) = Veth::new("d") else { return };
    let mut port = Port::open(&v.0).unwrap();
    inject(&v.1, &frame(b"ratelab-last", None, 60));
    assert_eq!(receive(&mut port, b"ratelab-last", 1).len(), 1);
    assert!(ip(&["link", "del", &v.0]));
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match port.recv() {
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(libc::ENETDOWN));
                break;
            }
            Ok(_) => {
                port.release();
                assert!(Instant::now() < deadline, "no error reported");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// Frames that arrive while nothing reads: those beyond the ring (or the
/// socket buffer) are counted as kernel drops, and every frame sent is
/// either read later or counted.
fn overflow(rx_ring: bool, tag: &str, sent: usize) {
    let Some(v) = Veth::new(tag) else { return };
    let mut port = Port::open_with(&v.0, rings(rx_ring)).unwrap();
    assert_eq!(port.has_ring(), rx_ring);
    assert_eq!(port.kernel_drops().unwrap(), 0);
    let marker = b"ratelab-flood";
    let f = frame(marker, None, 64);
    inject_n(&v.1, &f, sent);
    let drops = port.kernel_drops().unwrap();
    assert!(drops > 0, "{sent} frames unread, none dropped");
    assert_eq!(port.kernel_drops().unwrap(), 0, "the count resets on read");
    let read = receive(&mut port, marker, sent).len() as u64;
    // The kernel may also have dropped a frame of its own (IPv6 on the
    // new link), so a few more than were sent.
    let total = read + drops;
    assert!(
        (sent as u64..sent as u64 + 8).contains(&total),
        "sent {sent}, read {read}, dropped {drops}"
    );
}

#[test]
fn a_full_receive_ring_counts_its_drops() {
    // 4,096 slots of 2 KiB for a 1500-byte MTU.
    overflow(true, "o", 6_000);
}

#[test]
fn a_full_socket_buffer_counts_its_drops() {
    overflow(false, "b", 30_000);
}

/// `count` frames numbered in their marker ("ratelab-seq" and four digits),
/// of sizes from 60 to 1514 bytes, and `big` bytes for the numbers in `bigs`.
fn numbered(count: usize, bigs: &[usize], big: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| {
            let len = if bigs.contains(&i) {
                big
            } else {
                60 + (i * 97) % 1455
            };
            frame(format!("ratelab-seq{i:04}").as_bytes(), None, len)
        })
        .collect()
}

#[test]
fn frames_leave_through_the_transmit_ring_in_order() {
    let Some(v) = Veth::new("t") else { return };
    let mut port = Port::open_with(
        &v.0,
        Rings {
            rx: false,
            tx: true,
        },
    )
    .unwrap();
    let mut peer = Port::open(&v.1).unwrap();
    // Slots are sized for the MTU the port opened with (2048 bytes for
    // 1500); a frame too big for one goes out with sendmmsg, in its place.
    v.mtu(3000);
    // More frames than the ring has slots (512), in one call.
    let out = numbered(1500, &[100, 1200], 2500);
    let failed = send(&mut port, &out);
    assert!(failed.is_empty(), "failed: {failed:?}");
    assert!(port.has_tx_ring());
    assert_eq!(port.sendmmsg_frames(), 2, "only the two big ones");
    let got = receive(&mut peer, b"ratelab-seq", out.len());
    let first_wrong = got.iter().zip(&out).position(|(a, b)| a != b);
    let seq = |f: &Vec<u8>| String::from_utf8_lossy(&f[14..29]).into_owned();
    assert!(
        got == out,
        "{} of {} frames; first wrong at {first_wrong:?}: {:?}",
        got.len(),
        out.len(),
        first_wrong.map(|i| (seq(&got[i]), got[i].len(), seq(&out[i]), out[i].len()))
    );
}

#[test]
fn frames_sent_while_the_interface_is_down_are_refused() {
    for (tx, tag) in [(true, "u"), (false, "w")] {
        let Some(v) = Veth::new(tag) else { return };
        let mut port = Port::open_with(&v.0, Rings { rx: true, tx }).unwrap();
        assert_eq!(port.has_tx_ring(), tx);
        let mut peer = Port::open(&v.1).unwrap();
        assert!(ip(&["link", "set", &v.0, "down"]));
        // More than the transmit ring has slots (512).
        let out = numbered(1100, &[], 0);
        assert_eq!(send(&mut port, &out), (0..1100).collect::<Vec<_>>());

        assert!(ip(&["link", "set", &v.0, "up"]));
        // The link's going down left an error on the receiving socket; the
        // packet loop reads it, as here (or sendmmsg would fail with it).
        // (After any frame that arrived since: IPv6 greets a new link.)
        let deadline = Instant::now() + Duration::from_secs(1);
        let e = loop {
            match port.recv() {
                Err(e) => break e,
                Ok(_) => port.release(),
            }
            assert!(Instant::now() < deadline, "no error reported");
        };
        assert_eq!(e.raw_os_error(), Some(libc::ENETDOWN));
        let out = numbered(5, &[], 0);
        let through_sendmmsg = port.sendmmsg_frames();
        assert!(send(&mut port, &out).is_empty());
        if tx {
            // The refused frames left in the ring are skipped, not in the way.
            assert_eq!(port.sendmmsg_frames(), through_sendmmsg, "through the ring");
        }
        // Only these: none of the refused ones went out.
        assert_eq!(receive(&mut peer, b"ratelab-seq", 20), out);
    }
}

/// A frame a full queueing discipline drops is refused (counted), with or
/// without the transmit ring: every frame is either received or in `failed`.
#[test]
fn frames_a_full_qdisc_drops_are_counted() {
    for (tx, tag) in [(true, "q"), (false, "s")] {
        let Some(v) = Veth::new(tag) else { return };
        let mut port = Port::open_with(&v.0, Rings { rx: false, tx }).unwrap();
        assert_eq!(port.has_tx_ring(), tx);
        let mut peer = Port::open(&v.1).unwrap();
        // A slow token bucket with room for a few frames.
        assert!(ip(&["link", "set", &v.0, "txqueuelen", "1000"]));
        let tc = Command::new("tc")
            .args(["qdisc", "replace", "dev", &v.0, "root", "tbf"])
            .args(["rate", "20mbit", "burst", "4kb", "limit", "8kb"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(tc, "tc qdisc tbf");
        let out = numbered(400, &[], 0);
        let failed = send(&mut port, &out);
        assert!(!failed.is_empty(), "nothing dropped");
        assert!(failed.windows(2).all(|w| w[0] < w[1]), "ascending");
        // 400 frames of ~800 bytes at 20 Mbit/s: the queue drains in well
        // under a second.
        let got = receive(&mut peer, b"ratelab-seq", out.len());
        let expected: Vec<Vec<u8>> = (out.iter().enumerate())
            .filter(|(i, _)| !failed.contains(i))
            .map(|(_, f)| f.clone())
            .collect();
        assert!(
            got == expected,
            "tx ring {tx}: received {} of {} expected",
            got.len(),
            expected.len()
        );
    }
}

#[test]
fn a_port_hears_only_its_own_interface_from_the_start() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    use std::sync::Arc;
    let (Some(quiet), Some(busy)) = (Veth::new("x"), Veth::new("y")) else {
        return;
    };
    // Frames on another interface all the while the ports are being opened.
    let (stop, sent) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let flood = {
        let (stop, sent, iface) = (stop.clone(), sent.clone(), busy.1.clone());
        std::thread::spawn(move || {
            let f = frame(b"ratelab-elsewhere", None, 60);
            // SAFETY: plain socket calls on a descriptor closed at the end;
            // the address and frame outlive the calls that use them.
            unsafe {
                let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0);
                assert!(fd >= 0);
                let mut sll: libc::sockaddr_ll = zeroed();
                sll.sll_family = libc::AF_PACKET as u16;
                sll.sll_ifindex = if_index(&iface).unwrap();
                while !stop.load(Relaxed) {
                    // A full queue on the way (ENOBUFS) only slows the flood.
                    let r = libc::sendto(
                        fd,
                        f.as_ptr().cast(),
                        f.len(),
                        0,
                        (&sll as *const libc::sockaddr_ll).cast(),
                        size_of::<libc::sockaddr_ll>() as libc::socklen_t,
                    );
                    if r > 0 {
                        sent.fetch_add(1, Relaxed);
                    }
                }
                libc::close(fd);
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    while sent.load(Relaxed) < 1000 {
        assert!(Instant::now() < deadline, "the flood does not start");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut heard = 0;
    for _ in 0..5 {
        let mut port = Port::open(&quiet.0).unwrap();
        let mut scratch = Vec::new();
        let n = port.recv().unwrap();
        heard += (0..n)
            .filter_map(|i| port.frame(i, &mut scratch).map(<[u8]>::to_vec))
            .filter(|f| f.windows(17).any(|w| w == b"ratelab-elsewhere"))
            .count();
    }
    let during = sent.load(Relaxed);
    stop.store(true, Relaxed);
    flood.join().unwrap();
    assert!(during > 1000, "the flood stopped early");
    assert_eq!(heard, 0, "frames of another interface read on this port");
}
