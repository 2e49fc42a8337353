//! pcap capture files (the classic libpcap format: microsecond stamps,
//! Ethernet link type), one per port and direction, as BMv2's `--pcap` writes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
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
