//! Packet execution: parser, deparser, checksums, actions, control flow.

use crate::calc::{Algo, BitSink, CsumSink, Sink};
use crate::compile::CExpr;
use crate::phv::{mask, read_bits, Phv, Val};
use crate::program::*;
use crate::rng::Rng;
use crate::table::{MatchTable, MeterState};
use crate::wire;

/// A digest produced by `generate_digest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    /// Learn list id.
    pub list_id: u32,
    /// Learn list name.
    pub list_name: String,
    /// The receiver argument of `generate_digest`.
    pub receiver: u128,
    /// Field values in learn-list order.
    pub values: Vec<u128>,
    /// Time (µs) of the packet that produced it.
    pub time_us: u64,
}

/// Runtime state of a table.
pub(crate) struct TableState {
    pub mt: MatchTable,
    pub default: Option<ActionRef>,
}

/// An action profile member.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub action: ActionEntry,
    /// Table entries and groups referring to it.
    pub refs: u32,
}

/// An action selector group.
#[derive(Debug, Clone, Default)]
pub(crate) struct Group {
    pub members: Vec<u32>,
    /// Table entries referring to it.
    pub refs: u32,
}

/// Runtime state of an action profile.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProfileState {
    pub members: Vec<Option<Member>>,
    pub groups: Vec<Option<Group>>,
}

/// Mutable switch state touched by packets and the control plane.
pub(crate) struct State {
    pub tables: Vec<TableState>,
    pub profiles: Vec<ProfileState>,
    pub registers: Vec<Vec<u128>>,
    pub counters: Vec<Vec<(u64, u64)>>,
    pub meters: Vec<Vec<MeterState>>,
    pub vsets: Vec<Vec<u128>>,
    pub calc_algos: Vec<Algo>,
    pub rng: Rng,
    pub digests: Vec<Digest>,
    pub logs: Option<Vec<String>>,
    pub assert_failures: u64,
    pub now_us: u64,
    // scratch buffers
    key: Vec<u128>,
    key_scratch: Vec<u128>,
    pub(crate) adata: Vec<Val>,
    bw: Vec<u8>,
}

impl State {
    pub fn new(p: &Program, seed: u64) -> State {
        let tables = p
            .tables
            .iter()
            .map(|t| TableState {
                mt: MatchTable::new(&t.keys, t.max_size.max(1)),
                default: t.default_entry.clone().map(ActionRef::Direct),
            })
            .collect();
        State {
            tables,
            profiles: vec![ProfileState::default(); p.profiles.len()],
            registers: p.registers.iter().map(|r| vec![0; r.size]).collect(),
            counters: p.counters.iter().map(|c| vec![(0, 0); c.size]).collect(),
            meters: p
                .meters
                .iter()
                .map(|m| {
                    vec![MeterState::default(); if m.direct_table.is_some() { 0 } else { m.size }]
                })
                .collect(),
            vsets: vec![Vec::new(); p.vsets.len()],
            calc_algos: p.calcs.iter().map(|c| c.algo.clone()).collect(),
            rng: Rng::new(seed),
            digests: Vec::new(),
            logs: None,
            assert_failures: 0,
            now_us: 0,
            key: Vec::new(),
            key_scratch: Vec::new(),
            adata: Vec::new(),
            bw: Vec::new(),
        }
    }
}

/// Per-packet flags set by primitives.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flags {
    pub exit: bool,
    pub clone: Option<(u32, Option<u32>)>,
    pub resubmit: Option<Option<u32>>,
    pub recirculate: Option<Option<u32>>,
    pub truncate: Option<usize>,
    pub digests: Vec<(u128, u32)>,
    pub assert_failed: bool,
}

/// A packet inside the pipeline.
#[derive(Debug, Clone)]
pub(crate) struct Pkt {
    pub phv: Phv,
    /// The frame as parsed: its headers, then from `payload_at` the payload
    /// (kept whole so the deparser can write new headers in front of the
    /// payload instead of copying it).
    pub frame: Vec<u8>,
    pub payload_at: usize,
    /// Packet length as counters and meters see it.
    pub len: usize,
    pub flags: Flags,
}

impl Pkt {
    /// The bytes after the parsed headers.
    pub fn payload(&self) -> &[u8] {
        &self.frame[self.payload_at..]
    }

    /// Keeps `data` whole, the payload from byte `start`.
    pub fn set_frame(&mut self, data: &[u8], start: usize) {
        self.frame.clear();
        self.frame.extend_from_slice(data);
        self.payload_at = start;
    }

    /// Makes `out`, which holds the `n` header bytes the deparser wrote, the
    /// whole frame: headers, then the payload. When the headers fit where the
    /// parsed ones were (a router rewrites fields, it rarely adds headers),
    /// they are written there and the frame's buffer becomes `out`, so the
    /// payload is not copied; `pkt` keeps `out`'s old buffer.
    pub fn finish_deparse(&mut self, out: &mut Vec<u8>, n: usize) {
        let at = self.payload_at;
        if n <= at {
            self.frame[at - n..at].copy_from_slice(&out[..n]);
            std::mem::swap(out, &mut self.frame);
            if at > n {
                out.drain(..at - n);
            }
            self.frame.clear();
            self.payload_at = 0;
        } else {
            out.truncate(n);
            out.extend_from_slice(&self.frame[at..]);
        }
    }
}

pub(crate) const MAX_PARSE_STATES: usize = 4096;
const MAX_ACTION_STEPS: usize = 100_000;

/// Runs the parser on `data`; fills `pkt.phv`, records
/// `standard_metadata.parser_error`, and returns where the payload starts
/// (bytes; the caller makes `data` the packet's frame).
// Not inlined: compiled programs reach it only as a fallback, and inlined into
// `Switch::parsed` / `Switch::advance` it costs every packet register
// spills and stack set-up.
#[inline(never)]
pub(crate) fn parse(p: &Program, st: &mut State, pkt: &mut Pkt, data: &[u8]) -> usize {
    let total_bits = data.len() * 8;
    let mut cur = 0usize; // bit cursor
    let mut state = p.parser_init;
    let mut steps = 0usize;
    let mut error: Val = p.err.no_error;
    'states: while let Some(si) = state {
        steps += 1;
        if steps > MAX_PARSE_STATES {
            error = p.err.invalid_arg;
            break;
        }
        let s = &p.states[si as usize];
        for op in &s.ops {
            let r = match op {
                ParserOp::Extract(x) => extract(p, &mut pkt.phv, *x, data, &mut cur, None),
                ParserOp::ExtractVL(x, e) => {
                    let len = e.eval(&EvalCtx {
                        prog: p,
                        phv: &pkt.phv,
                        data: &[],
                    });
                    extract(p, &mut pkt.phv, *x, data, &mut cur, Some(len))
                }
                ParserOp::Set(l, src) => {
                    let v = match src {
                        Src::Expr(e) => Ok(e.eval(&EvalCtx {
                            prog: p,
                            phv: &pkt.phv,
                            data: &[],
                        })),
                        Src::Lookahead(off, w) => lookahead(p, data, cur, *off, *w),
                    };
                    v.map(|v| p.store(l, &mut pkt.phv, &[], v))
                }
                ParserOp::Verify(c, e) => {
                    let ctx = EvalCtx {
                        prog: p,
                        phv: &pkt.phv,
                        data: &[],
                    };
                    if c.eval(&ctx) == 0 {
                        Err(e.eval(&ctx))
                    } else {
                        Ok(())
                    }
                }
                ParserOp::Advance(e) => {
                    let n = e.eval(&EvalCtx {
                        prog: p,
                        phv: &pkt.phv,
                        data: &[],
                    });
                    if n < 0 || n % 8 != 0 {
                        Err(p.err.invalid_arg)
                    } else if cur as i128 + n > total_bits as i128 {
                        Err(p.err.packet_too_short)
                    } else {
                        cur += n as usize;
                        Ok(())
                    }
                }
                ParserOp::Primitive(prim) => {
                    run_prims(p, st, pkt, std::slice::from_ref(prim), &[]);
                    Ok(())
                }
            };
            if let Err(e) = r {
                error = e;
                break 'states;
            }
        }
        // transition
        let mut key: u128 = 0;
        for (src, w, padded) in &s.key {
            let v = match src {
                Src::Expr(e) => {
                    (e.eval(&EvalCtx {
                        prog: p,
                        phv: &pkt.phv,
                        data: &[],
                    }) as u128)
                        & mask(*w)
                }
                Src::Lookahead(off, w) => match lookahead(p, data, cur, *off, *w) {
                    Ok(v) => v as u128,
                    Err(e) => {
                        error = e;
                        break 'states;
                    }
                },
            };
            key = if *padded >= 128 {
                v
            } else {
                (key << padded) | v
            };
        }
        let mut next = None;
        let mut matched = false;
        for t in &s.transitions {
            match t {
                Transition::Default(n) => {
                    next = *n;
                    matched = true;
                }
                Transition::Value {
                    value,
                    mask,
                    next: n,
                } => {
                    if key & mask == *value {
                        next = *n;
                        matched = true;
                    }
                }
                Transition::Vset {
                    vset,
                    mask,
                    next: n,
                } => {
                    let ck = compress(key, &s.key);
                    let cm = compress(*mask, &s.key);
                    if st.vsets[*vset as usize].iter().any(|v| v & cm == ck & cm) {
                        next = *n;
                        matched = true;
                    }
                }
            }
            if matched {
                break;
            }
        }
        if !matched {
            error = p.err.no_match;
            break;
        }
        state = next;
    }
    p.set_opt(&mut pkt.phv, p.sm.parser_error, error);
    (cur / 8).min(data.len())
}

/// Byte-padded key -> concatenation of the components' real widths.
fn compress(v: u128, key: &[(Src, u32, u32)]) -> u128 {
    let mut shift_in: u32 = key.iter().map(|k| k.2).sum();
    let mut out = 0u128;
    for (_, w, padded) in key {
        shift_in -= padded;
        let c = if shift_in >= 128 {
            0
        } else {
            (v >> shift_in) & mask(*w)
        };
        out = if *w >= 128 { c } else { (out << w) | c };
    }
    out
}

fn lookahead(p: &Program, data: &[u8], cur: usize, off: u32, w: u32) -> Result<Val, Val> {
    let at = cur + off as usize;
    if at + w as usize > data.len() * 8 {
        return Err(p.err.packet_too_short);
    }
    Ok(read_bits(data, at, w) as Val)
}

/// A variable-length field's length (bits) is compared with the packet's
/// after clamping to this: longer than any packet, short enough that adding
/// it to an offset cannot overflow. A multiple of 8.
pub(crate) const VARBIT_LEN_CLAMP: Val = 1 << 40;

fn extract(
    p: &Program,
    phv: &mut Phv,
    x: Extract,
    data: &[u8],
    cur: &mut usize,
    vl: Option<Val>,
) -> Result<(), Val> {
    let h = match x {
        Extract::Header(h) => h,
        Extract::Stack(s) => {
            let n = phv.stack_next[p.stacks[s as usize].counter as usize] as usize;
            let hs = &p.stacks[s as usize].headers;
            if n >= hs.len() {
                return Err(p.err.stack_oob);
            }
            hs[n]
        }
    };
    let hi = &p.headers[h as usize];
    let mut vbits = 0usize;
    if let Some(len) = vl {
        let Some(vb) = &hi.varbit else {
            return Err(p.err.invalid_arg);
        };
        // BMv2's order: a length that is not whole bytes, then the packet's
        // length, then the header's room.
        if len % 8 != 0 {
            return Err(p.err.invalid_arg);
        }
        if len < 0 {
            return Err(p.err.header_too_short);
        }
        let wanted = hi.bits as usize + len.min(VARBIT_LEN_CLAMP) as usize;
        if *cur + wanted > data.len() * 8 {
            return Err(p.err.packet_too_short);
        }
        if len > vb.max_bits as Val {
            return Err(p.err.header_too_short);
        }
        vbits = len as usize;
    }
    let need = hi.bits as usize + vbits;
    if *cur + need > data.len() * 8 {
        return Err(p.err.packet_too_short);
    }
    let base = *cur;
    match &hi.wire {
        Some(words) if base.is_multiple_of(8) => {
            let at = base / 8;
            for w in words.iter() {
                let v = wire::load(data, at + w.at, w.bytes);
                for (f, &(shift, m)) in w.fields_mut(&mut phv.vals).iter_mut().zip(&w.parts) {
                    *f = ((v >> shift) & m) as u128;
                }
            }
        }
        _ => {
            let first = hi.first_field as usize;
            for (i, f) in p.fields[first..first + hi.nfields as usize]
                .iter()
                .enumerate()
            {
                phv.vals[first + i] = read_bits(data, base + f.offset as usize, f.width);
            }
        }
    }
    if let Some(vb) = &hi.varbit {
        let slot = &mut phv.varbits[vb.slot as usize];
        slot.0 = vbits as u32;
        slot.1.clear();
        let s = (base + hi.bits as usize) / 8;
        slot.1.extend_from_slice(&data[s..s + vbits / 8]);
    }
    p.set_valid(phv, h);
    if let Extract::Stack(s) = x {
        phv.stack_next[p.stacks[s as usize].counter as usize] += 1;
    }
    *cur += need;
    Ok(())
}

/// Serialises one header (fixed part + varbit) at the end of `out`.
#[inline]
pub(crate) fn emit_header(p: &Program, phv: &Phv, h: u32, out: &mut Vec<u8>) {
    let hi = &p.headers[h as usize];
    out.reserve(hi.bits as usize / 8 + 8);
    let Some(words) = &hi.wire else {
        let mut sink = BitSink::new(out);
        feed_header(p, phv, h, &mut sink);
        sink.finish();
        return;
    };
    for w in words.iter() {
        let mut v = 0u64;
        for (&f, &(shift, m)) in w.fields(&phv.vals).iter().zip(&w.parts) {
            v |= (f as u64 & m) << shift;
        }
        wire::store(out, v, w.bytes);
    }
    if let Some(vb) = &hi.varbit {
        out.extend_from_slice(&phv.varbits[vb.slot as usize].1);
    }
}

/// Deparses valid headers in deparser order followed by the payload.
// Not inlined: compiled programs reach it only as a fallback, and inlined into
// `Switch::parsed` / `Switch::advance` it costs every packet register
// spills and stack set-up.
#[inline(never)]
pub(crate) fn deparse(p: &Program, pkt: &Pkt, out: &mut Vec<u8>) {
    out.clear();
    out.reserve(pkt.len.max(pkt.payload().len()) + 64);
    for &h in &p.deparser {
        if pkt.phv.valid[h as usize] {
            emit_header(p, &pkt.phv, h, out);
        }
    }
    out.extend_from_slice(pkt.payload());
}

/// Evaluates a calculation on the packet.
pub(crate) fn calculate(p: &Program, st: &mut State, pkt: &Pkt, calc: u32) -> u64 {
    let c = &p.calcs[calc as usize];
    let inputs = &c.inputs;
    match &st.calc_algos[calc as usize] {
        Algo::Csum16 => {
            if let Some(v) = c.csum_plan.as_ref().and_then(|plan| plan.run(&pkt.phv)) {
                return v as u64;
            }
            let mut sink = CsumSink::default();
            feed(p, pkt, inputs, &mut sink);
            sink.finish() as u64
        }
        // Ignores its input.
        Algo::Random => st.rng.next_u64(),
        _ => {
            let mut buf = std::mem::take(&mut st.bw);
            buf.clear();
            let mut sink = BitSink::new(&mut buf);
            feed(p, pkt, inputs, &mut sink);
            sink.finish();
            let r = st.calc_algos[calc as usize].compute(&buf, &mut st.rng);
            st.bw = buf;
            r
        }
    }
}

/// Appends a calculation's input bits to `sink`: fields, constants, whole
/// headers (as the deparser would write them) and the payload.
fn feed<S: Sink>(p: &Program, pkt: &Pkt, inputs: &[CalcIn], sink: &mut S) {
    let mut last_hdr: Option<u32> = None;
    for i in inputs {
        match i {
            CalcIn::Field(f, w, h) => {
                if *h != u32::MAX {
                    if !pkt.phv.valid[*h as usize] {
                        continue;
                    }
                    last_hdr = Some(*h);
                }
                sink.push(pkt.phv.vals[*f as usize], *w);
            }
            CalcIn::Const(v, w) => sink.push(*v, *w),
            CalcIn::Header(h) => {
                if pkt.phv.valid[*h as usize] {
                    feed_header(p, &pkt.phv, *h, sink);
                }
                last_hdr = Some(*h);
            }
            CalcIn::Varbit(h) => {
                if pkt.phv.valid[*h as usize] {
                    if let Some(vb) = &p.headers[*h as usize].varbit {
                        sink.push_bytes(&pkt.phv.varbits[vb.slot as usize].1);
                    }
                    last_hdr = Some(*h);
                }
            }
            CalcIn::Payload => {
                let pos = last_hdr.and_then(|h| p.deparser.iter().position(|&x| x == h));
                let from = pos.map_or(0, |x| x + 1);
                for &h in &p.deparser[from..] {
                    if pkt.phv.valid[h as usize] {
                        feed_header(p, &pkt.phv, h, sink);
                    }
                }
                sink.push_bytes(pkt.payload());
            }
        }
    }
}

/// A header's bits as [`emit_header`] writes them: its fields, zero bits up
/// to a whole byte, then its variable-length field.
fn feed_header<S: Sink>(p: &Program, phv: &Phv, h: u32, sink: &mut S) {
    let hi = &p.headers[h as usize];
    let first = hi.first_field as usize;
    let fields = &p.fields[first..first + hi.nfields as usize];
    for (f, &v) in fields.iter().zip(&phv.vals[first..first + fields.len()]) {
        sink.push(v, f.width);
    }
    let partial = hi.bits % 8;
    if partial != 0 {
        sink.push(0, 8 - partial);
    }
    if let Some(vb) = &hi.varbit {
        sink.push_bytes(&phv.varbits[vb.slot as usize].1);
    }
}

fn cond_ok(p: &Program, pkt: &Pkt, c: &Option<CExpr>) -> bool {
    match c {
        None => true,
        Some(e) => {
            e.eval(&EvalCtx {
                prog: p,
                phv: &pkt.phv,
                data: &[],
            }) != 0
        }
    }
}

/// Verifies checksums; sets `checksum_error` on a mismatch.
// Not inlined: compiled programs reach it only as a fallback, and inlined into
// `Switch::parsed` / `Switch::advance` it costs every packet register
// spills and stack set-up.
#[inline(never)]
pub(crate) fn verify_checksums(p: &Program, st: &mut State, pkt: &mut Pkt) {
    for ck in &p.checksums {
        if !ck.verify || !cond_ok(p, pkt, &ck.cond) {
            continue;
        }
        let v = calculate(p, st, pkt, ck.calc) as u128 & p.field_masks[ck.target as usize];
        if v != pkt.phv.vals[ck.target as usize] {
            p.set_opt(&mut pkt.phv, p.sm.checksum_error, 1);
        }
    }
}

/// Recomputes checksums into their target fields.
// Not inlined: compiled programs reach it only as a fallback, and inlined into
// `Switch::parsed` / `Switch::advance` it costs every packet register
// spills and stack set-up.
#[inline(never)]
pub(crate) fn update_checksums(p: &Program, st: &mut State, pkt: &mut Pkt) {
    for ck in &p.checksums {
        if !ck.update || !cond_ok(p, pkt, &ck.cond) {
            continue;
        }
        let v = calculate(p, st, pkt, ck.calc);
        p.set(&mut pkt.phv, ck.target, v as Val);
    }
}

/// Runs a control pipeline from `start`.
pub(crate) fn run_control(p: &Program, st: &mut State, pkt: &mut Pkt, start: Option<Node>) {
    let mut node = start;
    pkt.flags.exit = false;
    while let Some(n) = node {
        if pkt.flags.exit {
            break;
        }
        node = match n {
            Node::Cond(c) => {
                let c = &p.conds[c as usize];
                let v = c.expr.eval(&EvalCtx {
                    prog: p,
                    phv: &pkt.phv,
                    data: &[],
                });
                if v != 0 {
                    c.t
                } else {
                    c.f
                }
            }
            Node::Call(c) => {
                let c = &p.calls[c as usize];
                run_action(p, st, pkt, c.action, &[]);
                c.next
            }
            Node::Table(t) => match &p.tables[t as usize].fixed {
                Some(f) => {
                    run_action(p, st, pkt, f.action, &f.data);
                    f.next
                }
                None => apply_table(p, st, pkt, t),
            },
        };
    }
    pkt.flags.exit = false;
}

pub(crate) fn apply_table(p: &Program, st: &mut State, pkt: &mut Pkt, ti: u32) -> Option<Node> {
    let (hit, action) = select_action(p, st, pkt, ti);
    if let Some(a) = action {
        let data = std::mem::take(&mut st.adata);
        run_action(p, st, pkt, a, &data);
        st.adata = data;
    }
    p.tables[ti as usize].next_node(hit, action)
}

/// The action data [`select_action`] chose (valid until the next table).
pub(crate) fn selected_data(st: &State) -> &[Val] {
    &st.adata
}

/// Looks table `ti` up and does its bookkeeping (direct counter, meter,
/// last hit, action profile): returns whether it hit and the action to run,
/// its data in [`selected_data`]. Running the action is the caller's.
#[inline]
pub(crate) fn select_action(
    p: &Program,
    st: &mut State,
    pkt: &mut Pkt,
    ti: u32,
) -> (bool, Option<u32>) {
    match select_default(&p.tables[ti as usize], st, ti) {
        Some(action) => (false, action),
        None => select_general(p, st, pkt, ti),
    }
}

/// The short way of [`select_action`], for a table that cannot hit: no key
/// (router.p4's router_config) or no entries (its priority tables unless
/// priority rules are set), so it runs its default action: no key to
/// build, no entry to count or meter. When that default is a direct action
/// (or there is none), selects it (its data in [`selected_data`]) and
/// returns it; `None`: the general path's. Most tables a routed packet meets
/// (5 of 7) go this way, so it is kept apart from the general path's set-up.
#[inline(always)]
pub(crate) fn select_default(t: &TableDef, st: &mut State, ti: u32) -> Option<Option<u32>> {
    let ts = &st.tables[ti as usize];
    if !t.keys.is_empty() && ts.mt.count > 0 {
        return None;
    }
    match &ts.default {
        Some(ActionRef::Direct(d)) => {
            st.adata.clear();
            // Mostly one value (router.p4's set_priority(0)): a push, not a
            // call to memcpy.
            match &d.data[..] {
                [] => {}
                [v] => st.adata.push(*v),
                vs => st.adata.extend_from_slice(vs),
            }
            Some(Some(d.action))
        }
        None => {
            st.adata.clear();
            Some(None)
        }
        Some(_) => None,
    }
}

/// [`select_action`] for a table that may hit, or whose default is an
/// action profile's member or group.
#[inline(never)]
pub(crate) fn select_general(
    p: &Program,
    st: &mut State,
    pkt: &mut Pkt,
    ti: u32,
) -> (bool, Option<u32>) {
    let t = &p.tables[ti as usize];
    let mut hit = None;
    // An empty table misses whatever the key: not built.
    if !t.keys.is_empty() && st.tables[ti as usize].mt.count > 0 {
        let mut key = std::mem::take(&mut st.key);
        key.clear();
        let ctx = EvalCtx {
            prog: p,
            phv: &pkt.phv,
            data: &[],
        };
        for k in &t.keys {
            let v = match &k.src {
                KeySrc::Field(FieldRef::Static(f)) => pkt.phv.vals[*f as usize],
                KeySrc::Field(r) => r.resolve(&ctx).map_or(0, |f| pkt.phv.vals[f as usize]),
                KeySrc::Valid(h) => {
                    h.resolve(&ctx).is_some_and(|h| pkt.phv.valid[h as usize]) as u128
                }
            };
            key.push(v & k.static_mask);
        }
        hit = st.tables[ti as usize].mt.lookup(&key, &mut st.key_scratch);
        st.key = key;
    }
    let mut data = std::mem::take(&mut st.adata);
    data.clear();
    // What to run: a direct action (data copied), or a member / group.
    let mut indirect: Option<ActionRef> = None;
    let mut action = match hit {
        Some(h) => {
            let now = st.now_us;
            let len = pkt.len as u64;
            let bytes_meter = t.direct_meter.map(|m| p.meters[m as usize].bytes);
            let e = st.tables[ti as usize]
                .mt
                .get_mut(h)
                .expect("hit entry exists");
            e.packets += 1;
            e.bytes += len;
            e.last_hit_us = Some(now);
            let a = match &e.action {
                ActionRef::Direct(ae) => {
                    data.extend_from_slice(&ae.data);
                    Some(ae.action)
                }
                r => {
                    indirect = Some(r.clone());
                    None
                }
            };
            if let Some(bytes) = bytes_meter {
                let color = e.meter.execute(if bytes { len } else { 1 }, now);
                if let Some(l) = &p.meters[t.direct_meter.unwrap_or(0) as usize].result {
                    p.store(l, &mut pkt.phv, &[], color as Val);
                }
            }
            a
        }
        None => match &st.tables[ti as usize].default {
            Some(ActionRef::Direct(d)) => {
                data.extend_from_slice(&d.data);
                Some(d.action)
            }
            Some(r) => {
                indirect = Some(r.clone());
                None
            }
            None => None,
        },
    };
    if let (Some(r), Some(pi)) = (indirect, t.profile) {
        let member = match r {
            ActionRef::Member(m) => Some(m),
            ActionRef::Group(g) => {
                let n = st.profiles[pi as usize].groups[g as usize]
                    .as_ref()
                    .map_or(0, |g| g.members.len());
                match (n, p.profiles[pi as usize].selector) {
                    (0, _) | (_, None) => None,
                    (n, Some(calc)) => {
                        let hsh = calculate(p, st, pkt, calc);
                        st.profiles[pi as usize].groups[g as usize]
                            .as_ref()
                            .map(|g| g.members[(hsh % n as u64) as usize])
                    }
                }
            }
            ActionRef::Direct(_) => None,
        };
        if let Some(m) = member.and_then(|m| st.profiles[pi as usize].members[m as usize].as_ref())
        {
            data.extend_from_slice(&m.action.data);
            action = Some(m.action.action);
        }
    }
    st.adata = data;
    (hit.is_some(), action)
}

/// `v` as an index below `size` (registers, counters, meters): `None` when
/// it is out of range, negative included.
#[inline(always)]
pub(crate) fn idx(v: Val, size: usize) -> Option<usize> {
    // A negative `v` is a huge `u128`, so one comparison covers both ends.
    ((v as u128) < size as u128).then_some(v as usize)
}

fn copy_header(p: &Program, phv: &mut Phv, dst: u32, src: u32) {
    let (d, s) = (&p.headers[dst as usize], &p.headers[src as usize]);
    let n = d.nfields.min(s.nfields) as usize;
    let (df, sf) = (d.first_field as usize, s.first_field as usize);
    for i in 0..n {
        phv.vals[df + i] = phv.vals[sf + i];
    }
    if let (Some(dv), Some(sv)) = (&d.varbit, &s.varbit) {
        let v = phv.varbits[sv.slot as usize].clone();
        phv.varbits[dv.slot as usize] = v;
    }
    phv.valid[dst as usize] = phv.valid[src as usize];
}

/// Zeroes a header's fields and empties its variable-length field (BMv2's
/// `add_header` on an invalid header).
fn reset_header(p: &Program, phv: &mut Phv, h: u32) {
    let hi = &p.headers[h as usize];
    let f = hi.first_field as usize;
    phv.vals[f..f + hi.nfields as usize].fill(0);
    if let Some(v) = &hi.varbit {
        let vb = &mut phv.varbits[v.slot as usize];
        vb.0 = 0;
        vb.1.clear();
    }
}

/// Runs action `a` with action data `data`.
#[inline]
pub(crate) fn run_action(p: &Program, st: &mut State, pkt: &mut Pkt, a: u32, data: &[Val]) {
    let action = &p.actions[a as usize];
    match &action.steps {
        Some(steps) => steps.run(p, st, pkt, data),
        None => run_prims(p, st, pkt, &action.prims, data),
    }
}

/// Executes a primitive list with action data `data`.
pub(crate) fn run_prims(p: &Program, st: &mut State, pkt: &mut Pkt, prims: &[Prim], data: &[Val]) {
    let mut pc = 0usize;
    let mut steps = 0usize;
    while pc < prims.len() {
        steps += 1;
        if steps > MAX_ACTION_STEPS {
            break;
        }
        let prim = &prims[pc];
        pc += 1;
        macro_rules! ev {
            ($e:expr) => {
                $e.eval(&EvalCtx {
                    prog: p,
                    phv: &pkt.phv,
                    data,
                })
            };
        }
        macro_rules! hdr {
            ($h:expr) => {
                $h.resolve(&EvalCtx {
                    prog: p,
                    phv: &pkt.phv,
                    data,
                })
            };
        }
        match prim {
            Prim::Assign(l, e) => {
                let v = ev!(e);
                p.store(l, &mut pkt.phv, data, v);
            }
            Prim::AssignMany(v) => {
                for (l, e) in v {
                    let x = ev!(e);
                    p.store(l, &mut pkt.phv, data, x);
                }
            }
            Prim::AssignVL(d, s) => {
                if let (Some(d), Some(s)) = (hdr!(d), hdr!(s)) {
                    if let (Some(dv), Some(sv)) =
                        (&p.headers[d as usize].varbit, &p.headers[s as usize].varbit)
                    {
                        let v = pkt.phv.varbits[sv.slot as usize].clone();
                        pkt.phv.varbits[dv.slot as usize] = v;
                    }
                }
            }
            Prim::AssignHeader(d, s) => {
                if let (Some(d), Some(s)) = (hdr!(d), hdr!(s)) {
                    copy_header(p, &mut pkt.phv, d, s);
                    if pkt.phv.valid[d as usize] {
                        p.set_valid(&mut pkt.phv, d);
                    }
                }
            }
            Prim::AssignUnion(d, s) => {
                let (dh, sh) = (
                    &p.unions[*d as usize].headers,
                    &p.unions[*s as usize].headers,
                );
                for (&a, &b) in dh.iter().zip(sh) {
                    copy_header(p, &mut pkt.phv, a, b);
                }
            }
            Prim::AssignStack(d, s) => {
                let (dh, sh) = (
                    &p.stacks[*d as usize].headers,
                    &p.stacks[*s as usize].headers,
                );
                for (&a, &b) in dh.iter().zip(sh) {
                    copy_header(p, &mut pkt.phv, a, b);
                }
                pkt.phv.stack_next[*d as usize] = pkt.phv.stack_next[*s as usize];
            }
            Prim::AssignUnionStack(d, s) => {
                let (du, su) = (&p.union_stacks[*d as usize], &p.union_stacks[*s as usize]);
                for (&dm, &sm) in du.members.iter().zip(&su.members) {
                    let (dh, sh) = (
                        &p.stacks[dm as usize].headers,
                        &p.stacks[sm as usize].headers,
                    );
                    for (&a, &b) in dh.iter().zip(sh) {
                        copy_header(p, &mut pkt.phv, a, b);
                    }
                }
                pkt.phv.stack_next[du.counter as usize] = pkt.phv.stack_next[su.counter as usize];
            }
            Prim::AddHeader(h, reset) => {
                if let Some(h) = hdr!(h) {
                    if !pkt.phv.valid[h as usize] {
                        if *reset {
                            reset_header(p, &mut pkt.phv, h);
                        }
                        p.set_valid(&mut pkt.phv, h);
                    }
                }
            }
            Prim::RemoveHeader(h) => {
                if let Some(h) = hdr!(h) {
                    if !p.headers[h as usize].metadata {
                        pkt.phv.valid[h as usize] = false;
                    }
                }
            }
            Prim::MarkToDrop => {
                p.set_opt(&mut pkt.phv, p.sm.egress_spec, 511);
                p.set_opt(&mut pkt.phv, p.sm.mcast_grp, 0);
            }
            Prim::NoOp => {}
            Prim::RegRead(l, r, i) => {
                let i = ev!(i);
                let v = idx(i, p.registers[*r as usize].size)
                    .map_or(0, |i| st.registers[*r as usize][i]);
                p.store(l, &mut pkt.phv, data, v as Val);
            }
            Prim::RegWrite(r, i, v) => {
                let (i, v) = (ev!(i), ev!(v));
                let def = &p.registers[*r as usize];
                if let Some(i) = idx(i, def.size) {
                    st.registers[*r as usize][i] = v as u128 & mask(def.width);
                }
            }
            Prim::Count(c, i) => {
                let i = ev!(i);
                if let Some(i) = idx(i, p.counters[*c as usize].size) {
                    let e = &mut st.counters[*c as usize][i];
                    e.0 += 1;
                    e.1 += pkt.len as u64;
                }
            }
            Prim::ExecMeter(m, i, l) => {
                let i = ev!(i);
                let def = &p.meters[*m as usize];
                let units = if def.bytes { pkt.len as u64 } else { 1 };
                let now = st.now_us;
                let color =
                    match st.meters[*m as usize].get_mut(idx(i, def.size).unwrap_or(usize::MAX)) {
                        Some(ms) => ms.execute(units, now),
                        None => 0,
                    };
                p.store(l, &mut pkt.phv, data, color as Val);
            }
            Prim::HashOffset(l, base, calc, size) => {
                let h = calculate(p, st, pkt, *calc) as Val;
                let (b, s) = (ev!(base), ev!(size));
                // BMv2 takes a size of 0 as 1: the result is the base.
                let v = if s > 0 { b.wrapping_add(h % s) } else { b };
                p.store(l, &mut pkt.phv, data, v);
            }
            Prim::RngUniform(l, lo, hi) => {
                let (lo, hi) = (ev!(lo), ev!(hi));
                let v = st.rng.range(lo.max(0) as u128, hi.max(0) as u128);
                p.store(l, &mut pkt.phv, data, v as Val);
            }
            Prim::CloneI2E(s, fl) | Prim::CloneE2E(s, fl) => {
                let s = ev!(s);
                pkt.flags.clone = Some((s as u32, *fl));
            }
            Prim::Resubmit(fl) => pkt.flags.resubmit = Some(*fl),
            Prim::Recirculate(fl) => pkt.flags.recirculate = Some(*fl),
            Prim::Truncate(n) => {
                let n = ev!(n);
                pkt.flags.truncate = Some(n.clamp(0, usize::MAX as Val) as usize);
            }
            Prim::Digest(r, list) => {
                let r = ev!(r);
                pkt.flags.digests.push((r as u128, *list));
            }
            Prim::Push(s, n) => {
                let n = ev!(n).clamp(0, 1 << 16) as usize;
                push_front(p, &mut pkt.phv, std::slice::from_ref(s), *s, n);
            }
            Prim::Pop(s, n) => {
                let n = ev!(n).clamp(0, 1 << 16) as usize;
                pop_front(p, &mut pkt.phv, std::slice::from_ref(s), *s, n);
            }
            Prim::PushUnions(u, n) => {
                let n = ev!(n).clamp(0, 1 << 16) as usize;
                let us = &p.union_stacks[*u as usize];
                push_front(p, &mut pkt.phv, &us.members, us.counter, n);
            }
            Prim::PopUnions(u, n) => {
                let n = ev!(n).clamp(0, 1 << 16) as usize;
                let us = &p.union_stacks[*u as usize];
                pop_front(p, &mut pkt.phv, &us.members, us.counter, n);
            }
            Prim::Log(fmt, args) => {
                if st.logs.is_some() {
                    let mut out = String::new();
                    let mut it = args.iter();
                    let mut rest = fmt.as_str();
                    while let Some(pos) = rest.find("{}") {
                        out.push_str(&rest[..pos]);
                        match it.next() {
                            Some(e) => out.push_str(&ev!(e).to_string()),
                            None => out.push_str("{}"),
                        }
                        rest = &rest[pos + 2..];
                    }
                    out.push_str(rest);
                    if let Some(l) = &mut st.logs {
                        l.push(out);
                    }
                }
            }
            Prim::Assert(c) => {
                if ev!(c) == 0 {
                    pkt.flags.assert_failed = true;
                    st.assert_failures += 1;
                    pkt.flags.exit = true;
                    return;
                }
            }
            Prim::Exit => {
                pkt.flags.exit = true;
                return;
            }
            Prim::Jump(t) => pc = *t,
            Prim::JumpIfZero(c, t) => {
                if ev!(c) == 0 {
                    pc = *t;
                }
            }
        }
    }
}

/// `push_front(n)` on the stacks `stacks` (one header stack, or the member
/// stacks of a union stack) counting in slot `counter`: elements move up by
/// `n`, the first `n` become invalid (every member of a union element).
fn push_front(p: &Program, phv: &mut Phv, stacks: &[u32], counter: u32, n: usize) {
    let mut len = 0;
    for &s in stacks {
        let hs = &p.stacks[s as usize].headers;
        len = hs.len();
        for i in (0..len).rev() {
            if i >= n {
                copy_header(p, phv, hs[i], hs[i - n]);
            } else {
                phv.valid[hs[i] as usize] = false;
            }
        }
    }
    let nx = &mut phv.stack_next[counter as usize];
    *nx = (*nx as usize + n).min(len) as u32;
}

/// `pop_front(n)`: elements move down by `n`, the last `n` become invalid.
fn pop_front(p: &Program, phv: &mut Phv, stacks: &[u32], counter: u32, n: usize) {
    for &s in stacks {
        let hs = &p.stacks[s as usize].headers;
        let len = hs.len();
        for i in 0..len {
            if i + n < len {
                copy_header(p, phv, hs[i], hs[i + n]);
            } else {
                phv.valid[hs[i] as usize] = false;
            }
        }
    }
    let nx = &mut phv.stack_next[counter as usize];
    *nx = (*nx as usize).saturating_sub(n) as u32;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(frame: &[u8], payload_at: usize) -> Pkt {
        Pkt {
            phv: Phv::new(0, &[], 0, 0),
            frame: frame.to_vec(),
            payload_at,
            len: frame.len(),
            flags: Flags::default(),
        }
    }

    #[test]
    fn deparsed_headers_go_in_front_of_the_payload_whatever_their_length() {
        // Parsed headers "hhhh", payload "data"; the deparser wrote `new`
        // into a buffer with stale bytes after it.
        for new in [&b"HHHH"[..], b"HH", b"", b"HHHHHH"] {
            let mut p = pkt(b"hhhhdata", 4);
            let mut out = new.to_vec();
            out.extend_from_slice(b"stale");
            p.finish_deparse(&mut out, new.len());
            assert_eq!(out, [new, b"data"].concat(), "{new:?}");
        }
        // Headers written in place: the packet keeps the other buffer, empty.
        let mut p = pkt(b"hhhhdata", 4);
        let mut out = b"HHHH".to_vec();
        p.finish_deparse(&mut out, 4);
        assert!(p.frame.is_empty() && p.payload().is_empty());
    }
}
