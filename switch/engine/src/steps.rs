//! Closure compilation of straight-line actions.
//!
//! Most actions are a short list of primitives without jumps: field
//! assignments, register reads and writes, counts, `mark_to_drop`. Running
//! them through [`run_prims`] costs a `match` on every primitive, a step
//! count, and general code for destinations that may be stack elements.
//! Here each primitive of such an action becomes one closure, built once
//! when the program is loaded, with its register size, field mask and
//! operand shapes decided then; the action runs as one call per primitive.
//!
//! Actions with control flow (`exit`, `assert`, the jumps of conditional
//! primitives) keep running through [`run_prims`], which stays the reference:
//! the tests run every action of the test programs both ways.

use crate::exec::{idx, run_prims, Pkt, State};
use crate::phv::{mask, Val};
use crate::program::{EvalCtx, Expr, LField, Prim, Program};
use std::sync::Arc;

/// One compiled primitive.
pub(crate) type StepFn = dyn Fn(&Program, &mut State, &mut Pkt, &[Val]) + Send + Sync;

/// A compiled action body. Shared, not copied, when the program is cloned.
#[derive(Clone)]
pub(crate) struct Steps(Arc<[Box<StepFn>]>);

impl Steps {
    /// Runs the action body with action data `data`.
    #[inline(always)]
    pub fn run(&self, p: &Program, st: &mut State, pkt: &mut Pkt, data: &[Val]) {
        for step in self.0.iter() {
            step(p, st, pkt, data);
        }
    }

    /// Runs the step of primitive `i` alone (the compiled pipelines call
    /// back for the primitives they leave to the steps). One step per
    /// primitive, in order.
    pub fn run_one(&self, i: usize, p: &Program, st: &mut State, pkt: &mut Pkt, data: &[Val]) {
        if let Some(step) = self.0.get(i) {
            step(p, st, pkt, data);
        }
    }
}

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Steps({})", self.0.len())
    }
}

/// Compiles `prims` when they have no control flow; `None` otherwise.
pub(crate) fn compile_steps(p: &Program, prims: &[Prim]) -> Option<Steps> {
    let mut steps = Vec::with_capacity(prims.len());
    for prim in prims {
        if matches!(
            prim,
            Prim::Exit | Prim::Assert(_) | Prim::Jump(_) | Prim::JumpIfZero(..)
        ) {
            return None;
        }
        steps.push(step(p, prim));
    }
    Some(Steps(steps.into()))
}

/// A value source with its shape decided at compile time: a constant, an
/// action parameter or a field is read inline, anything else is called.
enum Value {
    Const(Val),
    Local(usize),
    Field(usize),
    Other(crate::compile::CExpr),
}

impl Value {
    fn of(e: &crate::compile::CExpr) -> Value {
        match e.tree() {
            Expr::Const(v) => Value::Const(*v),
            Expr::Local(i) => Value::Local(*i as usize),
            Expr::Field(f) => Value::Field(*f as usize),
            _ => Value::Other(e.clone()),
        }
    }
}

/// Builds a step closure around `$body`, with `$v` bound to the value of
/// `$src`: one specialised copy of the closure per value shape.
macro_rules! with_value {
    ($src:expr, |$v:ident, $p:ident, $st:ident, $pkt:ident, $data:ident| $body:block) => {
        match Value::of($src) {
            Value::Const(k) => Box::new(
                move |$p: &Program, $st: &mut State, $pkt: &mut Pkt, $data: &[Val]| {
                    let _ = (&$p, &$st, &$data);
                    let $v = k;
                    $body
                },
            ) as Box<StepFn>,
            Value::Local(i) => Box::new(
                move |$p: &Program, $st: &mut State, $pkt: &mut Pkt, $data: &[Val]| {
                    let _ = (&$p, &$st);
                    let $v = $data.get(i).copied().unwrap_or(0);
                    $body
                },
            ),
            Value::Field(g) => Box::new(
                move |$p: &Program, $st: &mut State, $pkt: &mut Pkt, $data: &[Val]| {
                    let _ = (&$p, &$st, &$data);
                    let $v = $pkt.phv.vals[g] as Val;
                    $body
                },
            ),
            Value::Other(e) => Box::new(
                move |$p: &Program, $st: &mut State, $pkt: &mut Pkt, $data: &[Val]| {
                    let _ = &$st;
                    let $v = e.eval(&EvalCtx {
                        prog: $p,
                        phv: &$pkt.phv,
                        data: $data,
                    });
                    $body
                },
            ),
        }
    };
}

fn step(p: &Program, prim: &Prim) -> Box<StepFn> {
    match prim {
        Prim::Assign(LField::Static { f, mask }, e) => {
            let (f, m) = (*f as usize, *mask);
            with_value!(e, |v, p, st, pkt, data| {
                pkt.phv.vals[f] = (v as u128) & m;
            })
        }
        Prim::RegRead(LField::Static { f, mask }, r, i) => {
            let (f, m, r) = (*f as usize, *mask, *r as usize);
            let size = p.registers[r].size;
            with_value!(i, |i, p, st, pkt, data| {
                let v = idx(i, size).map_or(0, |i| st.registers[r][i]);
                pkt.phv.vals[f] = v & m;
            })
        }
        Prim::RegWrite(r, i, v) => {
            let r = *r as usize;
            let (size, m) = (p.registers[r].size, mask(p.registers[r].width));
            let v = v.clone();
            with_value!(i, |i, p, st, pkt, data| {
                if let Some(i) = idx(i, size) {
                    let x = v.eval(&EvalCtx {
                        prog: p,
                        phv: &pkt.phv,
                        data,
                    });
                    st.registers[r][i] = x as u128 & m;
                }
            })
        }
        Prim::Count(c, i) => {
            let c = *c as usize;
            let size = p.counters[c].size;
            with_value!(i, |i, p, st, pkt, data| {
                if let Some(i) = idx(i, size) {
                    let e = &mut st.counters[c][i];
                    e.0 += 1;
                    e.1 += pkt.len as u64;
                }
            })
        }
        Prim::MarkToDrop => {
            let spec =
                p.sm.egress_spec
                    .map(|f| (f as usize, 511 & p.field_masks[f as usize]));
            let mcast = p.sm.mcast_grp.map(|f| f as usize);
            Box::new(move |_, _, pkt, _| {
                if let Some((f, drop_port)) = spec {
                    pkt.phv.vals[f] = drop_port;
                }
                if let Some(f) = mcast {
                    pkt.phv.vals[f] = 0;
                }
            })
        }
        // Everything else: the reference loop on this one primitive.
        other => {
            let prim = other.clone();
            Box::new(move |p, st, pkt, data| {
                run_prims(p, st, pkt, std::slice::from_ref(&prim), data)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Flags;
    use crate::phv::Phv;
    use crate::rng::Rng;

    const BASIC: &str = include_str!("../tests/fixtures/basic.json");
    const FEATURES: &str = include_str!("../tests/fixtures/features.json");

    /// Small values often, so register and counter indices land in range.
    fn value(rng: &mut Rng, m: u128) -> u128 {
        match rng.next_u64() % 3 {
            0 => rng.next_u64() as u128 % 4,
            1 => rng.next_u64() as u128 & m,
            _ => ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) & m,
        }
    }

    #[test]
    fn steps_match_the_reference_loop_on_every_action() {
        for (name, text) in [("basic", BASIC), ("features", FEATURES)] {
            let prog = crate::load::load(text).expect("fixture loads");
            let mut rng = Rng::new(5);
            let mut compiled = 0;
            for a in &prog.actions {
                let Some(steps) = &a.steps else {
                    continue;
                };
                compiled += 1;
                for _ in 0..300 {
                    let mut phv = Phv::new(
                        prog.fields.len(),
                        &prog.valid_init,
                        prog.stacks.len(),
                        prog.n_varbits,
                    );
                    for (v, &m) in phv.vals.iter_mut().zip(&prog.field_masks) {
                        *v = value(&mut rng, m);
                    }
                    let data: Vec<Val> = (a.params.iter())
                        .map(|&(_, w)| value(&mut rng, mask(w)) as Val)
                        .collect();
                    let mut reference = State::new(&prog, 3);
                    for (r, def) in reference.registers.iter_mut().zip(&prog.registers) {
                        for x in r.iter_mut() {
                            *x = value(&mut rng, mask(def.width));
                        }
                    }
                    let mut st = State::new(&prog, 3);
                    st.registers = reference.registers.clone();
                    let mut expected = Pkt {
                        phv,
                        frame: Vec::new(),
                        payload_at: 0,
                        len: 100,
                        flags: Flags::default(),
                    };
                    let mut got = expected.clone();
                    run_prims(&prog, &mut reference, &mut expected, &a.prims, &data);
                    steps.run(&prog, &mut st, &mut got, &data);
                    let what = format!("{name}: action {}", a.name);
                    assert_eq!(got.phv.vals, expected.phv.vals, "{what}");
                    assert_eq!(got.phv.valid, expected.phv.valid, "{what}");
                    assert_eq!(st.registers, reference.registers, "{what}");
                    assert_eq!(st.counters, reference.counters, "{what}");
                    assert_eq!(
                        format!("{:?}", got.flags),
                        format!("{:?}", expected.flags),
                        "{what}"
                    );
                }
            }
            assert!(
                compiled * 2 > prog.actions.len(),
                "{name}: {compiled} compiled"
            );
        }
    }
}
