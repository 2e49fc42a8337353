//! The compiled form of a BMv2 JSON program: names resolved to indices,
//! expressions to trees over the flat [`Phv`], tables to key extractors.
//! Built by [`crate::load`]; immutable while packets run.

use crate::calc::Algo;
use crate::compile::CExpr;
use crate::csum_plan::CsumPlan;
use crate::phv::{mask, sext, Phv, Val};
use std::collections::HashMap;

/// A field of a header instance.
#[derive(Debug, Clone)]
pub(crate) struct FieldInfo {
    pub header: u32,
    /// Bit offset within the header's fixed part.
    pub offset: u32,
    pub width: u32,
    pub signed: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct VarbitInfo {
    pub slot: u32,
    pub max_bits: u32,
}

/// A header (or metadata) instance.
#[derive(Debug, Clone)]
pub(crate) struct HeaderInfo {
    pub name: String,
    pub first_field: u32,
    pub nfields: u32,
    /// Width of the fixed-size part in bits.
    pub bits: u32,
    pub metadata: bool,
    pub varbit: Option<VarbitInfo>,
    pub union: Option<u32>,
    /// The fixed part as whole-byte words, when it falls into them.
    pub wire: Option<Box<[crate::wire::Word]>>,
    /// The header type (an index in the JSON's `header_types`).
    pub type_id: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct StackInfo {
    pub headers: Vec<u32>,
    /// The `Phv::stack_next` slot this stack counts in: its own, or for
    /// the member stacks of a header union stack, the union stack's one.
    pub counter: u32,
}

/// A header union stack, as one header stack per union member (member `m`
/// of element `i` is `stacks[members[m]].headers[i]`) that share one
/// next-index counter.
#[derive(Debug, Clone)]
pub(crate) struct UnionStackInfo {
    pub members: Vec<u32>,
    pub counter: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct UnionInfo {
    pub headers: Vec<u32>,
}

/// Reference to a field, resolved at load time where possible.
#[derive(Debug, Clone)]
pub(crate) enum FieldRef {
    Static(u32),
    /// Field `off` of the last valid element of a stack.
    StackLast {
        stack: u32,
        off: u32,
    },
    /// Field `off` of `stack[idx]`.
    Dyn {
        stack: u32,
        idx: Box<Expr>,
        off: u32,
    },
}

/// Reference to a header instance.
#[derive(Debug, Clone)]
pub(crate) enum HdrRef {
    Static(u32),
    Dyn { stack: u32, idx: Box<Expr> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    LAnd,
    LOr,
}

/// A compiled expression. Values are `i128`; booleans are 0 / 1.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    Const(Val),
    /// Unsigned field read.
    Field(u32),
    /// Signed field read (sign-extended from `width`).
    SField(u32, u32),
    FieldRef(FieldRef),
    /// Action parameter (runtime data).
    Local(u32),
    Valid(HdrRef),
    ValidUnion(u32),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    BitNot(Box<Expr>),
    Neg(Box<Expr>),
    D2B(Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    TwoCompMod(Box<Expr>, Box<Expr>),
    SatCast(Box<Expr>, Box<Expr>),
    USatCast(Box<Expr>, Box<Expr>),
    LastStackIndex(u32),
    SizeStack(u32),
    /// Header equality as BMv2 has it: same header type, both valid, every
    /// field (and the variable-length bytes) equal. 1 / 0. Boxed: two
    /// `HdrRef`s inline would make every `Expr` 8 bytes larger.
    HdrEq(Box<(HdrRef, HdrRef)>),
    /// Header union equality as BMv2 has it: both valid, the same member
    /// valid, and that member's headers equal. 1 / 0.
    UnionEq(u32, u32),
    /// `==` on the variable-length fields of two headers (by header): equal
    /// values, as BMv2 compares them (numerically: leading zero bytes do
    /// not count). 1 / 0.
    VarbitEq(u32, u32),
}

/// What an expression needs at run time besides itself.
pub(crate) struct EvalCtx<'a> {
    pub prog: &'a Program,
    pub phv: &'a Phv,
    pub data: &'a [Val],
}

impl FieldRef {
    /// The field index, or `None` when a stack index is out of range.
    #[inline]
    pub fn resolve(&self, c: &EvalCtx) -> Option<u32> {
        match self {
            FieldRef::Static(f) => Some(*f),
            FieldRef::StackLast { stack, off } => {
                let s = &c.prog.stacks[*stack as usize];
                let n = c.phv.stack_next[s.counter as usize];
                if n == 0 {
                    return None;
                }
                let h = s.headers[(n - 1) as usize];
                Some(c.prog.headers[h as usize].first_field + off)
            }
            FieldRef::Dyn { stack, idx, off } => {
                let s = &c.prog.stacks[*stack as usize];
                let i = idx.eval(c);
                if i < 0 || i as usize >= s.headers.len() {
                    return None;
                }
                let h = s.headers[i as usize];
                Some(c.prog.headers[h as usize].first_field + off)
            }
        }
    }
}

impl HdrRef {
    #[inline]
    pub fn resolve(&self, c: &EvalCtx) -> Option<u32> {
        match self {
            HdrRef::Static(h) => Some(*h),
            HdrRef::Dyn { stack, idx } => {
                let s = &c.prog.stacks[*stack as usize];
                let i = idx.eval(c);
                if i < 0 || i as usize >= s.headers.len() {
                    None
                } else {
                    Some(s.headers[i as usize])
                }
            }
        }
    }
}

#[inline]
fn b(x: bool) -> Val {
    x as Val
}

/// Bits of a width operand, clamped to what an `i128` can hold.
fn width_of(w: Val) -> u32 {
    w.clamp(0, 128) as u32
}

/// A binary operator on evaluated operands (`LAnd` / `LOr` without
/// short-circuiting: callers that need it evaluate the right side lazily).
#[inline(always)]
pub(crate) fn apply_bin(op: BinOp, a: Val, z: Val) -> Val {
    match op {
        BinOp::Add => a.wrapping_add(z),
        BinOp::Sub => a.wrapping_sub(z),
        BinOp::Mul => a.wrapping_mul(z),
        BinOp::Div => {
            if z == 0 {
                0
            } else {
                a.wrapping_div(z)
            }
        }
        BinOp::Mod => {
            if z == 0 {
                0
            } else {
                a.wrapping_rem(z)
            }
        }
        BinOp::Shl => {
            if !(0..128).contains(&z) {
                0
            } else {
                a.wrapping_shl(z as u32)
            }
        }
        BinOp::Shr => {
            if z < 0 {
                a
            } else if z >= 128 {
                if a < 0 {
                    -1
                } else {
                    0
                }
            } else {
                a >> z
            }
        }
        BinOp::And => a & z,
        BinOp::Or => a | z,
        BinOp::Xor => a ^ z,
        BinOp::Eq => b(a == z),
        BinOp::Ne => b(a != z),
        BinOp::Lt => b(a < z),
        BinOp::Gt => b(a > z),
        BinOp::Le => b(a <= z),
        BinOp::Ge => b(a >= z),
        BinOp::LAnd => b(a != 0 && z != 0),
        BinOp::LOr => b(a != 0 || z != 0),
    }
}

impl Expr {
    /// Evaluates with BMv2's semantics: arbitrary-precision arithmetic,
    /// truncated only when stored (here: exact while intermediate values fit
    /// in 128 bits).
    pub fn eval(&self, c: &EvalCtx) -> Val {
        match self {
            Expr::Const(v) => *v,
            Expr::Field(f) => c.phv.vals[*f as usize] as Val,
            Expr::SField(f, w) => sext(c.phv.vals[*f as usize], *w),
            Expr::FieldRef(r) => match r.resolve(c) {
                Some(f) => {
                    let fi = &c.prog.fields[f as usize];
                    let v = c.phv.vals[f as usize];
                    if fi.signed {
                        sext(v, fi.width)
                    } else {
                        v as Val
                    }
                }
                None => 0,
            },
            Expr::Local(i) => c.data.get(*i as usize).copied().unwrap_or(0),
            Expr::Valid(h) => match h.resolve(c) {
                Some(h) => b(c.phv.valid[h as usize]),
                None => 0,
            },
            Expr::ValidUnion(u) => b(c.prog.unions[*u as usize]
                .headers
                .iter()
                .any(|&h| c.phv.valid[h as usize])),
            Expr::Bin(op, l, r) => {
                match op {
                    BinOp::LAnd => return b(l.eval(c) != 0 && r.eval(c) != 0),
                    BinOp::LOr => return b(l.eval(c) != 0 || r.eval(c) != 0),
                    _ => {}
                }
                apply_bin(*op, l.eval(c), r.eval(c))
            }
            Expr::Not(x) => b(x.eval(c) == 0),
            Expr::BitNot(x) => !x.eval(c),
            Expr::Neg(x) => x.eval(c).wrapping_neg(),
            Expr::D2B(x) => b(x.eval(c) != 0),
            Expr::Cond(k, t, f) => {
                if k.eval(c) != 0 {
                    t.eval(c)
                } else {
                    f.eval(c)
                }
            }
            Expr::TwoCompMod(x, w) => {
                let w = width_of(w.eval(c));
                if w == 0 {
                    return 0;
                }
                sext((x.eval(c) as u128) & mask(w), w)
            }
            Expr::SatCast(x, w) => {
                let w = width_of(w.eval(c));
                if w == 0 {
                    return 0;
                }
                let v = x.eval(c);
                if w >= 128 {
                    return v;
                }
                let max = (1i128 << (w - 1)) - 1;
                let min = -(1i128 << (w - 1));
                v.clamp(min, max)
            }
            Expr::USatCast(x, w) => {
                let w = width_of(w.eval(c));
                let v = x.eval(c);
                if w >= 127 {
                    return v.max(0);
                }
                v.clamp(0, (1i128 << w) - 1)
            }
            Expr::LastStackIndex(s) => c.phv.stack_next[*s as usize] as Val - 1,
            Expr::SizeStack(s) => c.phv.stack_next[*s as usize] as Val,
            Expr::HdrEq(pair) => match (pair.0.resolve(c), pair.1.resolve(c)) {
                (Some(a), Some(z)) => b(headers_equal(c, a, z)),
                _ => 0,
            },
            Expr::UnionEq(a, z) => {
                let valid_member = |u: u32| {
                    (c.prog.unions[u as usize].headers.iter())
                        .position(|&h| c.phv.valid[h as usize])
                };
                match (valid_member(*a), valid_member(*z)) {
                    (Some(i), Some(j)) if i == j => b(headers_equal(
                        c,
                        c.prog.unions[*a as usize].headers[i],
                        c.prog.unions[*z as usize].headers[j],
                    )),
                    _ => 0,
                }
            }
            Expr::VarbitEq(a, z) => {
                let bytes = |h: u32| match &c.prog.headers[h as usize].varbit {
                    Some(v) => {
                        let b = &c.phv.varbits[v.slot as usize].1;
                        &b[b.iter().take_while(|&&x| x == 0).count()..]
                    }
                    None => &[],
                };
                b(bytes(*a) == bytes(*z))
            }
        }
    }
}

/// BMv2's `Header::cmp`: the same header type, both valid, and every field
/// equal (the variable-length field by its bytes). Two invalid headers are
/// not equal.
fn headers_equal(c: &EvalCtx, a: u32, z: u32) -> bool {
    let (ha, hz) = (&c.prog.headers[a as usize], &c.prog.headers[z as usize]);
    if ha.type_id != hz.type_id || !c.phv.valid[a as usize] || !c.phv.valid[z as usize] {
        return false;
    }
    let n = ha.nfields as usize;
    let (fa, fz) = (ha.first_field as usize, hz.first_field as usize);
    if c.phv.vals[fa..fa + n] != c.phv.vals[fz..fz + n] {
        return false;
    }
    match (&ha.varbit, &hz.varbit) {
        (Some(va), Some(vz)) => c.phv.varbits[va.slot as usize] == c.phv.varbits[vz.slot as usize],
        _ => true,
    }
}

/// A field destination with its mask.
#[derive(Debug, Clone)]
pub(crate) enum LField {
    Static { f: u32, mask: u128 },
    Ref(FieldRef),
}

/// One action primitive.
#[derive(Debug, Clone)]
pub(crate) enum Prim {
    Assign(LField, CExpr),
    /// Several assignments as one primitive (fields wider than 128 bits).
    AssignMany(Vec<(LField, CExpr)>),
    AssignVL(HdrRef, HdrRef),
    AssignHeader(HdrRef, HdrRef),
    AssignUnion(u32, u32),
    AssignStack(u32, u32),
    AssignUnionStack(u32, u32),
    /// Marks a header valid; with `true` (BMv2's `add_header`) an invalid
    /// header's fields are zeroed first, with `false` (`add_header_fast`)
    /// they are left as they are.
    AddHeader(HdrRef, bool),
    RemoveHeader(HdrRef),
    MarkToDrop,
    NoOp,
    RegRead(LField, u32, CExpr),
    RegWrite(u32, CExpr, CExpr),
    Count(u32, CExpr),
    ExecMeter(u32, CExpr, LField),
    HashOffset(LField, CExpr, u32, CExpr),
    RngUniform(LField, Expr, Expr),
    CloneI2E(Expr, Option<u32>),
    CloneE2E(Expr, Option<u32>),
    Resubmit(Option<u32>),
    Recirculate(Option<u32>),
    Truncate(Expr),
    Digest(Expr, u32),
    Push(u32, Expr),
    Pop(u32, Expr),
    PushUnions(u32, Expr),
    PopUnions(u32, Expr),
    Log(String, Vec<Expr>),
    Assert(CExpr),
    Exit,
    Jump(usize),
    JumpIfZero(CExpr, usize),
}

/// An action: parameters and primitives.
#[derive(Debug, Clone)]
pub(crate) struct Action {
    pub name: String,
    pub id: u64,
    pub params: Vec<(String, u32)>,
    pub prims: Vec<Prim>,
    /// The primitives compiled to closures when they have no control flow
    /// (filled in once the whole program is loaded).
    pub steps: Option<crate::steps::Steps>,
}

impl Action {
    pub fn new(name: String, id: u64, params: Vec<(String, u32)>, prims: Vec<Prim>) -> Action {
        Action {
            name,
            id,
            params,
            prims,
            steps: None,
        }
    }
}

/// Source of a parser `set` / transition key component.
#[derive(Debug, Clone)]
pub(crate) enum Src {
    Expr(CExpr),
    /// `lookahead`: (bit offset from the cursor, width).
    Lookahead(u32, u32),
}

#[derive(Debug, Clone)]
pub(crate) enum ParserOp {
    Extract(Extract),
    ExtractVL(Extract, CExpr),
    Set(LField, Src),
    Verify(CExpr, CExpr),
    /// Advance by a number of bits.
    Advance(CExpr),
    Primitive(Prim),
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Extract {
    Header(u32),
    Stack(u32),
}

#[derive(Debug, Clone)]
pub(crate) enum Transition {
    Value {
        value: u128,
        mask: u128,
        next: Option<u32>,
    },
    Vset {
        vset: u32,
        mask: u128,
        next: Option<u32>,
    },
    Default(Option<u32>),
}

#[derive(Debug, Clone)]
pub(crate) struct ParseState {
    pub ops: Vec<ParserOp>,
    /// Key components and their byte-padded widths in bits.
    pub key: Vec<(Src, u32, u32)>,
    pub transitions: Vec<Transition>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Node {
    Table(u32),
    Cond(u32),
    Call(u32),
}

#[derive(Debug, Clone)]
pub(crate) struct Conditional {
    pub expr: CExpr,
    pub t: Option<Node>,
    pub f: Option<Node>,
}

#[derive(Debug, Clone)]
pub(crate) struct ActionCall {
    pub action: u32,
    pub next: Option<Node>,
}

/// Match kind of one key component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// `exact`
    Exact,
    /// `lpm`
    Lpm,
    /// `ternary`
    Ternary,
    /// `range`
    Range,
    /// `optional`
    Optional,
    /// `valid` (a header's validity, 1 bit)
    Valid,
}

#[derive(Debug, Clone)]
pub(crate) enum KeySrc {
    Field(FieldRef),
    Valid(HdrRef),
}

#[derive(Debug, Clone)]
pub(crate) struct KeyField {
    pub name: String,
    pub kind: MatchKind,
    pub src: KeySrc,
    pub width: u32,
    pub static_mask: u128,
}

/// An action with its data, as stored in an entry or default entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ActionEntry {
    pub action: u32,
    pub data: Box<[Val]>,
}

/// What a table entry (or default entry) runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ActionRef {
    Direct(ActionEntry),
    /// An action profile member (indirect tables).
    Member(u32),
    /// An action selector group (indirect_ws tables).
    Group(u32),
}

/// An action profile, possibly with a selector.
#[derive(Debug, Clone)]
pub(crate) struct ProfileDef {
    pub name: String,
    pub max_size: usize,
    /// Calculation hashing the selector input.
    pub selector: Option<u32>,
    /// Actions members may use (those of the tables using the profile).
    pub actions: Vec<u32>,
}

#[derive(Debug, Clone)]
pub(crate) struct ConstEntry {
    pub key: Vec<crate::table::MatchValue>,
    pub priority: i32,
    pub action: ActionEntry,
}

#[derive(Debug, Clone)]
pub(crate) struct TableDef {
    pub name: String,
    pub id: u64,
    pub keys: Vec<KeyField>,
    pub actions: Vec<u32>,
    /// Next node per action (action index, node), used when no
    /// `__HIT__`/`__MISS__`.
    // A short list, looked up on every table application: a table has a few
    // actions, and a scan of them is cheaper than hashing (a hash map showed
    // in profiles).
    pub next_by_action: Box<[(u32, Option<Node>)]>,
    pub base_next: Option<Node>,
    pub next_hit: Option<Option<Node>>,
    pub next_miss: Option<Option<Node>>,
    pub default_entry: Option<ActionEntry>,
    pub default_const: bool,
    pub const_entries: Option<Vec<ConstEntry>>,
    pub with_counters: bool,
    pub direct_meter: Option<u32>,
    pub max_size: usize,
    /// Action profile of an indirect table.
    pub profile: Option<u32>,
    /// A table without keys, counters, meters or action profile whose
    /// default action is const always runs that action and goes on to the
    /// same node: the tables p4c makes around actions called from control
    /// code.
    pub fixed: Option<FixedApply>,
}

/// What applying a [`TableDef::fixed`] table always does.
#[derive(Debug, Clone)]
pub(crate) struct FixedApply {
    pub action: u32,
    pub data: Box<[Val]>,
    pub next: Option<Node>,
}

impl TableDef {
    /// The table's [`FixedApply`], if it is one (see [`TableDef::fixed`]).
    pub fn fixed_apply(&self) -> Option<FixedApply> {
        if !self.keys.is_empty()
            || !self.default_const
            || self.with_counters
            || self.direct_meter.is_some()
            || self.profile.is_some()
        {
            return None;
        }
        let d = self.default_entry.as_ref()?;
        Some(FixedApply {
            action: d.action,
            data: d.data.clone(),
            next: self.next_node(false, Some(d.action)),
        })
    }

    /// The node after this table: `__HIT__` / `__MISS__` when the program
    /// has them, else the one for the action that ran (`action`, if any).
    /// Not inlined: inlined into `run_control` it cost about 200 instructions
    /// a routed packet (cachegrind), by crowding the rest of the loop.
    #[inline(never)]
    pub fn next_node(&self, hit: bool, action: Option<u32>) -> Option<Node> {
        self.next_node_inline(hit, action)
    }

    /// [`TableDef::next_node`], inlined: for the compiled code's table
    /// callback, which does little else.
    #[inline(always)]
    pub fn next_node_inline(&self, hit: bool, action: Option<u32>) -> Option<Node> {
        match (hit, &self.next_hit, &self.next_miss) {
            (true, Some(n), _) | (false, _, Some(n)) => *n,
            _ => match action {
                Some(a) => self
                    .next_by_action
                    .iter()
                    .find(|&&(x, _)| x == a)
                    .map_or(self.base_next, |&(_, n)| n),
                None => self.base_next,
            },
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum CalcIn {
    /// Field index, width, header (`u32::MAX` for metadata: always valid).
    Field(u32, u32, u32),
    Const(u128, u32),
    Header(u32),
    /// The variable-length field of a header: its current bytes (none when
    /// the header is invalid).
    Varbit(u32),
    Payload,
}

#[derive(Debug, Clone)]
pub(crate) struct Calculation {
    pub algo: Algo,
    pub inputs: Vec<CalcIn>,
    /// For `csum16` over fields of one header: the sum precomputed per field.
    pub csum_plan: Option<CsumPlan>,
}

impl Calculation {
    pub fn new(algo: Algo, inputs: Vec<CalcIn>, headers: &[HeaderInfo]) -> Calculation {
        let slot_of = |h: u32| Some(headers.get(h as usize)?.varbit.as_ref()?.slot);
        let csum_plan = match algo {
            Algo::Csum16 => CsumPlan::new(&inputs, slot_of),
            _ => None,
        };
        Calculation {
            algo,
            inputs,
            csum_plan,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Checksum {
    pub target: u32,
    pub calc: u32,
    pub verify: bool,
    pub update: bool,
    pub cond: Option<CExpr>,
}

#[derive(Debug, Clone)]
pub(crate) struct RegisterDef {
    pub name: String,
    pub size: usize,
    pub width: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct CounterDef {
    pub name: String,
    pub size: usize,
    pub direct_table: Option<u32>,
}

#[derive(Debug, Clone)]
pub(crate) struct MeterDef {
    pub name: String,
    pub size: usize,
    pub bytes: bool,
    pub direct_table: Option<u32>,
    pub result: Option<LField>,
}

#[derive(Debug, Clone)]
pub(crate) struct VsetDef {
    pub name: String,
    pub width: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct LearnList {
    pub name: String,
    pub fields: Vec<u32>,
}

/// Indices of the v1model standard metadata fields (absent ones are `None`).
#[derive(Debug, Clone, Default)]
pub(crate) struct StdMeta {
    pub ingress_port: Option<u32>,
    pub egress_spec: Option<u32>,
    pub egress_port: Option<u32>,
    pub instance_type: Option<u32>,
    pub packet_length: Option<u32>,
    pub enq_timestamp: Option<u32>,
    pub enq_qdepth: Option<u32>,
    pub deq_timedelta: Option<u32>,
    pub deq_qdepth: Option<u32>,
    pub ingress_global_timestamp: Option<u32>,
    pub egress_global_timestamp: Option<u32>,
    pub mcast_grp: Option<u32>,
    pub egress_rid: Option<u32>,
    pub checksum_error: Option<u32>,
    pub parser_error: Option<u32>,
    pub priority: Option<u32>,
}

/// Error codes the engine raises itself.
#[derive(Debug, Clone)]
pub(crate) struct ErrCodes {
    pub no_error: Val,
    pub packet_too_short: Val,
    pub no_match: Val,
    pub stack_oob: Val,
    pub header_too_short: Val,
    pub invalid_arg: Val,
}

/// A loaded program.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub fields: Vec<FieldInfo>,
    pub field_masks: Vec<u128>,
    pub field_by_name: HashMap<String, u32>,
    pub headers: Vec<HeaderInfo>,
    pub header_by_name: HashMap<String, u32>,
    pub valid_init: Vec<bool>,
    pub stacks: Vec<StackInfo>,
    pub unions: Vec<UnionInfo>,
    pub union_stacks: Vec<UnionStackInfo>,
    pub n_varbits: usize,
    pub errors: Vec<(String, Val)>,
    pub err: ErrCodes,
    pub states: Vec<ParseState>,
    pub parser_init: Option<u32>,
    pub deparser: Vec<u32>,
    pub actions: Vec<Action>,
    pub action_by_name: HashMap<String, u32>,
    pub tables: Vec<TableDef>,
    pub table_by_name: HashMap<String, u32>,
    pub conds: Vec<Conditional>,
    pub calls: Vec<ActionCall>,
    pub ingress: Option<Node>,
    pub egress: Option<Node>,
    pub calcs: Vec<Calculation>,
    pub profiles: Vec<ProfileDef>,
    pub calc_by_name: HashMap<String, u32>,
    pub checksums: Vec<Checksum>,
    pub registers: Vec<RegisterDef>,
    pub counters: Vec<CounterDef>,
    pub meters: Vec<MeterDef>,
    pub vsets: Vec<VsetDef>,
    pub field_lists: HashMap<u64, Vec<u32>>,
    pub learn_lists: HashMap<u64, LearnList>,
    pub sm: StdMeta,
}

impl Program {
    /// Writes `v` (truncated to the field's width) into field `f`.
    #[inline]
    pub fn set(&self, phv: &mut Phv, f: u32, v: Val) {
        phv.vals[f as usize] = (v as u128) & self.field_masks[f as usize];
    }

    #[inline]
    pub fn set_opt(&self, phv: &mut Phv, f: Option<u32>, v: Val) {
        if let Some(f) = f {
            self.set(phv, f, v);
        }
    }

    #[inline]
    pub fn get_opt(&self, phv: &Phv, f: Option<u32>) -> Val {
        match f {
            Some(f) => phv.vals[f as usize] as Val,
            None => 0,
        }
    }

    /// Marks a header valid, invalidating the other members of its union.
    #[inline]
    pub fn set_valid(&self, phv: &mut Phv, h: u32) {
        if let Some(u) = self.headers[h as usize].union {
            for &o in &self.unions[u as usize].headers {
                phv.valid[o as usize] = false;
            }
        }
        phv.valid[h as usize] = true;
    }

    /// Writes to a field destination.
    #[inline]
    pub fn store(&self, l: &LField, phv: &mut Phv, data: &[Val], v: Val) {
        match l {
            LField::Static { f, mask } => phv.vals[*f as usize] = (v as u128) & mask,
            LField::Ref(r) => {
                let f = r.resolve(&EvalCtx {
                    prog: self,
                    phv,
                    data,
                });
                if let Some(f) = f {
                    self.set(phv, f, v);
                }
            }
        }
    }
}

#[cfg(test)]
mod size_tests {
    /// Expressions sit in every action step and condition: new variants box
    /// their operands rather than grow them all.
    #[test]
    fn an_expression_stays_32_bytes() {
        assert_eq!(std::mem::size_of::<super::Expr>(), 32);
    }
}
