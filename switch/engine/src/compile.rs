//! Closure compilation of expressions.
//!
//! Walking an [`Expr`] tree costs one `match` dispatch per node, and that
//! dispatch is an indirect jump the CPU mispredicts often, since every node
//! of every expression goes through the same jump. Compiling a tree into
//! nested closures once, at load time, gives each operator its own code: an
//! operator whose operands are fields or constants reads them inline, so
//! `meta.q > 0` is one indirect call instead of three dispatches, and the
//! remaining indirect calls are spread over many call sites that predict well.
//!
//! [`Expr::eval`] stays the reference semantics; the tests check that both
//! agree on every operator over fields, signed fields, constants and
//! validity bits. Shapes the closures hand back to the tree (stacks, field
//! references, casts) are covered by the engine's end-to-end tests.

use crate::phv::{sext, Val};
use crate::program::{apply_bin, BinOp, EvalCtx, Expr, HdrRef};

/// A compiled expression: a closure over the evaluation context.
pub(crate) type EvalFn = dyn Fn(&EvalCtx) -> Val + Send + Sync;

/// An expression with its compiled closure. Evaluate with [`CExpr::eval`];
/// the tree is kept for inspection, `Debug` and `Clone`. The closure is
/// boxed, not shared: calling through an `Arc<dyn Fn>` recomputes where the
/// closure sits inside the allocation on every call.
pub(crate) struct CExpr {
    tree: Expr,
    run: Box<EvalFn>,
}

impl Clone for CExpr {
    fn clone(&self) -> CExpr {
        CExpr::new(self.tree.clone())
    }
}

impl CExpr {
    /// Compiles `tree`.
    pub fn new(tree: Expr) -> CExpr {
        let run = compile(&tree);
        CExpr { tree, run }
    }

    /// The expression tree.
    pub fn tree(&self) -> &Expr {
        &self.tree
    }

    /// Evaluates with the same result as [`Expr::eval`] on the tree.
    #[inline(always)]
    pub fn eval(&self, c: &EvalCtx) -> Val {
        (self.run)(c)
    }
}

impl From<Expr> for CExpr {
    fn from(tree: Expr) -> CExpr {
        CExpr::new(tree)
    }
}

impl std::fmt::Debug for CExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.tree.fmt(f)
    }
}

/// An operand as a binary operator sees it: read inline when it is a field
/// or a constant.
enum Operand {
    Const(Val),
    Field(usize),
    Any(Box<EvalFn>),
}

fn operand(e: &Expr) -> Operand {
    match e {
        Expr::Const(v) => Operand::Const(*v),
        Expr::Field(f) => Operand::Field(*f as usize),
        _ => Operand::Any(compile(e)),
    }
}

/// Compiles one expression tree into a closure.
pub(crate) fn compile(e: &Expr) -> Box<EvalFn> {
    match e {
        Expr::Const(v) => {
            let v = *v;
            Box::new(move |_| v)
        }
        Expr::Field(f) => {
            let f = *f as usize;
            Box::new(move |c| c.phv.vals[f] as Val)
        }
        Expr::SField(f, w) => {
            let (f, w) = (*f as usize, *w);
            Box::new(move |c| sext(c.phv.vals[f], w))
        }
        Expr::Local(i) => {
            let i = *i as usize;
            Box::new(move |c| c.data.get(i).copied().unwrap_or(0))
        }
        Expr::Valid(HdrRef::Static(h)) => {
            let h = *h as usize;
            Box::new(move |c| c.phv.valid[h] as Val)
        }
        Expr::Bin(op, l, r) => binary(*op, l, r),
        Expr::Not(x) => {
            let x = compile(x);
            Box::new(move |c| (x(c) == 0) as Val)
        }
        Expr::D2B(x) => {
            let x = compile(x);
            Box::new(move |c| (x(c) != 0) as Val)
        }
        Expr::BitNot(x) => {
            let x = compile(x);
            Box::new(move |c| !x(c))
        }
        Expr::Neg(x) => {
            let x = compile(x);
            Box::new(move |c| x(c).wrapping_neg())
        }
        Expr::Cond(k, t, f) => {
            let (k, t, f) = (compile(k), compile(t), compile(f));
            Box::new(move |c| if k(c) != 0 { t(c) } else { f(c) })
        }
        // Header stacks, unions, validity through references and the
        // width casts: rare in per-packet code, so the tree evaluates them.
        other => {
            let tree = other.clone();
            Box::new(move |c| tree.eval(c))
        }
    }
}

fn binary(op: BinOp, l: &Expr, r: &Expr) -> Box<EvalFn> {
    match op {
        BinOp::LAnd => {
            let (a, b) = (compile(l), compile(r));
            return Box::new(move |c| (a(c) != 0 && b(c) != 0) as Val);
        }
        BinOp::LOr => {
            let (a, b) = (compile(l), compile(r));
            return Box::new(move |c| (a(c) != 0 || b(c) != 0) as Val);
        }
        _ => {}
    }
    use Operand::{Any, Const, Field};
    match (operand(l), operand(r)) {
        (Const(a), Const(b)) => {
            let v = apply_bin(op, a, b);
            Box::new(move |_| v)
        }
        (Field(a), Const(k)) => with_op(op, move |c| c.phv.vals[a] as Val, move |_| k),
        (Field(a), Field(b)) => with_op(
            op,
            move |c| c.phv.vals[a] as Val,
            move |c| c.phv.vals[b] as Val,
        ),
        (Field(a), Any(y)) => with_op(op, move |c| c.phv.vals[a] as Val, move |c| y(c)),
        (Const(k), Field(b)) => with_op(op, move |_| k, move |c| c.phv.vals[b] as Val),
        (Const(k), Any(y)) => with_op(op, move |_| k, move |c| y(c)),
        (Any(x), Const(k)) => with_op(op, move |c| x(c), move |_| k),
        (Any(x), Field(b)) => with_op(op, move |c| x(c), move |c| c.phv.vals[b] as Val),
        (Any(x), Any(y)) => with_op(op, move |c| x(c), move |c| y(c)),
    }
}

/// One closure per operator, so the operator is decided here, once.
fn with_op<A, B>(op: BinOp, a: A, b: B) -> Box<EvalFn>
where
    A: Fn(&EvalCtx) -> Val + Send + Sync + 'static,
    B: Fn(&EvalCtx) -> Val + Send + Sync + 'static,
{
    macro_rules! each {
        ($($o:ident),*) => {
            match op {
                $(BinOp::$o => Box::new(move |c| apply_bin(BinOp::$o, a(c), b(c))),)*
                // Short-circuiting operators never reach here (see `binary`).
                BinOp::LAnd | BinOp::LOr => Box::new(move |c| apply_bin(op, a(c), b(c))),
            }
        };
    }
    each!(Add, Sub, Mul, Div, Mod, Shl, Shr, And, Or, Xor, Eq, Ne, Lt, Gt, Le, Ge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phv::Phv;
    use crate::rng::Rng;

    const BASIC: &str = include_str!("../tests/fixtures/basic.json");

    /// A random tree over fields 0..nfields, constants (small, wide and
    /// negative) and every operator, `depth` levels deep.
    fn random_expr(rng: &mut Rng, nfields: u32, depth: u32) -> Expr {
        let pick = rng.next_u64() % if depth == 0 { 3 } else { 9 };
        let sub = |rng: &mut Rng| Box::new(random_expr(rng, nfields, depth - 1));
        match pick {
            0 => Expr::Const(match rng.next_u64() % 4 {
                0 => (rng.next_u64() % 130) as Val,
                1 => -((rng.next_u64() % 5) as Val),
                2 => rng.next_u64() as Val,
                _ => ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) as Val,
            }),
            1 => Expr::Field((rng.next_u64() % nfields as u64) as u32),
            2 => Expr::SField((rng.next_u64() % nfields as u64) as u32, 8),
            3 if depth == 1 => Expr::Valid(HdrRef::Static((rng.next_u64() % 3) as u32)),
            3 => Expr::Not(sub(rng)),
            4 => Expr::BitNot(sub(rng)),
            5 => Expr::Neg(sub(rng)),
            6 => Expr::D2B(sub(rng)),
            7 => Expr::Cond(sub(rng), sub(rng), sub(rng)),
            _ => {
                const OPS: [BinOp; 18] = [
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::Div,
                    BinOp::Mod,
                    BinOp::Shl,
                    BinOp::Shr,
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                    BinOp::Eq,
                    BinOp::Ne,
                    BinOp::Lt,
                    BinOp::Gt,
                    BinOp::Le,
                    BinOp::Ge,
                    BinOp::LAnd,
                    BinOp::LOr,
                ];
                let op = OPS[(rng.next_u64() % OPS.len() as u64) as usize];
                Expr::Bin(op, sub(rng), sub(rng))
            }
        }
    }

    #[test]
    fn compiled_matches_the_tree_on_random_expressions() {
        let prog = crate::load::load(BASIC).expect("basic.json loads");
        let n = prog.fields.len() as u32;
        let mut rng = Rng::new(7);
        let mut phv = Phv::new(n as usize, &prog.valid_init, prog.stacks.len(), 0);
        for case in 0..20_000 {
            for v in phv.vals.iter_mut() {
                *v = match rng.next_u64() % 3 {
                    0 => 0,
                    1 => rng.next_u64() as u128 & 0xFFFF,
                    _ => (rng.next_u64() as u128) << 64 | rng.next_u64() as u128,
                };
            }
            let e = random_expr(&mut rng, n, (case % 4) + 1);
            let c = CExpr::new(e.clone());
            let ctx = EvalCtx {
                prog: &prog,
                phv: &phv,
                data: &[],
            };
            assert_eq!(c.eval(&ctx), e.eval(&ctx), "{e:?}");
        }
    }
}
