//! pcap capture files (the classic libpcap format: microsecond stamps,
//! Ethernet link type), one per port and direction, as BMv2's `--pcap` writes;
//! and reading them back (`--use-files` input).

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

const MAGIC_US: u32 = 0xA1B2_C3D4;
const LINKTYPE_ETHERNET: u32 = 1;
const SNAPLEN: usize = 65535;

pub struct PcapWriter {
    out: BufWriter<File>,
}

impl PcapWriter {
    pub fn create(path: &Path) -> io::Result<PcapWriter> {
        let mut out = BufWriter::new(File::create(path)?);
        out.write_all(&MAGIC_US.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&(SNAPLEN as u32).to_le_bytes())?;
        out.write_all(&LINKTYPE_ETHERNET.to_le_bytes())?;
        out.flush()?;
        Ok(PcapWriter { out })
    }

    /// Buffers one record; [`PcapWriter::flush`] makes it readable.
    pub fn write(&mut self, data: &[u8], time_us: u64) -> io::Result<()> {
        let captured = &data[..data.len().min(SNAPLEN)];
        let mut head = [0u8; 16];
        head[0..4].copy_from_slice(&((time_us / 1_000_000) as u32).to_le_bytes());
        head[4..8].copy_from_slice(&((time_us % 1_000_000) as u32).to_le_bytes());
        head[8..12].copy_from_slice(&(captured.len() as u32).to_le_bytes());
        head[12..16].copy_from_slice(&(data.len() as u32).to_le_bytes());
        self.out.write_all(&head)?;
        self.out.write_all(captured)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The records of a classic pcap file (either byte order, microsecond or
/// nanosecond stamps): (time in µs, bytes). pcapng and records captured
/// short of their length are refused, as BMv2 refuses them; errors name
/// the file and the record.
pub fn read_records(path: &Path, file: &mut File) -> io::Result<Vec<(u64, Vec<u8>)>> {
    let bad = |msg: String| io::Error::new(io::ErrorKind::InvalidData, msg);
    let mut data = Vec::new();
    file.read_to_end(&mut data)?;
    let name = path.display();
    if data.len() < 24 {
        return Err(bad(format!(
            "{name}: not a pcap file (shorter than its header)"
        )));
    }
    let magic = u32::from_le_bytes(data[0..4].try_into().unwrap());
    let (little, nanos) = match magic {
        0xA1B2_C3D4 => (true, false),
        0xA1B2_3C4D => (true, true),
        0xD4C3_B2A1 => (false, false),
        0x4D3C_B2A1 => (false, true),
        0x0A0D_0D0A => {
            return Err(bad(format!(
                "{name}: a pcapng file; only the classic pcap format is read \
                 (convert it with `editcap -F pcap`)"
            )))
        }
        _ => {
            return Err(bad(format!(
                "{name}: not a pcap file (magic {magic:#010x})"
            )))
        }
    };
    let word = |b: &[u8]| {
        let a: [u8; 4] = b.try_into().unwrap();
        if little {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut out = Vec::new();
    let mut pos = 24;
    while pos < data.len() {
        let n = out.len();
        let Some(head) = data.get(pos..pos + 16) else {
            return Err(bad(format!("{name}: record {n} is cut short (its header)")));
        };
        let (sec, frac) = (word(&head[0..4]) as u64, word(&head[4..8]) as u64);
        let (caplen, len) = (word(&head[8..12]) as usize, word(&head[12..16]) as usize);
        if caplen != len {
            return Err(bad(format!(
                "{name}: record {n} was captured short ({caplen} of {len} bytes)"
            )));
        }
        pos += 16;
        let Some(bytes) = data.get(pos..pos + caplen) else {
            return Err(bad(format!("{name}: record {n} is cut short (its data)")));
        };
        let us = sec * 1_000_000 + if nanos { frac / 1000 } else { frac };
        out.push((us, bytes.to_vec()));
        pos += caplen;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ratelab-pcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn written_records_read_back() {
        let path = scratch("rw.pcap");
        let mut w = PcapWriter::create(&path).unwrap();
        w.write(&[1, 2, 3], 5_000_001).unwrap();
        w.write(&[0u8; 10], 7).unwrap();
        w.flush().unwrap();
        let got = read_records(&path, &mut File::open(&path).unwrap()).unwrap();
        assert_eq!(got, vec![(5_000_001, vec![1, 2, 3]), (7, vec![0u8; 10])]);
    }

    #[test]
    fn big_endian_nanosecond_files_read() {
        let path = scratch("be.pcap");
        let mut b = Vec::new();
        b.extend_from_slice(&0xA1B2_3C4Du32.to_be_bytes());
        b.extend_from_slice(&[0, 2, 0, 4]);
        b.extend_from_slice(&[0u8; 16]);
        for v in [1u32, 2500, 2, 2] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.extend_from_slice(&[9, 8]);
        std::fs::write(&path, &b).unwrap();
        let got = read_records(&path, &mut File::open(&path).unwrap()).unwrap();
        assert_eq!(got, vec![(1_000_002, vec![9, 8])]);
    }

    #[test]
    fn bad_files_are_refused_with_their_name() {
        let path = scratch("bad.pcap");
        let err = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            read_records(&path, &mut File::open(&path).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert!(err(b"short").ends_with("bad.pcap: not a pcap file (shorter than its header)"));
        assert!(err(&[0x0a, 0x0d, 0x0d, 0x0a].repeat(6)).contains("a pcapng file"));
        let mut w = PcapWriter::create(&path).unwrap();
        w.write(&[1, 2, 3, 4], 0).unwrap();
        w.flush().unwrap();
        let mut b = std::fs::read(&path).unwrap();
        b.pop();
        assert!(
            err(&b).ends_with("record 0 is cut short (its data)"),
            "{}",
            err(&b)
        );
        b[24 + 8] = 2; // caplen 2 of 4
        b.truncate(24 + 16 + 2);
        assert!(err(&b).ends_with("record 0 was captured short (2 of 4 bytes)"));
    }
}
