//! PACKET_MMAP receive rings (TPACKET_V2): the kernel writes each frame into
//! a slot of memory shared with us and flips the slot's status, so frames are
//! read without a system call, and a batch is handed back by flipping the
//! statuses again. Version 2 rather than 3: a V3 block reaches user space only
//! when it is full or its timer (a millisecond or more) expires, which would
//! delay frames at low rates; V2 hands over every frame as it arrives.

use std::io;
use std::mem::size_of;
use std::os::fd::RawFd;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU32, Ordering};

/// Bytes of ring a switch port asks for: 4096 slots for a 1500-byte MTU, as
/// many frames as its former 4 MiB socket buffer held.
pub const RING_BYTES: usize = 8 << 20;
/// Ring blocks are allocated in pieces of this size (a page multiple); a
/// slot bigger than this gets a block of its own.
const BLOCK: usize = 64 << 10;
/// Offset of a frame in its slot, at most: the kernel puts the Ethernet header
/// so that the network header after it lands at TPACKET_ALIGN(header + 16).
const FRAME_OFFSET: usize = 96;

/// The slot size for an interface of `mtu`: room for the ring header, the
/// Ethernet header and two VLAN tags left in the frame. A power of two so
/// that slots tile the blocks.
pub fn slot_size(mtu: usize) -> usize {
    (FRAME_OFFSET + 14 + 8 + mtu).next_power_of_two().max(2048)
}

/// What a slot the kernel handed over holds.
#[derive(Debug, PartialEq)]
pub enum Slot<'a> {
    /// The frame, and the (TCI, TPID) of a VLAN tag the kernel took off it.
    Frame(&'a [u8], Option<(u16, u16)>),
    /// Too big for the slot: a full copy waits in the socket's receive queue
    /// (PACKET_COPY_THRESH), in ring order.
    Copied,
    /// Too big and not copied (or a header out of bounds): lost.
    Truncated,
}

/// Reads the slot `bytes`, whose status word is `status`.
pub fn parse_slot(bytes: &[u8], status: u32) -> Slot<'_> {
    if status & libc::TP_STATUS_COPY != 0 {
        return Slot::Copied;
    }
    if bytes.len() < size_of::<libc::tpacket2_hdr>() {
        return Slot::Truncated;
    }
    // SAFETY: `bytes` holds at least one header; it is plain data, read unaligned.
    let h: libc::tpacket2_hdr = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) };
    let start = usize::from(h.tp_mac);
    let end = start + h.tp_snaplen as usize;
    if h.tp_snaplen < h.tp_len || end > bytes.len() {
        return Slot::Truncated;
    }
    Slot::Frame(
        &bytes[start..end],
        crate::port::vlan_tag(status, h.tp_vlan_tci, h.tp_vlan_tpid),
    )
}

/// A receive ring mapped into this process; unmapped on drop.
pub struct RxRing {
    base: *mut u8,
    map_len: usize,
    slot: usize,
    slots: usize,
    /// The next slot the kernel fills (in order) and we read.
    head: usize,
}

// SAFETY: the mapping belongs to this value alone; moving it to another
// thread moves the only user.
unsafe impl Send for RxRing {}

impl RxRing {
    /// Switches `fd` (an unbound AF_PACKET socket) to TPACKET_V2 and gives
    /// it a receive ring of about `bytes` (at least one block) in slots of
    /// `slot` bytes ([`slot_size`]).
    pub fn new(fd: RawFd, slot: usize, bytes: usize) -> io::Result<RxRing> {
        let (base, map_len, slots) = map_ring(fd, libc::PACKET_RX_RING, slot, bytes)?;
        Ok(RxRing {
            base,
            map_len,
            slot,
            slots,
            head: 0,
        })
    }

    /// How many slots the ring has.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Whether the kernel has handed over the slot at the head.
    pub fn ready(&self) -> bool {
        self.status(0) & libc::TP_STATUS_USER != 0
    }

    fn status_word(&self, i: usize) -> &AtomicU32 {
        // SAFETY: slot `i % slots` lies in the mapping; its first word is the
        // status, which the kernel and we hand over with ordered accesses.
        unsafe {
            &*self
                .base
                .add((i % self.slots) * self.slot)
                .cast::<AtomicU32>()
        }
    }

    /// The status of the `i`-th slot from the head; TP_STATUS_USER set once
    /// the kernel has filled it.
    pub fn status(&self, i: usize) -> u32 {
        self.status_word(self.head + i).load(Ordering::Acquire)
    }

    /// The `i`-th slot from the head. Only for a slot whose status has
    /// TP_STATUS_USER: the kernel leaves it alone until it is released.
    pub fn slot(&self, i: usize) -> &[u8] {
        let at = ((self.head + i) % self.slots) * self.slot;
        // SAFETY: within the mapping; the kernel does not write a slot it
        // handed over until `release` gives it back.
        unsafe { std::slice::from_raw_parts(self.base.add(at), self.slot) }
    }

    /// Gives the first `n` slots back to the kernel and moves the head past them.
    pub fn release(&mut self, n: usize) {
        for i in 0..n {
            self.status_word(self.head + i)
                .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        }
        self.head = (self.head + n) % self.slots;
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, not used after this.
        unsafe { libc::munmap(self.base.cast(), self.map_len) };
    }
}

/// Switches `fd` (an unbound AF_PACKET socket) to TPACKET_V2, sets up a
/// ring `which` (PACKET_RX_RING or PACKET_TX_RING) of about `bytes` in
/// slots of `slot` bytes and maps it: (address, length, slots). The caller
/// unmaps it.
pub(crate) fn map_ring(
    fd: RawFd,
    which: libc::c_int,
    slot: usize,
    bytes: usize,
) -> io::Result<(*mut u8, usize, usize)> {
    let version = libc::tpacket_versions::TPACKET_V2 as libc::c_int;
    setsockopt(fd, libc::PACKET_VERSION, &version)?;
    let block = slot.max(BLOCK);
    let blocks = (bytes / block).max(1);
    let req = libc::tpacket_req {
        tp_block_size: block as libc::c_uint,
        tp_block_nr: blocks as libc::c_uint,
        tp_frame_size: slot as libc::c_uint,
        tp_frame_nr: (blocks * (block / slot)) as libc::c_uint,
    };
    setsockopt(fd, which, &req)?;
    let map_len = block * blocks;
    // SAFETY: maps the ring just set up on `fd`; checked below.
    let base = unsafe {
        libc::mmap(
            null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_POPULATE,
            fd,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        let e = io::Error::last_os_error();
        // Detach the ring again (a request of zero blocks), or the kernel
        // would keep delivering into it and recvmmsg would read nothing.
        // SAFETY: tpacket_req is plain data; all-zero is a valid value.
        let none: libc::tpacket_req = unsafe { std::mem::zeroed() };
        setsockopt(fd, which, &none)?;
        return Err(e);
    }
    Ok((base.cast(), map_len, req.tp_frame_nr as usize))
}

fn setsockopt<T>(fd: RawFd, name: libc::c_int, value: &T) -> io::Result<()> {
    crate::port::set_opt(fd, libc::SOL_PACKET, name, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot as the kernel would fill it: header, frame at `mac`.
    fn slot(status: u32, frame: &[u8], len: u32, mac: u16, tag: (u16, u16)) -> Vec<u8> {
        let h = libc::tpacket2_hdr {
            tp_status: status,
            tp_len: len,
            tp_snaplen: frame.len() as u32,
            tp_mac: mac,
            tp_net: mac + 14,
            tp_sec: 0,
            tp_nsec: 0,
            tp_vlan_tci: tag.0,
            tp_vlan_tpid: tag.1,
            tp_padding: [0; 4],
        };
        let mut b = vec![0u8; 2048];
        // SAFETY: `b` has room for a header; written unaligned.
        unsafe { std::ptr::write_unaligned(b.as_mut_ptr().cast(), h) };
        b[usize::from(mac)..usize::from(mac) + frame.len()].copy_from_slice(frame);
        b
    }

    #[test]
    fn a_slot_gives_its_frame_and_stripped_tag() {
        let user = libc::TP_STATUS_USER;
        let frame: Vec<u8> = (0u8..60).collect();
        let b = slot(user, &frame, 60, 66, (0, 0));
        assert_eq!(parse_slot(&b, user), Slot::Frame(&frame[..], None));
        let tagged = user | libc::TP_STATUS_VLAN_VALID | libc::TP_STATUS_VLAN_TPID_VALID;
        let b = slot(tagged, &frame, 60, 66, (0x2064, 0x88a8));
        assert_eq!(
            parse_slot(&b, tagged),
            Slot::Frame(&frame[..], Some((0x2064, 0x88a8)))
        );
        // No TPID reported: 802.1Q.
        let b = slot(user | libc::TP_STATUS_VLAN_VALID, &frame, 60, 66, (5, 0));
        assert_eq!(
            parse_slot(&b, user | libc::TP_STATUS_VLAN_VALID),
            Slot::Frame(&frame[..], Some((5, 0x8100)))
        );
    }

    #[test]
    fn a_frame_too_big_for_its_slot_is_copied_or_lost() {
        let user = libc::TP_STATUS_USER;
        let frame = vec![7u8; 100];
        // Only 100 of 3000 bytes captured.
        let b = slot(user, &frame, 3000, 66, (0, 0));
        assert_eq!(parse_slot(&b, user), Slot::Truncated);
        let copy = user | libc::TP_STATUS_COPY;
        assert_eq!(
            parse_slot(&slot(copy, &frame, 3000, 66, (0, 0)), copy),
            Slot::Copied
        );
        // A header that points past the slot.
        let mut b = slot(user, &frame, 100, 66, (0, 0));
        b.truncate(120);
        assert_eq!(parse_slot(&b, user), Slot::Truncated);
        assert_eq!(parse_slot(&b[..8], user), Slot::Truncated);
    }

    #[test]
    fn slots_fit_the_mtu_and_tile_the_blocks() {
        assert_eq!(slot_size(1500), 2048);
        assert_eq!(slot_size(200), 2048);
        assert_eq!(slot_size(9000), 16384);
        for mtu in [68, 1500, 9000, 65535] {
            let s = slot_size(mtu);
            assert!(s >= FRAME_OFFSET + 14 + 8 + mtu);
            assert_eq!(s.max(BLOCK) % s, 0);
            assert_eq!(s % libc::TPACKET_ALIGNMENT, 0);
        }
    }
}
