//! Ethernet + IPv4 framing around the host stacks' TCP segments and UDP
//! datagrams (the stacks write transport bytes only).

/// Ethernet header bytes.
pub const ETH_LEN: usize = 14;
/// IPv4 header bytes (no options).
pub const IPV4_LEN: usize = 20;
/// Both headers.
pub const HEADERS: usize = ETH_LEN + IPV4_LEN;
const ETHERTYPE_IPV4: u16 = 0x0800;
const TTL: u8 = 64;

/// The address fields of one frame.
pub struct Addresses {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: u8,
    pub id: u16,
}

fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes the Ethernet and IPv4 headers into `buf[..HEADERS]` for a
/// transport payload of `payload` bytes at `buf[HEADERS..]`.
pub fn write_headers(buf: &mut [u8], a: &Addresses, payload: usize) {
    buf[0..6].copy_from_slice(&a.dst_mac);
    buf[6..12].copy_from_slice(&a.src_mac);
    buf[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip = &mut buf[ETH_LEN..HEADERS];
    ip[0] = 0x45;
    ip[1] = 0;
    ip[2..4].copy_from_slice(&((IPV4_LEN + payload) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&a.id.to_be_bytes());
    ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF, no fragments
    ip[8] = TTL;
    ip[9] = a.protocol;
    ip[10..12].fill(0);
    ip[12..16].copy_from_slice(&a.src);
    ip[16..20].copy_from_slice(&a.dst);
    let c = checksum(ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
}

/// An IPv4 packet as a host receives it.
pub struct Received<'a> {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: u8,
    /// The transport bytes (IPv4 total length minus its header).
    pub payload: &'a [u8],
}

/// Parses a frame; None if it is not a well-formed IPv4 packet with a
/// correct header checksum.
pub fn parse(frame: &[u8]) -> Option<Received<'_>> {
    if frame.len() < HEADERS || frame[12..14] != ETHERTYPE_IPV4.to_be_bytes() {
        return None;
    }
    let ip = &frame[ETH_LEN..];
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    if ip[0] >> 4 != 4 || ihl < IPV4_LEN || total < ihl || total > ip.len() {
        return None;
    }
    if checksum(&ip[..ihl]) != 0 {
        return None;
    }
    Some(Received {
        src: [ip[12], ip[13], ip[14], ip[15]],
        dst: [ip[16], ip[17], ip[18], ip[19]],
        protocol: ip[9],
        payload: &ip[ihl..total],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_checksum_verifies() {
        let mut buf = vec![0u8; HEADERS + 5];
        buf[HEADERS..].copy_from_slice(b"hello");
        let a = Addresses {
            src_mac: [2, 0, 0, 1, 0, 1],
            dst_mac: [2, 0, 0, 0, 1, 1],
            src: [10, 0, 1, 1],
            dst: [10, 0, 2, 1],
            protocol: 17,
            id: 7,
        };
        write_headers(&mut buf, &a, 5);
        let r = parse(&buf).unwrap();
        assert_eq!((r.src, r.dst, r.protocol), (a.src, a.dst, 17));
        assert_eq!(r.payload, b"hello");
        buf[ETH_LEN + 8] -= 1; // a TTL change without a checksum update
        assert!(parse(&buf).is_none());
    }
}
