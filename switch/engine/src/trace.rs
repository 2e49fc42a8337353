//! Link capacity from a mahimahi-format trace, shared by the switch's
//! traffic manager (µs) and the simulator's links (ns).
//!
//! The format: one line per delivery opportunity, a non-negative integer
//! number of milliseconds since the start of the trace; lines are
//! non-decreasing, several equal lines are several opportunities in the same
//! millisecond, and the trace repeats with a period of its last line (which
//! must be above 0). Loop `k` of line `i` is at `ms[i] + k * period`, so a
//! trace with lines `0` and `P` has two opportunities at `P`, as mahimahi's.
//!
//! An opportunity carries up to [`OPPORTUNITY_BYTES`] bytes, as mahimahi's
//! link queue: bytes accumulate, so several small frames can share one
//! opportunity and a large frame takes several. A frame counts its IP
//! bytes (its length less the 14-byte Ethernet header, as mahimahi sees IP
//! packets): a full-size 1,514-byte frame takes exactly one opportunity.
//! A frame is delivered (its
//! last byte leaves) at the opportunity that carries its last byte. What an
//! opportunity can carry is lost when no frame is waiting at its time: an
//! opportunity before a frame is ready is never used by it.

use std::fmt;
use std::sync::Arc;

/// Bytes one delivery opportunity carries (one 1,500-byte MTU).
pub const OPPORTUNITY_BYTES: u32 = 1500;
/// Bytes of a frame that do not count against a trace: its Ethernet header.
/// mahimahi's traces count IP packets (a full-size one, 1,500 bytes, per
/// opportunity), so a 1,514-byte Ethernet frame takes exactly one.
pub const ETHERNET_HEADER: usize = 14;
/// The largest time a line may hold (ms): about 31 years, so that times in
/// ns stay far inside a `u64`.
pub const MAX_TRACE_MS: u64 = 1_000_000_000_000;

/// A bad trace file: where (`FILE` or `FILE:LINE`) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// `FILE:LINE`, or `FILE` for the file as a whole.
    pub place: String,
    /// What was expected, and what was found.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place, self.message)
    }
}

impl std::error::Error for TraceError {}

/// A parsed trace: opportunity times (ms) and the period they repeat with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    ms: Vec<u64>,
}

impl Trace {
    /// Parses a trace's text; `name` (its file name) goes into errors.
    /// Blank lines are skipped (their numbers still count).
    pub fn parse(text: &str, name: &str) -> Result<Trace, TraceError> {
        let mut ms: Vec<u64> = Vec::new();
        let mut last_line = 0;
        for (i, line) in text.lines().enumerate() {
            let at = |message: String| TraceError {
                place: format!("{name}:{}", i + 1),
                message,
            };
            let word = line.trim();
            if word.is_empty() {
                continue;
            }
            let value: u64 = match word.parse() {
                Ok(v) if word.bytes().all(|b| b.is_ascii_digit()) => v,
                _ => {
                    return Err(at(format!(
                        "expected a whole number of milliseconds (0 or more), got {word:?}"
                    )))
                }
            };
            if value > MAX_TRACE_MS {
                return Err(at(format!(
                    "expected at most {MAX_TRACE_MS} ms, got {value}"
                )));
            }
            if let Some(&before) = ms.last() {
                if value < before {
                    return Err(at(format!(
                        "expected a time of at least {before} ms (the line before: \
                         lines never decrease), got {value}"
                    )));
                }
            }
            ms.push(value);
            last_line = i + 1;
        }
        match ms.last() {
            None => Err(TraceError {
                place: name.to_string(),
                message: "expected at least one line (a delivery opportunity in ms), \
                          the trace is empty"
                    .to_string(),
            }),
            Some(0) => Err(TraceError {
                place: format!("{name}:{last_line}"),
                message: "expected a last line above 0 ms (it is the period the trace \
                          repeats with), got 0"
                    .to_string(),
            }),
            Some(_) => Ok(Trace { ms }),
        }
    }

    /// Reads and parses a trace file.
    pub fn load(path: &std::path::Path) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TraceError {
            place: name.clone(),
            message: format!("cannot read the trace: {e}"),
        })?;
        Trace::parse(&text, &name)
    }

    /// The period (ms): the last line.
    pub fn period_ms(&self) -> u64 {
        *self.ms.last().expect("a parsed trace has a line")
    }

    /// Delivery opportunities per period.
    pub fn opportunities(&self) -> usize {
        self.ms.len()
    }

    /// The capacity averaged over a period (bit/s, rounded down).
    pub fn mean_rate_bps(&self) -> u64 {
        (self.ms.len() as u128 * OPPORTUNITY_BYTES as u128 * 8 * 1000 / self.period_ms() as u128)
            as u64
    }
}

/// Where a link direction stands in its trace: the next opportunity and
/// the bytes it can still carry. Times are integers in a unit given as
/// `per_ms` (1,000 for µs, 1,000,000 for ns), so ms lines convert exactly.
#[derive(Clone, Debug)]
pub struct TraceCursor {
    trace: Arc<Trace>,
    per_ms: u64,
    /// Loop of the trace the cursor is in.
    round: u64,
    /// Line of the current opportunity.
    index: usize,
    /// Bytes the current opportunity can still carry.
    left: u32,
}

impl TraceCursor {
    /// A cursor at the trace's first opportunity; times count `per_ms`
    /// units per millisecond (above 0).
    pub fn new(trace: Arc<Trace>, per_ms: u64) -> TraceCursor {
        assert!(per_ms > 0, "a time unit per ms above 0");
        TraceCursor {
            trace,
            per_ms,
            round: 0,
            index: 0,
            left: OPPORTUNITY_BYTES,
        }
    }

    /// The trace it follows.
    pub fn trace(&self) -> &Arc<Trace> {
        &self.trace
    }

    fn period(&self) -> u64 {
        self.trace.period_ms().saturating_mul(self.per_ms)
    }

    fn time_of(&self, round: u64, index: usize) -> u64 {
        round
            .saturating_mul(self.period())
            .saturating_add(self.trace.ms[index] * self.per_ms)
    }

    /// Time of the current opportunity.
    fn now(&self) -> u64 {
        self.time_of(self.round, self.index)
    }

    /// Moves to the first opportunity at or after `ready` (the opportunities
    /// passed are lost).
    fn skip_to(&mut self, ready: u64) {
        if self.now() >= ready {
            return;
        }
        // In round r, the opportunities run from r * period to (r + 1) * period.
        let round = ready / self.period();
        if round > self.round {
            self.round = round;
            self.index = 0;
        }
        let base = self.round.saturating_mul(self.period());
        let (per_ms, index) = (self.per_ms, self.index);
        self.index = index
            + self.trace.ms[index..].partition_point(|&m| base.saturating_add(m * per_ms) < ready);
        if self.index == self.trace.ms.len() {
            // Only at saturation: nothing in this round is late enough.
            self.index = self.trace.ms.len() - 1;
        }
        self.left = OPPORTUNITY_BYTES;
    }

    fn next(&mut self) {
        self.index += 1;
        if self.index == self.trace.ms.len() {
            self.index = 0;
            self.round += 1;
        }
        self.left = OPPORTUNITY_BYTES;
    }

    /// [`TraceCursor::deliver`] for an Ethernet frame of `frame_bytes`: its
    /// IP bytes (less [`ETHERNET_HEADER`]) count.
    pub fn deliver_frame(&mut self, ready: u64, frame_bytes: usize) -> u64 {
        self.deliver(ready, frame_bytes.saturating_sub(ETHERNET_HEADER))
    }

    /// Sends `bytes` (a packet) that is ready (first in line, fully queued)
    /// at `ready`: returns when its last byte is delivered, and uses up the
    /// opportunities' bytes it took. Frames must be given in their order on
    /// the link, each ready no earlier than the previous one's delivery.
    pub fn deliver(&mut self, ready: u64, bytes: usize) -> u64 {
        self.skip_to(ready);
        let mut need = bytes;
        loop {
            let take = need.min(self.left as usize);
            self.left -= take as u32;
            need -= take;
            if need == 0 {
                return self.now();
            }
            self.next();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(text: &str) -> Arc<Trace> {
        Arc::new(Trace::parse(text, "t.mahi").unwrap())
    }

    fn error(text: &str) -> String {
        Trace::parse(text, "t.mahi").unwrap_err().to_string()
    }

    #[test]
    fn parses_lines_and_period() {
        let t = trace("0\n0\n5\n\n12\n");
        assert_eq!(t.period_ms(), 12);
        assert_eq!(t.opportunities(), 4);
        // 4 x 1500 bytes every 12 ms = 4 Mbit/s.
        assert_eq!(t.mean_rate_bps(), 4_000_000);
        assert_eq!(trace("1\n").mean_rate_bps(), 12_000_000);
    }

    #[test]
    fn bad_traces_name_file_and_line() {
        assert_eq!(
            error(""),
            "t.mahi: expected at least one line (a delivery opportunity in ms), the trace is empty"
        );
        assert!(error("\n \n").starts_with("t.mahi: expected at least one line"));
        assert_eq!(
            error("1\n2\nx3\n"),
            "t.mahi:3: expected a whole number of milliseconds (0 or more), got \"x3\""
        );
        assert!(error("-1\n").starts_with("t.mahi:1: expected a whole number"));
        assert!(error("1.5\n").starts_with("t.mahi:1: expected a whole number"));
        assert!(error("+1\n").starts_with("t.mahi:1: expected a whole number"));
        assert_eq!(
            error("1\n5\n4\n"),
            "t.mahi:3: expected a time of at least 5 ms (the line before: lines never \
             decrease), got 4"
        );
        assert_eq!(
            error("0\n0\n\n"),
            "t.mahi:2: expected a last line above 0 ms (it is the period the trace repeats \
             with), got 0"
        );
        assert!(error("99999999999999999999\n").starts_with("t.mahi:1: expected a whole"));
        assert!(error("1000000000001\n").starts_with("t.mahi:1: expected at most"));
        let missing = Trace::load(std::path::Path::new("/nonexistent/x.mahi")).unwrap_err();
        assert!(missing
            .to_string()
            .starts_with("/nonexistent/x.mahi: cannot read the trace:"));
    }

    #[test]
    fn whole_frames_take_one_opportunity_each() {
        // Opportunities at 2, 2, 7 ms, then every 7 ms again: 9, 9, 14, ...
        let mut c = TraceCursor::new(trace("2\n2\n7\n"), 1_000_000);
        let ms = 1_000_000;
        assert_eq!(c.deliver(0, 1500), 2 * ms);
        assert_eq!(c.deliver(2 * ms, 1500), 2 * ms);
        assert_eq!(c.deliver(2 * ms, 1500), 7 * ms);
        assert_eq!(c.deliver(7 * ms, 1500), 9 * ms); // looped
        assert_eq!(c.deliver(9 * ms, 1500), 9 * ms);
        assert_eq!(c.deliver(9 * ms, 1500), 14 * ms);
        // Idle until 101 ms: round 14 has 100, 100, 105 -> 105 first.
        assert_eq!(c.deliver(101 * ms, 1500), 105 * ms);
        assert_eq!(c.deliver(105 * ms, 1500), 107 * ms);
        assert_eq!(c.deliver(107 * ms, 1500), 107 * ms);
        assert_eq!(c.deliver(107 * ms, 1500), 112 * ms);
    }

    #[test]
    fn small_frames_share_and_large_frames_span_opportunities() {
        let mut c = TraceCursor::new(trace("1\n2\n3\n4\n"), 1000); // µs
        assert_eq!(c.deliver(0, 1000), 1000); // 500 left at 1 ms
        assert_eq!(c.deliver(1000, 500), 1000); // fits in what is left
        assert_eq!(c.deliver(1000, 100), 2000); // 1 ms is used up
        assert_eq!(c.deliver(2000, 3000), 4000); // 1400 at 2, 1500 at 3, 100 at 4
        assert_eq!(c.deliver(4000, 1400), 4000); // the 1400 left at 4 ms
        assert_eq!(c.deliver(4000, 1), 5000); // next loop: 4 + 1 ms
    }

    #[test]
    fn an_opportunity_before_the_frame_is_ready_is_lost() {
        let mut c = TraceCursor::new(trace("1\n2\n3\n4\n"), 1000);
        assert_eq!(c.deliver(0, 100), 1000); // 1400 left at 1 ms
        assert_eq!(c.deliver(1001, 100), 2000); // ready after it: the rest is lost
        assert_eq!(c.deliver(2000, 100), 2000); // ready at it: still usable
        assert_eq!(c.deliver(4_000_000_001, 1500), 4_000_001_000);
    }

    #[test]
    fn a_frame_counts_its_ip_bytes() {
        let mut c = TraceCursor::new(trace("1\n"), 1);
        assert_eq!(c.deliver_frame(0, 1514), 1);
        assert_eq!(c.deliver_frame(0, 1514), 2);
        assert_eq!(c.deliver_frame(0, 514), 3);
        assert_eq!(c.deliver_frame(0, 1014), 3);
        assert_eq!(c.deliver_frame(0, 15), 4);
    }

    #[test]
    fn equal_zero_line_and_period_are_two_opportunities() {
        let mut c = TraceCursor::new(trace("0\n5\n"), 1);
        let got: Vec<u64> = (0..6).map(|_| c.deliver(0, 1500)).collect();
        assert_eq!(got, [0, 5, 5, 10, 10, 15]);
    }
}
