//! One switch port: an AF_PACKET socket bound to a network interface, read
//! from a PACKET_MMAP receive ring (or, where the kernel refuses one, with
//! `recvmmsg`), [`BATCH`] frames per turn, and written through a transmit
//! ring on a second socket ([`crate::tx_ring`]; `sendmmsg` on the first where
//! there is none).

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::ptr::null_mut;

use crate::ring::{self, RxRing, Slot};
use crate::tx_ring::{TxRing, TX_RING_BYTES};

/// Frames read per turn (and written per system call).
pub const BATCH: usize = 64;
/// Room per received frame: a packet socket can hand over a GSO frame of up
/// to 64 KiB plus headers; a larger one arrives truncated and is dropped.
const SLOT: usize = 65536 + 1024;
/// Room for the PACKET_AUXDATA control message (u64s keep it aligned).
const CMSG_WORDS: usize = 8;
const ETH_P_ALL: u16 = 0x0003;
const ETH_P_8021Q: u16 = 0x8100;
const ETH_P_8021AD: u16 = 0x88a8;
/// Kernel socket buffers asked for (as root; silently less otherwise), so a
/// burst that arrives while the loop is busy waits instead of being dropped.
const SOCKET_BUFFER: libc::c_int = 4 << 20;

/// Which PACKET_MMAP rings a port asks the kernel for (it may refuse them;
/// the port then reads with `recvmmsg` or writes with `sendmmsg`).
#[derive(Debug, Clone, Copy)]
pub struct Rings {
    pub rx: bool,
    pub tx: bool,
}

impl Rings {
    pub const BOTH: Rings = Rings { rx: true, tx: true };
    pub const NONE: Rings = Rings {
        rx: false,
        tx: false,
    };
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// `setsockopt` with a value of any plain type.
pub fn set_opt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` outlives the call and its size is passed.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    })
    .map(drop)
}

fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    set_opt(fd, level, name, &value)
}

/// A non-blocking AF_PACKET socket for no protocol, so that it hears nothing
/// until [`bind_to`] says which interface and frames (a packet socket opened
/// for ETH_P_ALL hears every interface of the host until it is bound), with
/// the send buffer of [`SOCKET_BUFFER`].
pub(crate) fn packet_socket() -> io::Result<OwnedFd> {
    // SAFETY: a plain system call; the descriptor is owned right below.
    let raw = cvt(unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
    // SAFETY: `raw` is a fresh descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // As root; silently less otherwise. Behind a queue (a qdisc, a NIC) a
    // full send buffer would refuse frames.
    let _ = set_int(raw, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, SOCKET_BUFFER);
    Ok(fd)
}

/// Binds AF_PACKET socket `fd` to `iface` for frames of ethertype `proto`
/// (ETH_P_ALL to receive everything; 0 for a socket that only sends).
pub fn bind_to(fd: RawFd, iface: &str, proto: u16) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto.to_be();
    sll.sll_ifindex = if_index(iface)?;
    // SAFETY: `sll` is a valid sockaddr_ll of the size passed.
    cvt(unsafe {
        libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// The socket's PACKET_STATISTICS (frames queued and dropped since the last
/// call; reading them starts the counts again at 0).
pub fn packet_stats(fd: RawFd) -> io::Result<libc::tpacket_stats> {
    // SAFETY: zeroed plain data, filled by getsockopt up to `len` bytes.
    let mut st: libc::tpacket_stats = unsafe { zeroed() };
    let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: `st` and `len` are live and `len` is `st`'s size.
    cvt(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut libc::tpacket_stats).cast(),
            &mut len,
        )
    })?;
    Ok(st)
}

/// Where sysfs shows the MTU of `iface` (bytes after the Ethernet header).
fn mtu_path(iface: &str) -> PathBuf {
    PathBuf::from(format!("/sys/class/net/{iface}/mtu"))
}

fn read_mtu(path: &Path) -> Option<usize> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// The interface's index, or ENODEV if there is no such interface.
pub fn if_index(iface: &str) -> io::Result<libc::c_int> {
    let name = CString::new(iface).map_err(|_| io::Error::from_raw_os_error(libc::ENODEV))?;
    // SAFETY: `name` is a valid C string.
    match unsafe { libc::if_nametoindex(name.as_ptr()) } {
        0 => Err(io::Error::last_os_error()),
        i => Ok(i as libc::c_int),
    }
}

/// Whether a frame carries an 802.1Q / 802.1ad tag (the kernel then allows
/// four bytes beyond MTU + Ethernet header).
pub fn is_tagged(frame: &[u8]) -> bool {
    frame.len() >= 14
        && matches!(
            u16::from_be_bytes([frame[12], frame[13]]),
            ETH_P_8021Q | ETH_P_8021AD
        )
}

/// An AF_PACKET socket bound to one interface, with its batch buffers.
pub struct Port {
    /// None: read with recvmmsg into `rx_bufs`. Declared before `fd`, so
    /// that it is unmapped before the socket closes.
    ring: Option<RxRing>,
    fd: OwnedFd,
    /// Frames that fit a slot leave through this ring (None: all through
    /// `sendmmsg` on `fd`).
    tx_ring: Option<TxRing>,
    /// Frames handed to `sendmmsg` so far.
    sendmmsg_frames: u64,
    /// The interface's MTU (bytes after the Ethernet header), as of the
    /// last [`Port::refresh_mtu`].
    pub mtu: usize,
    /// Where `mtu` is read again.
    mtu_path: PathBuf,
    /// Ring slots returned by the last `recv` and not yet released.
    held: usize,
    /// With a ring, only frames too big for their slot are read into these.
    rx_bufs: Vec<u8>,
    rx_cmsgs: Vec<[u64; CMSG_WORDS]>,
    rx_iovs: Vec<libc::iovec>,
    rx_msgs: Vec<libc::mmsghdr>,
    tx_iovs: Vec<libc::iovec>,
    tx_msgs: Vec<libc::mmsghdr>,
}

// SAFETY: the raw pointers in the iovec / mmsghdr arrays point into this
// Port's own heap buffers, which do not move when the Port does, and only
// the thread owning the Port uses them.
unsafe impl Send for Port {}

impl Port {
    /// Opens a socket on `iface`: sees every frame the interface receives
    /// (not the ones it sends), with 802.1Q tags reported (in the ring's
    /// headers or PACKET_AUXDATA). Reads from a receive ring and writes
    /// through a transmit ring if the kernel gives them.
    pub fn open(iface: &str) -> io::Result<Port> {
        Port::open_with(iface, Rings::BOTH)
    }

    /// [`Port::open`] with only the `rings` asked for.
    pub fn open_with(iface: &str, rings: Rings) -> io::Result<Port> {
        // Hears nothing until `bind_to` below, after the set-up: frames of
        // other ports would land in it meanwhile.
        let fd = packet_socket()?;
        let raw = fd.as_raw_fd();
        set_int(raw, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1)?;
        set_int(raw, libc::SOL_PACKET, libc::PACKET_AUXDATA, 1)?;
        let _ = set_int(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, SOCKET_BUFFER);
        let mtu_path = mtu_path(iface);
        let mtu = read_mtu(&mtu_path).unwrap_or(1500);
        // Set up before bind, so that no frame is queued the old way. A frame
        // too big for its slot (the MTU raised later, a GSO frame) is copied
        // whole into the socket's queue as well (PACKET_COPY_THRESH, set first:
        // a ring that fails half-way is detached again, see `ring::map_ring`,
        // so the socket is read with recvmmsg and nothing is left attached).
        let ring = if rings.rx {
            set_int(raw, libc::SOL_PACKET, libc::PACKET_COPY_THRESH, 1)
                .and_then(|_| RxRing::new(raw, ring::slot_size(mtu), ring::RING_BYTES))
                .ok()
        } else {
            None
        };
        bind_to(raw, iface, ETH_P_ALL)?;
        let mut port = Port {
            ring,
            fd,
            // Refused (an old kernel, no memory): sendmmsg only.
            tx_ring: rings
                .tx
                .then(|| TxRing::open(iface, mtu, TX_RING_BYTES).ok())
                .flatten(),
            sendmmsg_frames: 0,
            mtu_path,
            mtu,
            held: 0,
            rx_bufs: vec![0; BATCH * SLOT],
            rx_cmsgs: vec![[0; CMSG_WORDS]; BATCH],
            // SAFETY: iovec and mmsghdr are plain data; all-zero is valid.
            rx_iovs: vec![unsafe { zeroed() }; BATCH],
            rx_msgs: vec![unsafe { zeroed() }; BATCH],
            tx_iovs: vec![unsafe { zeroed() }; BATCH],
            tx_msgs: vec![unsafe { zeroed() }; BATCH],
        };
        for i in 0..BATCH {
            port.rx_iovs[i] = libc::iovec {
                iov_base: port.rx_bufs[i * SLOT..].as_mut_ptr().cast(),
                iov_len: SLOT,
            };
        }
        Ok(port)
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Frames the kernel dropped for this socket (receive ring or buffer
    /// full) since the last call: PACKET_STATISTICS, which resets on read.
    pub fn kernel_drops(&self) -> io::Result<u64> {
        Ok(packet_stats(self.fd())?.tp_drops as u64)
    }

    /// Whether frames are read from a receive ring.
    pub fn has_ring(&self) -> bool {
        self.ring.is_some()
    }

    /// Reads the interface's MTU again (it may be changed while the switch
    /// runs); keeps the last one if it cannot be read.
    pub fn refresh_mtu(&mut self) {
        if let Some(mtu) = read_mtu(&self.mtu_path) {
            self.mtu = mtu;
        }
    }

    /// Whether frames are written through a transmit ring.
    pub fn has_tx_ring(&self) -> bool {
        self.tx_ring.is_some()
    }

    /// How many frames [`Port::send`] has handed to `sendmmsg` rather than
    /// the transmit ring (all of them without a ring).
    pub fn sendmmsg_frames(&self) -> u64 {
        self.sendmmsg_frames
    }

    /// Reads up to [`BATCH`] waiting frames without blocking; returns how
    /// many. Frame `i` is then [`Port::frame`]`(i, ..)` until
    /// [`Port::release`] (or the next `recv`).
    pub fn recv(&mut self) -> io::Result<usize> {
        self.release();
        if self.ring.is_some() {
            return self.recv_ring();
        }
        self.prepare_msgs();
        loop {
            // SAFETY: every header points at this Port's buffers, sized as declared.
            let n = unsafe {
                libc::recvmmsg(
                    self.fd(),
                    self.rx_msgs.as_mut_ptr(),
                    BATCH as libc::c_uint,
                    libc::MSG_DONTWAIT,
                    null_mut(),
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => return Ok(0),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(e),
            }
        }
    }

    fn recv_ring(&mut self) -> io::Result<usize> {
        let Some(ring) = &self.ring else {
            return Ok(0);
        };
        let mut n = 0;
        // Never more than the ring has slots: the count would wrap around.
        while n < BATCH.min(ring.slots()) {
            let status = ring.status(n);
            if status & libc::TP_STATUS_USER == 0 {
                break;
            }
            if status & libc::TP_STATUS_COPY != 0 {
                // The whole frame is next in the socket's queue.
                let h = &mut self.rx_msgs[n];
                h.msg_hdr.msg_iov = &mut self.rx_iovs[n];
                h.msg_hdr.msg_iovlen = 1;
                h.msg_hdr.msg_control = self.rx_cmsgs[n].as_mut_ptr().cast();
                h.msg_hdr.msg_controllen = CMSG_WORDS * 8;
                h.msg_hdr.msg_flags = 0;
                // SAFETY: the header points at this Port's buffers, sized as declared.
                let r = unsafe {
                    libc::recvmsg(self.fd.as_raw_fd(), &mut h.msg_hdr, libc::MSG_DONTWAIT)
                };
                if r < 0 {
                    h.msg_hdr.msg_flags = libc::MSG_TRUNC; // lost: counted as too big
                } else {
                    h.msg_len = r as libc::c_uint;
                }
            }
            n += 1;
        }
        self.held = n;
        if n == 0 {
            // Woken with nothing in the ring: an error (ENETDOWN) is pending.
            let mut err: libc::c_int = 0;
            let mut len = size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: `err` and `len` are live and sized as passed.
            cvt(unsafe {
                libc::getsockopt(
                    self.fd(),
                    libc::SOL_SOCKET,
                    libc::SO_ERROR,
                    (&mut err as *mut libc::c_int).cast(),
                    &mut len,
                )
            })?;
            if err != 0 {
                return Err(io::Error::from_raw_os_error(err));
            }
        }
        Ok(n)
    }

    /// Whether a frame waits in the receive ring (false without a ring):
    /// known without a system call.
    pub fn ready(&self) -> bool {
        self.ring
            .as_ref()
            .is_some_and(|r| self.held == 0 && r.ready())
    }

    /// Hands the ring slots of the last [`Port::recv`] back to the kernel
    /// (before sleeping: a held slot keeps the socket readable).
    pub fn release(&mut self) {
        if let Some(ring) = &mut self.ring {
            ring.release(self.held);
        }
        self.held = 0;
    }

    fn prepare_msgs(&mut self) {
        for i in 0..BATCH {
            let h = &mut self.rx_msgs[i].msg_hdr;
            h.msg_iov = &mut self.rx_iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = self.rx_cmsgs[i].as_mut_ptr().cast();
            h.msg_controllen = CMSG_WORDS * 8;
            h.msg_flags = 0;
        }
    }

    /// Frame `i` of the last [`Port::recv`] as it was on the wire: an 802.1Q
    /// tag the kernel stripped into metadata (VLAN offload) is put back, as
    /// libpcap does (into `scratch`). None for a frame that did not fit.
    pub fn frame<'a>(&'a self, i: usize, scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        if let Some(ring) = &self.ring {
            match ring::parse_slot(ring.slot(i), ring.status(i)) {
                Slot::Frame(data, None) => return Some(data),
                Slot::Frame(data, Some(tag)) => return Some(restore_tag(data, tag, scratch)),
                Slot::Truncated => return None,
                Slot::Copied => {} // read into rx_bufs by recv
            }
        }
        let m = &self.rx_msgs[i];
        if m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
            return None;
        }
        let data = &self.rx_bufs[i * SLOT..i * SLOT + m.msg_len as usize];
        let tag =
            auxdata(&m.msg_hdr).and_then(|a| vlan_tag(a.tp_status, a.tp_vlan_tci, a.tp_vlan_tpid));
        Some(match tag {
            Some(tag) => restore_tag(data, tag, scratch),
            None => data,
        })
    }

    /// Sends `frames` in order, in as few calls as possible; the indices of
    /// those the kernel refused (interface down, socket buffer full, ...)
    /// are appended to `failed`, in ascending order: they are dropped, as on
    /// a wire.
    pub fn send<T>(&mut self, frames: &[T], bytes: impl Fn(&T) -> &[u8], failed: &mut Vec<usize>) {
        // Out of `self` while sending, so that sendmmsg can be used alongside.
        let Some(mut tx) = self.tx_ring.take() else {
            self.send_mmsg(frames, 0, &bytes, failed);
            return;
        };
        // `failed` stays ascending without sorting: every flush and sendmmsg
        // call handles frames after those of the calls before it.
        for (i, f) in frames.iter().enumerate() {
            let b = bytes(f);
            if tx.push(b, i) {
                // Handed over a batch at a time, as sendmmsg was: a veth
                // delivers inside the call, into a backlog of 1000 frames.
                if tx.queued() == BATCH {
                    tx.flush(failed);
                }
                continue;
            }
            // No slot free, or a frame too big for one: send what is queued
            // (so that order is kept), then this frame with sendmmsg, or try
            // again; the rest goes with sendmmsg if every slot is still the
            // kernel's (a queue holds their frames).
            tx.flush(failed);
            if !tx.fits(b.len()) {
                self.send_mmsg(std::slice::from_ref(f), i, &bytes, failed);
            } else if !tx.push(b, i) {
                self.send_mmsg(&frames[i..], i, &bytes, failed);
                break;
            }
        }
        tx.flush(failed);
        self.tx_ring = Some(tx);
    }

    /// Sends `frames` (the caller's frames `offset..`) with `sendmmsg` on
    /// the receiving socket.
    fn send_mmsg<T>(
        &mut self,
        frames: &[T],
        offset: usize,
        bytes: &impl Fn(&T) -> &[u8],
        failed: &mut Vec<usize>,
    ) {
        self.sendmmsg_frames += frames.len() as u64;
        for (chunk_no, chunk) in frames.chunks(BATCH).enumerate() {
            for (n, f) in chunk.iter().enumerate() {
                let b = bytes(f);
                self.tx_iovs[n] = libc::iovec {
                    iov_base: b.as_ptr() as *mut libc::c_void,
                    iov_len: b.len(),
                };
                let h = &mut self.tx_msgs[n].msg_hdr;
                h.msg_iov = &mut self.tx_iovs[n];
                h.msg_iovlen = 1;
            }
            let n = chunk.len();
            let mut done = 0;
            while done < n {
                // SAFETY: headers `done..n` point at iovecs over `frames`,
                // which outlive the call.
                let r = unsafe {
                    libc::sendmmsg(
                        self.fd(),
                        self.tx_msgs[done..].as_mut_ptr(),
                        (n - done) as libc::c_uint,
                        libc::MSG_DONTWAIT,
                    )
                };
                if r > 0 {
                    done += r as usize;
                } else if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                } else {
                    // The first frame of the rest failed: skip it, send the others.
                    failed.push(offset + chunk_no * BATCH + done);
                    done += 1;
                }
            }
        }
    }
}

/// The PACKET_AUXDATA control message of a received frame.
fn auxdata(h: &libc::msghdr) -> Option<libc::tpacket_auxdata> {
    // SAFETY: the control buffer was filled by recvmmsg; the CMSG macros stay
    // within msg_controllen, and the aux data is read unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_PACKET
                && (*c).cmsg_type == libc::PACKET_AUXDATA
                && (*c).cmsg_len
                    >= libc::CMSG_LEN(size_of::<libc::tpacket_auxdata>() as u32) as usize
            {
                return Some(std::ptr::read_unaligned(libc::CMSG_DATA(c).cast()));
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    None
}

/// (TCI, TPID) of a tag the kernel took off the frame, if it did, from the
/// status, TCI and TPID of PACKET_AUXDATA or a ring slot's header.
pub(crate) fn vlan_tag(status: u32, tci: u16, tpid: u16) -> Option<(u16, u16)> {
    if status & libc::TP_STATUS_VLAN_VALID == 0 {
        return None;
    }
    // Kernels before 3.14 do not report the TPID: it was 802.1Q then.
    let tpid = if status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
        tpid
    } else {
        ETH_P_8021Q
    };
    Some((tci, tpid))
}

/// `data` with the tag put back after the MAC addresses (into `scratch`).
fn restore_tag<'a>(data: &'a [u8], (tci, tpid): (u16, u16), scratch: &'a mut Vec<u8>) -> &'a [u8] {
    if data.len() < 12 {
        return data;
    }
    scratch.clear();
    scratch.extend_from_slice(&data[..12]);
    scratch.extend_from_slice(&tpid.to_be_bytes());
    scratch.extend_from_slice(&tci.to_be_bytes());
    scratch.extend_from_slice(&data[12..]);
    scratch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stripped_vlan_tag_is_put_back() {
        let frame: Vec<u8> = (0u8..12).chain(*b"\x08\x00payload").collect();
        let mut scratch = Vec::new();
        let tag = vlan_tag(0x10 | 0x40, 0x2064, 0x88a8).unwrap();
        let got = restore_tag(&frame, tag, &mut scratch);
        let want: Vec<u8> = (0u8..12)
            .chain(*b"\x88\xa8\x20\x64\x08\x00payload")
            .collect();
        assert_eq!(got, want);
        assert_eq!(vlan_tag(0, 0, 0), None);
        // No TPID reported: 802.1Q.
        assert_eq!(vlan_tag(0x10, 5, 0), Some((5, 0x8100)));
        assert!(is_tagged(&want) && !is_tagged(&frame));
    }
}
