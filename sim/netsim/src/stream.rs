//! Samples written to their files as they are taken, so a long run with
//! sampling on keeps nothing per sample in memory: queue.csv and
//! flow_samples.csv line by line, and the samples' results.json items (and
//! each ping's replies) into spool files beside them, spliced into
//! results.json at the end. The files are byte for byte what
//! [`Results::write_dir`] writes for the same run.

use crate::ping::Reply;
use crate::results::{
    flow_sample_line, queue_csv_header, queue_csv_line, FlowSample, QueueSample, Results,
    FLOW_SAMPLES_HEADER,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

const QUEUE_SPOOL: &str = ".queue_samples.json.part";
const FLOW_SPOOL: &str = ".flow_samples.json.part";
/// How results.json ends when both sample arrays are empty (the two last
/// fields of [`Results`], serde_json's pretty layout).
const EMPTY_TAIL: &str = "  \"queue_samples\": [],\n  \"flow_samples\": []\n}\n";
/// An item of a top-level field's array is indented by two levels, the
/// array's `]` by one.
const TOP: (&[u8], &[u8]) = (b"    ", b"\n  ]");
/// A ping's reply (`flows[i].ping.replies[j]`) by five, the `]` by four.
const REPLY: (&[u8], &[u8]) = (b"          ", b"\n        ]");
/// How an empty `flows[i].ping.replies` reads in results.json.
const EMPTY_REPLIES: &str = "\n        \"replies\": []";

/// One array of results.json, its items written as they come.
struct Spool {
    path: PathBuf,
    out: BufWriter<File>,
    items: u64,
    scratch: Vec<u8>,
    /// The items' indent and the array's closing line.
    layout: (&'static [u8], &'static [u8]),
}

impl Spool {
    fn create(path: PathBuf, layout: (&'static [u8], &'static [u8])) -> io::Result<Spool> {
        Ok(Spool {
            out: BufWriter::new(File::create(&path)?),
            path,
            items: 0,
            scratch: Vec::new(),
            layout,
        })
    }

    /// Writes `item` as serde_json's pretty printer writes an item of the
    /// array: on its own line, every line indented.
    fn push(&mut self, item: &impl Serialize) -> io::Result<()> {
        self.scratch.clear();
        serde_json::to_writer_pretty(&mut self.scratch, item)?;
        let sep: &[u8] = if self.items == 0 { b"\n" } else { b",\n" };
        self.out.write_all(sep)?;
        // JSON strings escape their newlines: every newline is the layout's.
        for (i, line) in self.scratch.split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                self.out.write_all(b"\n")?;
            }
            self.out.write_all(self.layout.0)?;
            self.out.write_all(line)?;
        }
        self.items += 1;
        Ok(())
    }

    /// Copies the array (brackets included) into `to` and removes the spool.
    fn finish(self, to: &mut impl Write) -> io::Result<()> {
        let Spool {
            path,
            out,
            items,
            layout,
            ..
        } = self;
        out.into_inner().map_err(|e| e.into_error())?;
        if items == 0 {
            to.write_all(b"[]")?;
        } else {
            to.write_all(b"[")?;
            io::copy(&mut File::open(&path)?, to)?;
            to.write_all(layout.1)?;
        }
        std::fs::remove_file(&path)
    }
}

/// The sample files of a run being written.
pub(crate) struct SampleFiles {
    dir: PathBuf,
    queue_csv: BufWriter<File>,
    flows_csv: BufWriter<File>,
    queue_json: Spool,
    flows_json: Spool,
    /// Each ping's replies, by its ICMP identifier (= flow index), from
    /// its first reply.
    replies: BTreeMap<u16, Spool>,
    line: String,
    /// The first write that failed; the run goes on, `finish` reports it.
    error: Option<io::Error>,
}

impl SampleFiles {
    /// Creates `dir` and the sample files in it; `registers`: the sampled
    /// register names (queue.csv's last columns).
    pub(crate) fn create(dir: &Path, registers: &[String]) -> io::Result<SampleFiles> {
        std::fs::create_dir_all(dir)?;
        let mut queue_csv = BufWriter::new(File::create(dir.join("queue.csv"))?);
        queue_csv.write_all(queue_csv_header(registers).as_bytes())?;
        let mut flows_csv = BufWriter::new(File::create(dir.join("flow_samples.csv"))?);
        flows_csv.write_all(FLOW_SAMPLES_HEADER.as_bytes())?;
        Ok(SampleFiles {
            dir: dir.to_path_buf(),
            queue_csv,
            flows_csv,
            queue_json: Spool::create(dir.join(QUEUE_SPOOL), TOP)?,
            flows_json: Spool::create(dir.join(FLOW_SPOOL), TOP)?,
            replies: BTreeMap::new(),
            line: String::new(),
            error: None,
        })
    }

    fn keep_error(&mut self, r: io::Result<()>) {
        if let (Err(e), None) = (r, &self.error) {
            self.error = Some(e);
        }
    }

    pub(crate) fn queue(&mut self, q: &QueueSample) {
        self.line.clear();
        queue_csv_line(&mut self.line, q);
        let r = self.queue_csv.write_all(self.line.as_bytes());
        self.keep_error(r);
        let r = self.queue_json.push(q);
        self.keep_error(r);
    }

    pub(crate) fn flow(&mut self, f: &FlowSample) {
        self.line.clear();
        flow_sample_line(&mut self.line, f);
        let r = self.flows_csv.write_all(self.line.as_bytes());
        self.keep_error(r);
        let r = self.flows_json.push(f);
        self.keep_error(r);
    }

    /// Replies of the ping of flow `ident`, as they come.
    pub(crate) fn ping_replies(&mut self, ident: u16, replies: impl Iterator<Item = Reply>) {
        if !self.replies.contains_key(&ident) {
            let path = self.dir.join(format!(".ping{ident}_replies.json.part"));
            match Spool::create(path, REPLY) {
                Ok(spool) => drop(self.replies.insert(ident, spool)),
                Err(e) => return self.keep_error(Err(e)),
            }
        }
        let spool = self.replies.get_mut(&ident).expect("created above");
        let mut r = Ok(());
        for reply in replies {
            r = r.and_then(|()| spool.push(&reply));
        }
        self.keep_error(r);
    }

    /// Writes results.json (`results`, whose sample arrays and ping replies
    /// are empty, with the spooled ones spliced in) and the other tables.
    pub(crate) fn finish(mut self, results: &Results) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.queue_csv.flush()?;
        self.flows_csv.flush()?;
        let head = results.to_json();
        let head = head
            .strip_suffix(EMPTY_TAIL)
            .expect("results.json ends with the (empty) sample arrays");
        let mut out = BufWriter::new(File::create(self.dir.join("results.json"))?);
        // The pings' (empty) reply arrays come in flow order.
        let pings = results.flows.iter().enumerate();
        let pings: Vec<u16> = pings
            .filter(|(_, f)| f.ping.is_some())
            .map(|(i, _)| i as u16)
            .collect();
        let mut parts = head.split(EMPTY_REPLIES);
        out.write_all(parts.next().unwrap_or_default().as_bytes())?;
        for (ident, part) in pings.iter().zip(parts.by_ref()) {
            out.write_all(b"\n        \"replies\": ")?;
            match self.replies.remove(ident) {
                Some(spool) => spool.finish(&mut out)?,
                None => out.write_all(b"[]")?,
            }
            out.write_all(part.as_bytes())?;
        }
        assert!(parts.next().is_none(), "one replies array per ping");
        out.write_all(b"  \"queue_samples\": ")?;
        self.queue_json.finish(&mut out)?;
        out.write_all(b",\n  \"flow_samples\": ")?;
        self.flows_json.finish(&mut out)?;
        out.write_all(b"\n}\n")?;
        out.into_inner().map_err(|e| e.into_error())?;
        results.write_tables(&self.dir)
    }
}
